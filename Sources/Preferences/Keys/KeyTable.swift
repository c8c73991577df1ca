/// A table from storage keys to values, looked up with the hash each key computed once when it was
/// made (``StorageKey/precomputedHash``), so that a lookup hashes nothing.
///
/// A `Dictionary` runs the process's seeded hasher over that hash on every lookup: about 175 of
/// the 490 instructions of a read of an Int. Open addressing with linear probing; at most three
/// quarters full. Entries are never removed one by one, as the store's slots and the entries'
/// numbers never are.
struct KeyTable<Value> {
    private var keys: [StorageKey?]
    private var values: [Value?]
    private(set) var count = 0

    init(minimumCapacity: Int = 0) {
        var capacity = 8
        while capacity * 3 < minimumCapacity * 4 {
            capacity *= 2
        }
        keys = Array(repeating: nil, count: capacity)
        values = Array(repeating: nil, count: capacity)
    }

    /// The value of `key`, or `nil` if it has none.
    ///
    /// Setting `nil` is a programmer's mistake: entries are not removed.
    subscript(key: StorageKey) -> Value? {
        @inline(__always) get {
            var index = key.precomputedHash & (keys.count - 1)
            while let candidate = keys[index] {
                if candidate == key {
                    return values[index]
                }
                index = (index + 1) & (keys.count - 1)
            }
            return nil
        }
        set {
            guard let newValue else { preconditionFailure("a KeyTable entry cannot be removed") }
            insert(newValue, for: key)
        }
    }

    private mutating func insert(_ value: Value, for key: StorageKey) {
        var index = key.precomputedHash & (keys.count - 1)
        while let candidate = keys[index] {
            if candidate == key {
                values[index] = value
                return
            }
            index = (index + 1) & (keys.count - 1)
        }
        keys[index] = key
        values[index] = value
        count += 1
        if count * 4 > keys.count * 3 {
            grow()
        }
    }

    private mutating func grow() {
        var larger = KeyTable(minimumCapacity: keys.count * 2)
        for (key, value) in self {
            larger.insert(value, for: key)
        }
        self = larger
    }
}

extension KeyTable: Sequence {
    /// The entries, in no particular order.
    func makeIterator() -> some IteratorProtocol<(key: StorageKey, value: Value)> {
        zip(keys, values).lazy.compactMap { key, value in key.map { ($0, value!) } }.makeIterator()
    }
}

extension KeyTable: Sendable where Value: Sendable {}
