/// The reads and writes of one ``PreferencesStore/transaction(durability:writeIdentifier:_:)``, committed together when its body returns.
///
/// Reads see the transaction's own writes first, then the store. It cannot be copied or kept: it
/// exists only for the body it is passed to.
public struct PreferencesTransaction: ~Copyable {
    private let store: PreferencesStore
    private var changes: [ResolvedKey: PendingChange] = [:]
    /// Keys in the order they were first written, so that commits are deterministic.
    private var order: [ResolvedKey] = []
    /// The first error of a subscript write, which cannot throw; it fails the whole transaction.
    private var deferredError: PreferencesError?
    /// A migration reads and writes a name with types other than the app's, which is no conflict.
    private let isMigration: Bool

    init(store: PreferencesStore, isMigration: Bool = false) {
        self.store = store
        self.isMigration = isMigration
    }

    /// The value for a key as this transaction sees it, or the key's default; setting it writes the
    /// value when the transaction commits.
    ///
    /// The transaction sees its own writes first, then the store's value as the store's subscript
    /// reads it, override layers included.
    ///
    /// A value that cannot be read gives the default and is reported, as with the store's
    /// subscript. A value that cannot be encoded makes the whole transaction throw and write nothing.
    ///
    /// - Parameter key: The key to read or write.
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        get {
            do {
                return try lookUp(key) ?? store.defaultValue(for: key)
            } catch {
                store.errorChannel.report(error)
                return store.defaultValue(for: key)
            }
        }
        set {
            do {
                try setValue(newValue, for: key)
            } catch {
                deferredError = deferredError ?? (error as? PreferencesError)
            }
        }
    }

    /// The value for a key as this transaction sees it, or `nil` if there is none.
    ///
    /// - Parameter key: The key to read.
    /// - Returns: The value this transaction wrote, or else the stored value; `nil` if neither exists.
    /// - Throws: A ``PreferencesError`` if the stored value cannot be read as the key's type.
    public func value<Value>(for key: PreferenceKey<Value>) throws -> Value? {
        try lookUp(key)
    }

    /// The value for an optional key as this transaction sees it, or `nil` if there is none.
    ///
    /// - Parameter key: The key to read.
    /// - Returns: The value this transaction wrote, or else the stored value; `nil` if neither exists.
    /// - Throws: A ``PreferencesError`` if the stored value cannot be read as the key's type.
    public func value<Wrapped>(for key: PreferenceKey<Wrapped?>) throws -> Wrapped? {
        try lookUp(key) ?? nil
    }

    /// Whether a value is stored for a key as this transaction sees it, whatever its type.
    ///
    /// - Parameter key: The key to look for.
    /// - Returns: `true` if this transaction wrote a value for the key, or did not remove one stored.
    public func contains<Value>(_ key: PreferenceKey<Value>) -> Bool {
        storedValue(at: store.resolvedKey(for: key)) != nil
    }

    /// Writes a value for a key when the transaction commits; for an optional key, `nil` removes the entry.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/invalidValue`` if the value
    ///   breaks one of the key's rules, or ``PreferencesError/Code/encodingFailed`` if it cannot be encoded.
    public mutating func setValue<Value>(_ value: Value, for key: PreferenceKey<Value>) throws {
        var change = try store.change(setting: value, for: key)
        if isMigration {
            change.valueType = nil
        }
        record(change)
    }

    /// Removes the entry for a key when the transaction commits.
    ///
    /// - Parameter key: The key whose entry to remove.
    public mutating func removeValue<Value>(for key: PreferenceKey<Value>) {
        record(PendingChange(key: store.resolvedKey(for: key), value: nil, valueType: isMigration ? nil : Value.self))
    }

    /// The value stored at a key as this transaction sees it, in its stored form.
    func storedValue(at key: ResolvedKey) -> StoredValue? {
        if let pending = changes[key] {
            return pending.value
        }
        return store.storedValue(at: key)
    }

    /// Writes a value in its stored form, as it is: a rename moves bytes it need not decode.
    mutating func setStoredValue(_ value: StoredValue?, at key: ResolvedKey) {
        record(PendingChange(key: key, value: value, valueType: nil))
    }

    func resolvedKey<Value>(for key: PreferenceKey<Value>) -> ResolvedKey {
        store.resolvedKey(for: key)
    }

    func storedKey(for key: ResolvedKey) -> StoredKey {
        store.storedKey(for: key)
    }

    func resolvedKey(for key: StoredKey) -> ResolvedKey {
        store.resolvedKey(for: key)
    }

    /// Reports a problem that does not stop the transaction, through the store's error channel.
    func report(_ problem: PreferencesError) {
        store.errorChannel.report(problem)
    }

    /// Whether the ledger, as this transaction sees it, records the migration.
    func recordsMigration(_ id: String) -> Bool {
        storedValue(at: AppliedMigration.ledgerKey(for: id)) != nil
    }

    /// Adds a ledger entry, committed with the migration's own changes.
    mutating func record(_ migration: AppliedMigration) {
        setStoredValue(migration.storedValue, at: AppliedMigration.ledgerKey(for: migration.id))
    }

    /// The batch to commit, or the error that fails the transaction.
    consuming func finish() throws(PreferencesError) -> [PendingChange] {
        if let deferredError {
            throw deferredError
        }
        return order.compactMap { changes[$0] }
    }

    private func lookUp<Value>(_ key: PreferenceKey<Value>) throws(PreferencesError) -> Value? {
        if let pending = changes[store.resolvedKey(for: key)] {
            return try decode(pending, for: key)
        }
        // A migration moves what is stored; an override is not the app's data.
        return try store.storedValue(for: key, registeringType: !isMigration, readsOverrides: !isMigration)
    }

    private mutating func record(_ change: PendingChange) {
        if changes.updateValue(change, forKey: change.key) == nil {
            order.append(change.key)
        }
    }

    private func decode<Value>(_ change: PendingChange, for key: PreferenceKey<Value>) throws(PreferencesError)
        -> Value?
    {
        guard let stored = change.value else { return nil }
        do throws(DecodeFailure) {
            return try key.codec.decode(stored)
        } catch {
            // Only a key of another type, writing the same entry earlier in this transaction, gets here.
            throw .typeMismatch(key: store.storedKey(for: change.key), stored: stored, expected: Value.self)
        }
    }
}

@available(*, unavailable)
extension PreferencesTransaction: Sendable {}
