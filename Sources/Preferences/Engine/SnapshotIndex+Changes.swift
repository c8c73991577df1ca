extension SnapshotIndex {
    /// The changes that turn this snapshot's entries into `newer`'s, or `nil` when bytes cannot
    /// tell keys apart (a key of either is not ASCII), or either's table does not place every
    /// record once and in order (``tablePlacesEveryRecord()``), which only another writer leaves.
    ///
    /// Both are walked in key order, and an entry is decoded only where its bytes differ: after
    /// another process compacts, most entries are the same bytes in the old snapshot and the new.
    func changes(to newer: SnapshotIndex) -> [EntryChange]? {
        guard keysAreASCII, newer.keysAreASCII, tablePlacesEveryRecord(), newer.tablePlacesEveryRecord() else {
            return nil
        }
        var changes: [EntryChange] = []
        let (oldBytes, newBytes) = (file.buffer, newer.file.buffer)
        var old = 0
        var new = 0
        while old < count || new < newer.count {
            // Every position holds a record: the tables were checked above.
            let before = old < count ? record(at: old) : nil
            let after = new < newer.count ? newer.record(at: new) : nil
            let order: Int
            if let before, let after {
                order = compareKeys(before.key(in: oldBytes), after.key(in: newBytes))
            } else {
                order = before == nil ? 1 : -1
            }
            // A value that does not decode reads as none: its coming or going is no change.
            if order < 0, let before {
                if decodeValue(of: before) != nil {
                    changes.append(EntryChange(key: key(of: before), value: nil))
                }
                old += 1
            } else if order > 0, let after {
                if let value = newer.decodeValue(of: after) {
                    changes.append(EntryChange(key: newer.key(of: after), value: value))
                }
                new += 1
            } else if let before, let after {
                // Equal bytes are equal values; unequal ones may still be (strings that are
                // canonically equivalent), so those are decoded and compared.
                if compareBytes(part(oldBytes, before.value), part(newBytes, after.value)) != 0 {
                    let value = newer.decodeValue(of: after)
                    if decodeValue(of: before) != value {
                        changes.append(EntryChange(key: newer.key(of: after), value: value))
                    }
                }
                old += 1
                new += 1
            } else {
                return nil
            }
        }
        return changes
    }
}
