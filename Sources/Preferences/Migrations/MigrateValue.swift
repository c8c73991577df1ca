/// A migration that reads a value with one type, transforms it, and stores it with another: under
/// the same name or a new one.
///
/// ```swift
/// try store.runMigrations(
///     MigrateValue(from: PreferenceKey<Int>("rating", default: 0), to: PreferenceKey<Double>("rating", default: 0)) {
///         Double($0)
///     }
/// )
/// ```
///
/// The old value is read before anything changes, so a transform that throws leaves everything as
/// it was. When the names differ, the old entry is removed. Because the ledger records the
/// migration once applied, a later 4.7 is never converted again.
public struct MigrateValue<Old: Sendable, New: Sendable>: PreferencesMigration {
    /// The key and type the value is stored with now.
    public let oldKey: PreferenceKey<Old>

    /// The key and type to store it with.
    public let newKey: PreferenceKey<New>

    /// Turns the old value into the new one; it may throw to fail the migration.
    public let transform: @Sendable (Old) throws -> New

    /// The migration's identity; by default `convert <old> in <namespace> from <Old> to <new> in
    /// <namespace> as <New>`.
    ///
    /// Editing the transform does not make it a new migration; changing a key or a type does.
    public let id: String

    /// Creates a type change.
    ///
    /// - Parameters:
    ///   - oldKey: The key and type the value is stored with now. Its default is not used.
    ///   - newKey: The key and type to store it with; it may have the same name as `oldKey`.
    ///   - id: The migration's identity; derived from the keys and types when `nil`.
    ///   - transform: Turns the old value into the new one.
    public init(
        from oldKey: PreferenceKey<Old>,
        to newKey: PreferenceKey<New>,
        id: String? = nil,
        transform: @escaping @Sendable (Old) throws -> New
    ) {
        self.oldKey = oldKey
        self.newKey = newKey
        self.transform = transform
        self.id =
            id
            ?? "convert \(oldKey.name) in \(oldKey.namespace) from \(typeName(Old.self)) "
            + "to \(newKey.name) in \(newKey.namespace) as \(typeName(New.self))"
    }

    /// Reads, transforms and writes the value, as described in the type's documentation.
    ///
    /// - Parameter preferences: The migration's transaction.
    /// - Returns: ``MigrationResult/applied``, or ``MigrationResult/nothingToMigrate`` when nothing is
    ///   stored under the old key, or the value there already reads as the new type.
    /// - Throws: A ``PreferencesError`` when the old value reads as neither type, or the new one cannot
    ///   be encoded, or the error of the transform.
    public func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
        let oldPlace = preferences.resolvedKey(for: oldKey)
        let samePlace = oldPlace == preferences.resolvedKey(for: newKey)
        guard preferences.storedValue(at: oldPlace) != nil else { return .nothingToMigrate }
        let oldValue: Old
        do {
            guard let value = try preferences.value(for: oldKey) else { return .nothingToMigrate }
            oldValue = value
        } catch {
            if samePlace, (try? preferences.value(for: newKey)) != nil {
                return MigrationResult("nothing to migrate: the value is already a \(typeName(New.self))")
            }
            throw error
        }
        let newValue: New
        do {
            newValue = try transform(oldValue)
        } catch {
            throw PreferencesError(
                .migrationFailed(
                    migration: id,
                    key: preferences.storedKey(for: oldPlace),
                    reason: "its transform threw \(error)"
                )
            )
        }
        try preferences.setValue(newValue, for: newKey)
        if !samePlace {
            preferences.removeValue(for: oldKey)
        }
        return .applied
    }
}
