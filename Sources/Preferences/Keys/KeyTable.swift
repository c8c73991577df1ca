/// A table from resolved keys to values, looked up with the hash each key computed once when it was
/// made (``ResolvedKey/precomputedHash``), so that a lookup hashes nothing.
///
/// A `Dictionary` would run the process's seeded hasher over that hash on every lookup, a large
/// part of a read. Keys and values sit in arrays in the order they came,
/// and an open-addressing index (linear probing, at most three quarters full) holds their
/// positions, each beside the low half of its key's hash, in eight bytes: with 10,000 keys the
/// index is 128 KiB, and most lookups read one line of it and one of the keys. Entries are never
/// removed one by one, as the store's slots and the entries' numbers never are. At most 2³¹ - 1
/// entries: positions are 32 bits.
struct KeyTable<Value> {
    private var keys: [ResolvedKey] = []
    private var values: [Value] = []
    private var index: [IndexEntry]

    /// Where a key is in `keys` and `values`: `position` is -1 where there is none.
    private struct IndexEntry {
        var hash: UInt32 = 0
        var position: Int32 = -1
    }

    init(minimumCapacity: Int = 0) {
        var capacity = 16
        while capacity * 3 < minimumCapacity * 4 {
            capacity *= 2
        }
        index = Array(repeating: IndexEntry(), count: capacity)
        keys.reserveCapacity(minimumCapacity)
        values.reserveCapacity(minimumCapacity)
    }

    var count: Int { keys.count }

    /// Where `key` is in `keys` and `values`, or `nil`.
    @inline(__always)
    private func position(of key: ResolvedKey) -> Int? {
        let mask = index.count - 1
        let hash = UInt32(truncatingIfNeeded: key.precomputedHash)
        var probe = key.precomputedHash & mask
        while true {
            let entry = index[probe]
            if entry.position < 0 {
                return nil
            }
            if entry.hash == hash && keys[Int(entry.position)] == key {
                return Int(entry.position)
            }
            probe = (probe + 1) & mask
        }
    }

    /// The value of `key`, or `nil` if it has none.
    ///
    /// Setting `nil` is a programmer's mistake: entries are not removed.
    subscript(key: ResolvedKey) -> Value? {
        @inline(__always) get {
            position(of: key).map { values[$0] }
        }
        set {
            guard let newValue else { preconditionFailure("a KeyTable entry cannot be removed") }
            if let position = position(of: key) {
                values[position] = newValue
            } else {
                append(newValue, for: key)
            }
        }
    }

    private mutating func append(_ value: Value, for key: ResolvedKey) {
        keys.append(key)
        values.append(value)
        if keys.count * 4 > index.count * 3 {
            index = Array(repeating: IndexEntry(), count: index.count * 2)
            for position in keys.indices {
                place(position)
            }
        } else {
            place(keys.count - 1)
        }
    }

    /// Puts the position of `keys[position]` in the index.
    private mutating func place(_ position: Int) {
        let mask = index.count - 1
        let key = keys[position]
        var probe = key.precomputedHash & mask
        while index[probe].position >= 0 {
            probe = (probe + 1) & mask
        }
        index[probe] = IndexEntry(hash: UInt32(truncatingIfNeeded: key.precomputedHash), position: Int32(position))
    }
}

extension KeyTable: Sequence {
    /// The entries, in the order their keys came.
    func makeIterator() -> some IteratorProtocol<(key: ResolvedKey, value: Value)> {
        zip(keys, values).lazy.map { (key: $0, value: $1) }.makeIterator()
    }
}

extension KeyTable: Sendable where Value: Sendable {}
