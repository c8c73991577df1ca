/// A migration that moves a stored value from one key to another, across namespaces if need be.
///
/// ```swift
/// try store.runMigrations(
///     MigrateName(from: PreferenceKey<Date>("dateOfBrith", default: .distantPast), to: .dateOfBirth),
///     // an entry @AppStorage wrote, moved into the app's own namespace:
///     MigrateName(from: PreferenceKey<Bool>("showsBadge", default: true, in: .global), to: .showsBadge)
/// )
/// ```
///
/// The old value is checked to read as `Value`, then moved as it is stored, without decoding and
/// encoding it again. When both keys hold a value, ``RenameConflictPolicy`` decides; the old key is
/// removed either way, unless the policy is to fail.
public struct MigrateName<Value: Sendable>: PreferencesMigration {
    /// The key the value is stored under now.
    public let oldKey: PreferenceKey<Value>

    /// The key to move the value to.
    public let newKey: PreferenceKey<Value>

    /// What to do when the new key already holds a value.
    public let policy: RenameConflictPolicy

    /// The migration's identity; by default `rename <old> in <namespace> to <new> in <namespace>`.
    ///
    /// Changing either key, or the policy, does not make it a new migration unless you give it an
    /// explicit identity.
    public let id: String

    /// Creates a rename.
    ///
    /// - Parameters:
    ///   - oldKey: The key the value is stored under now. Its default is not used.
    ///   - newKey: The key to move the value to.
    ///   - policy: What to do when the new key already holds a value; ``RenameConflictPolicy/keepNewValue``
    ///     unless you say otherwise.
    ///   - id: The migration's identity; derived from the keys when `nil`.
    public init(
        from oldKey: PreferenceKey<Value>,
        to newKey: PreferenceKey<Value>,
        ifBothExist policy: RenameConflictPolicy = .keepNewValue,
        id: String? = nil
    ) {
        self.oldKey = oldKey
        self.newKey = newKey
        self.policy = policy
        self.id = id ?? "rename \(oldKey.name) in \(oldKey.namespace) to \(newKey.name) in \(newKey.namespace)"
    }

    /// Moves the value, as described in the type's documentation.
    ///
    /// - Parameter preferences: The migration's transaction.
    /// - Returns: ``MigrationResult/applied``, ``MigrationResult/nothingToMigrate`` when the old key
    ///   holds nothing, or a conflict resolution.
    /// - Throws: A ``PreferencesError`` when the old value does not read as `Value`, or when both keys
    ///   hold values and the policy is ``RenameConflictPolicy/fail``.
    public func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
        let oldPlace = preferences.resolvedKey(for: oldKey)
        let newPlace = preferences.resolvedKey(for: newKey)
        guard oldPlace != newPlace, let stored = preferences.storedValue(at: oldPlace) else {
            return .nothingToMigrate
        }
        _ = try preferences.value(for: oldKey)  // only a value that reads as `Value` moves
        guard preferences.storedValue(at: newPlace) != nil else {
            preferences.setStoredValue(stored, at: newPlace)
            preferences.setStoredValue(nil, at: oldPlace)
            preferences.moveSyncVersion(from: oldPlace, to: newPlace)
            return .applied
        }
        switch policy {
        case .keepNewValue:
            preferences.setStoredValue(nil, at: oldPlace)
            return .conflictResolved("kept the value at the new key and removed the old one")
        case .useOldValue:
            preferences.setStoredValue(stored, at: newPlace)
            preferences.setStoredValue(nil, at: oldPlace)
            preferences.moveSyncVersion(from: oldPlace, to: newPlace)
            return .conflictResolved("replaced the value at the new key with the old one")
        case .fail:
            throw PreferencesError(
                .migrationFailed(
                    migration: id,
                    key: preferences.storedKey(for: newPlace),
                    reason: "both '\(oldKey)' and '\(newKey)' hold a value, and the policy is to fail"
                )
            )
        }
    }
}

/// What a rename does when both the old and the new key hold a value.
public enum RenameConflictPolicy: Sendable, Hashable {
    /// Keep the new key's value and remove the old one: the new key was written by a newer version
    /// of the app, so its value is the more recent. The default.
    case keepNewValue

    /// Move the old value over the new one.
    case useOldValue

    /// Change nothing, and fail the migration.
    case fail
}
