/// The reads and writes of one ``PreferencesStore/transaction(durability:_:)``, committed together when its body returns.
///
/// Reads see the transaction's own writes first, then the store. It cannot be copied or kept: it
/// exists only for the body it is passed to.
public struct PreferencesTransaction: ~Copyable {
    private let store: PreferencesStore
    private var changes: [StorageKey: PendingChange] = [:]
    /// Keys in the order they were first written, so that commits are deterministic.
    private var order: [StorageKey] = []
    /// The first error of a subscript write, which cannot throw; it fails the whole transaction.
    private var deferredError: PreferencesError?

    init(store: PreferencesStore) {
        self.store = store
    }

    /// The value for a key as this transaction sees it, or the key's default; setting it writes the
    /// value when the transaction commits.
    ///
    /// A value that cannot be read gives the default and is reported, as with the store's
    /// subscript. A value that cannot be encoded makes the whole transaction throw and write nothing.
    ///
    /// - Parameter key: The key to read or write.
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        get {
            if let pending = changes[store.storageKey(for: key)] {
                return (try? decode(pending, for: key)) ?? key.defaultValue
            }
            return store[key]
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

    /// Writes a value for a key when the transaction commits; for an optional key, `nil` removes the entry.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/encodingFailed`` if the value cannot be encoded.
    public mutating func setValue<Value>(_ value: Value, for key: PreferenceKey<Value>) throws {
        record(try store.change(setting: value, for: key))
    }

    /// Removes the entry for a key when the transaction commits.
    ///
    /// - Parameter key: The key whose entry to remove.
    public mutating func removeValue<Value>(for key: PreferenceKey<Value>) {
        record(PendingChange(key: store.storageKey(for: key), value: nil, valueType: Value.self))
    }

    /// The batch to commit, or the error that fails the transaction.
    consuming func finish() throws(PreferencesError) -> [PendingChange] {
        if let deferredError {
            throw deferredError
        }
        return order.compactMap { changes[$0] }
    }

    private func lookUp<Value>(_ key: PreferenceKey<Value>) throws(PreferencesError) -> Value? {
        if let pending = changes[store.storageKey(for: key)] {
            return try decode(pending, for: key)
        }
        return try store.storedValue(for: key)
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
