public import Foundation

/// An entry of a store's migration ledger: a migration that was applied, when, and what it did.
///
/// Read the ledger with ``PreferencesStore/appliedMigrations``.
public struct AppliedMigration: Sendable, Hashable {
    /// The migration's identity.
    public let id: String

    /// When the migration was applied.
    public let appliedAt: Date

    /// What the migration did.
    public let result: MigrationResult

    /// Creates a ledger entry.
    ///
    /// - Parameters:
    ///   - id: The migration's identity.
    ///   - appliedAt: When it was applied.
    ///   - result: What it did.
    public init(id: String, appliedAt: Date, result: MigrationResult) {
        self.id = id
        self.appliedAt = appliedAt
        self.result = result
    }
}

extension AppliedMigration {
    /// The namespace the ledger is stored in: reserved, so that no key can be declared in it, and
    /// neither listing nor removing a namespace touches it.
    static let ledgerNamespace = "_preferences.migrations"

    static func ledgerKey(for id: String) -> ResolvedKey {
        ResolvedKey(namespace: ledgerNamespace, name: id)
    }

    /// The entry as stored: a dictionary, which any backend holds natively.
    var storedValue: StoredValue {
        .dictionary([
            "appliedAt": .date(appliedAt.timeIntervalSinceReferenceDate), "result": .string(result.description),
        ])
    }

    init?(id: String, stored: StoredValue) {
        guard case .dictionary(let fields) = stored, case .date(let seconds)? = fields["appliedAt"],
            case .string(let result)? = fields["result"]
        else { return nil }
        self.init(id: id, appliedAt: Date(timeIntervalSinceReferenceDate: seconds), result: MigrationResult(result))
    }
}

extension ResolvedKey {
    /// Whether the key lives in a namespace reserved for the library, such as the migration ledger.
    var isReserved: Bool {
        namespace.hasPrefix("_")
    }
}
