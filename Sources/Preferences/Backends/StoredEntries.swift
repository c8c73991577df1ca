/// Every stored entry: a snapshot's, decoded as they are looked up, under the changes made since.
///
/// A store opens with the entries of its file's snapshot still encoded (see ``SnapshotIndex``);
/// reads decode the ones they need, and only a compaction, a reload after another process's
/// compaction, or a listing of every key decodes them all.
///
/// The entries set since the snapshot are numbered by key, in the order their keys first came, and
/// a key keeps its number across compactions until most numbered keys were removed: values live in
/// an array by number, so that a compaction walks them in the order it last sorted them without
/// hashing every key again (see ``forEachInKeyOrder(_:)``).
struct StoredEntries: Sendable {
    private var snapshot: SnapshotIndex?
    /// The key of each number.
    private var keys: [ResolvedKey] = []
    /// The value set since the snapshot (every entry's, when there is none) by number; `nil` where
    /// the key has none set since, or its entry was removed.
    private var values: [StoredValue?] = []
    /// The number of each key in `keys`.
    private var numbers = KeyTable<Int>()
    /// The snapshot's entries removed since.
    private var removed: Set<ResolvedKey> = []
    /// The numbers of the entries in increasing order of key, as of the last snapshot made of them.
    private var keyOrder: [Int] = []
    /// Whether `keyOrder` holds the keys that hold values now: no key came or went since.
    private var keyOrderIsCurrent = false

    init(_ entries: [ResolvedKey: StoredValue] = [:]) {
        snapshot = nil
        keys.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        numbers = KeyTable(minimumCapacity: entries.count)
        for (key, value) in entries {
            numberNewKey(key, holding: value)
        }
    }

    init(snapshot: SnapshotIndex) {
        self.snapshot = snapshot
    }

    subscript(key: ResolvedKey) -> StoredValue? {
        get {
            if let number = number(of: key), let value = values[number] {
                return value
            }
            guard let snapshot, !removed.contains(key) else { return nil }
            return snapshot.value(for: key)
        }
        set { set(newValue, for: key) }
    }

    /// Sets or, with `nil`, removes one entry.
    ///
    /// A method as well as the subscript's setter: a commit calling it passes the value it holds,
    /// where the setter takes a copy.
    mutating func set(_ value: borrowing StoredValue?, for key: ResolvedKey) {
        switch value {
        case .some(let value):
            values[numberGivingOne(to: key)] = value
            if !removed.isEmpty {
                removed.remove(key)
            }
        case .none:
            if let number = number(of: key), values[number] != nil {
                values[number] = nil
                keyOrderIsCurrent = false
            }
            if snapshot != nil {
                removed.insert(key)
            }
        }
    }

    /// The key's number, if it has one.
    @inline(__always)
    private func number(of key: ResolvedKey) -> Int? {
        numbers[key]
    }

    /// Gives a key with no number the next one, holding `value`.
    @discardableResult
    private mutating func numberNewKey(_ key: ResolvedKey, holding value: StoredValue?) -> Int {
        let number = keys.count
        numbers[key] = number
        keys.append(key)
        values.append(value)
        return number
    }

    /// The key's number, given it if it has none.
    @inline(__always)
    private mutating func numberGivingOne(to key: ResolvedKey) -> Int {
        if let number = numbers[key] {
            if values[number] == nil {
                // Back after a removal.
                keyOrderIsCurrent = false
            }
            return number
        }
        keyOrderIsCurrent = false
        return numberNewKey(key, holding: nil)
    }

    /// The keys and values set since the snapshot.
    private var setEntries: some Sequence<(key: ResolvedKey, value: StoredValue)> {
        zip(keys, values).lazy.compactMap { key, value in value.map { (key, $0) } }
    }

    /// The changes that turn these entries into `newer`.
    ///
    /// Between two snapshots, only the entries whose bytes differ are decoded (see
    /// ``SnapshotIndex/changes(to:)``); the keys changed since either snapshot are compared whole.
    func changes(to newer: StoredEntries) -> [EntryChange] {
        guard let snapshot, let newerSnapshot = newer.snapshot, var changes = snapshot.changes(to: newerSnapshot) else {
            return EntryChange.differences(from: all, to: newer.all)
        }
        var changedSince = removed.union(newer.removed)
        for (key, _) in setEntries {
            changedSince.insert(key)
        }
        for (key, _) in newer.setEntries {
            changedSince.insert(key)
        }
        if !changedSince.isEmpty {
            changes.removeAll { changedSince.contains($0.key) }
            for key in changedSince where self[key] != newer[key] {
                changes.append(EntryChange(key: key, value: newer[key]))
            }
        }
        return changes
    }

    /// Every entry, decoded.
    ///
    /// A value of the snapshot that does not decode is left out (see ``takeInSnapshot()``).
    var all: [ResolvedKey: StoredValue] {
        var entries = snapshot?.decodeAll().entries ?? [:]
        for key in removed {
            entries.removeValue(forKey: key)
        }
        for (key, value) in setEntries {
            entries[key] = value
        }
        return entries
    }

    /// At least how many entries there are: how many keys were ever numbered.
    var countUpperBound: Int {
        keys.count + (snapshot?.count ?? 0)
    }

    /// Calls `body` with every entry in increasing order of key, as a snapshot holds them; the
    /// snapshot's entries taken in first (see ``takeInSnapshot()``).
    ///
    /// The order, of numbers, is kept for the next call, which reuses it when the same keys hold
    /// values, as they do whenever values changed but no key came or went: sorting is a large part
    /// of a compaction, and checking the last order key by key would hash every key.
    mutating func forEachInKeyOrder(_ body: (ResolvedKey, StoredValue) -> Void) {
        // A compaction takes the snapshot in first, to report values that do not decode; any
        // other caller leaves them out as every listing of the entries does.
        takeInSnapshot()
        if !keyOrderIsCurrent {
            dropRemovedKeysIfMostAre()
            keyOrder = values.indices.filter { values[$0] != nil }.sorted { keys[$0] < keys[$1] }
            keyOrderIsCurrent = true
        }
        for number in keyOrder {
            if let value = values[number] {
                body(keys[number], value)
            }
        }
    }

    /// Numbers the keys that hold values anew, and forgets the rest, when the removed are most.
    ///
    /// A store that keeps making and removing keys of new names would otherwise hold every name it
    /// ever removed.
    private mutating func dropRemovedKeysIfMostAre() {
        var live = 0
        for number in values.indices where values[number] != nil {
            live += 1
        }
        guard live < keys.count / 2 else { return }
        let (oldKeys, oldValues) = (keys, values)
        keys = []
        values = []
        numbers = KeyTable(minimumCapacity: live)
        keys.reserveCapacity(live)
        values.reserveCapacity(live)
        for (key, value) in zip(oldKeys, oldValues) where value != nil {
            numberNewKey(key, holding: value)
        }
    }

    /// Takes the snapshot's entries in, decoded, so that these entries need it no more.
    ///
    /// Each key keeps its number: a compaction calls this, and the order it sorted stays good for
    /// the next one.
    ///
    /// - Returns: The values of the snapshot that did not decode, which are left out; `nil` when
    ///   every value decoded. A compaction reports them, and keeps a copy of the snapshot, before
    ///   it writes one without them.
    @discardableResult
    mutating func takeInSnapshot() -> UnreadableValues? {
        guard let snapshot else { return nil }
        var (decoded, unreadable, tableIsWrong) = snapshot.decodeAll()
        for key in removed {
            decoded.removeValue(forKey: key)
        }
        for (key, value) in decoded {
            if let number = numbers[key] {
                // A value set since the snapshot is the newer one.
                if values[number] == nil {
                    values[number] = value
                }
            } else {
                numberNewKey(key, holding: value)
            }
        }
        keyOrderIsCurrent = false
        self.snapshot = nil
        removed = []
        guard !unreadable.isEmpty else { return nil }
        return UnreadableValues(file: snapshot.file, ranges: unreadable, tableIsWrong: tableIsWrong)
    }

    /// Values of a snapshot that did not decode: where they lie in its file, and the file.
    struct UnreadableValues {
        var file: FileBytes
        var ranges: [Range<Int>]
        /// Whether the snapshot's table does not place its records as they lie: its bytes are the
        /// first of `ranges`, and the entries are those of the records themselves.
        var tableIsWrong = false

        /// What a report of them says.
        func report(besides recovered: Int) -> DamageReport {
            let valuesDoNotDecode = "values in the snapshot verified but do not decode; a compaction leaves them out"
            guard tableIsWrong else {
                return DamageReport(
                    recoveredRecords: recovered, damagedRanges: ranges, reason: valuesDoNotDecode, copyPath: nil)
            }
            var reason = "the snapshot's table does not place its records as they lie; a compaction writes it again"
            if ranges.count > 1 {
                reason += ", and " + valuesDoNotDecode
            }
            return DamageReport(recoveredRecords: recovered, damagedRanges: ranges, reason: reason, copyPath: nil)
        }
    }
}

extension StoredEntries: Equatable {
    static func == (lhs: StoredEntries, rhs: StoredEntries) -> Bool {
        lhs.all == rhs.all
    }
}
