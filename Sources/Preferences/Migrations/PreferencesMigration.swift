/// A change to stored values that a store applies once and records in its ledger.
///
/// The library provides ``MigrateName`` for renames and ``MigrateValue`` for type changes. Write your
/// own by conforming to this protocol: the store runs ``migrate(_:)`` inside a transaction, and
/// commits what it changed together with the ledger entry that records it, or nothing at all.
///
/// ```swift
/// struct SplitFullName: PreferencesMigration {
///     let id = "split fullName into first and last"
///
///     func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
///         guard let full = try preferences.value(for: PreferenceKey<String?>("fullName")) else {
///             return .nothingToMigrate
///         }
///         let parts = full.split(separator: " ", maxSplits: 1).map(String.init)
///         preferences[.firstName] = parts.first ?? ""
///         preferences[.lastName] = parts.count > 1 ? parts[1] : ""
///         preferences.removeValue(for: PreferenceKey<String?>("fullName"))
///         return .applied
///     }
/// }
/// ```
public protocol PreferencesMigration: Sendable {
    /// The migration's stable identity: the store records it once applied, and never runs a
    /// migration with the same identity again.
    ///
    /// It follows the rules of a key's name: not empty, no control characters, no colon.
    var id: String { get }

    /// Makes the change, reading and writing through the migration's transaction.
    ///
    /// Reads in a migration may use a key's name with a type other than the one the app declares:
    /// that is what type changes do, and it is not reported as a conflict.
    ///
    /// - Parameter preferences: The transaction the migration runs in.
    /// - Returns: What the migration did, for the ledger.
    /// - Throws: Any error, to change nothing: the store throws a
    ///   ``PreferencesError/Code/migrationFailed`` error naming the migration, and runs no later
    ///   migration in that call.
    func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult
}

/// What a migration did, as recorded in the ledger.
public struct MigrationResult: Sendable, Hashable, CustomStringConvertible {
    /// What the migration did, in a few words.
    public let description: String

    /// Creates a result with your own words, for a migration of your own.
    ///
    /// - Parameter description: What the migration did.
    public init(_ description: String) {
        self.description = description
    }

    /// The migration changed stored values.
    public static let applied = MigrationResult("applied")

    /// There was nothing to change, such as no value under the old key.
    public static let nothingToMigrate = MigrationResult("nothing to migrate")

    /// Both the old and the new place held a value, and the migration resolved it as described.
    ///
    /// - Parameter resolution: How the conflict was resolved.
    /// - Returns: A result recording the resolution.
    public static func conflictResolved(_ resolution: String) -> MigrationResult {
        MigrationResult("conflict resolved: \(resolution)")
    }
}
