extension SnapshotIndex {
    /// The changes that turn this snapshot's entries into `newer`'s, or `nil` when bytes cannot
    /// tell keys apart (a key of either is not ASCII), or either's table does not place every
    /// record once and in order (``tablePlacesEveryRecord()``), which only another writer leaves.
    ///
    /// Both are walked in key order, and an entry is decoded only where its bytes differ: after
    /// another process compacts, most entries are the same bytes in the old snapshot and the new.
    func changes(to newer: SnapshotIndex) -> [EntryChange]? {
        guard keysAreASCII, newer.keysAreASCII else { return nil }
        var changes: [EntryChange] = []
        let (oldBytes, newBytes) = (file.buffer, newer.file.buffer)
        var old = Cursor(self)
        var new = Cursor(newer)
        while old.isWhole && new.isWhole {
            let order: Int
            switch (old.record, new.record) {
            case (nil, nil): return changes
            case (nil, _): order = 1
            case (_, nil): order = -1
            case (let before?, let after?): order = compareKeys(before.key(in: oldBytes), after.key(in: newBytes))
            }
            // A value that does not decode reads as none: its coming or going is no change.
            if order < 0, let before = old.record {
                if decodeValue(of: before) != nil {
                    changes.append(EntryChange(key: key(of: before), value: nil))
                }
                old.advance(in: self)
            } else if order > 0, let after = new.record {
                if let value = newer.decodeValue(of: after) {
                    changes.append(EntryChange(key: newer.key(of: after), value: value))
                }
                new.advance(in: newer)
            } else if let before = old.record, let after = new.record {
                // Equal bytes are equal values; unequal ones may still be (strings that are
                // canonically equivalent), so those are decoded and compared.
                if compareBytes(part(oldBytes, before.value), part(newBytes, after.value)) != 0 {
                    let value = newer.decodeValue(of: after)
                    if decodeValue(of: before) != value {
                        changes.append(EntryChange(key: newer.key(of: after), value: value))
                    }
                }
                old.advance(in: self)
                new.advance(in: newer)
            }
        }
        return nil
    }

    /// Whether the table places every record once and in order: the table a compaction writes.
    ///
    /// Every record it places is one set entry, the first lying where the records start and each
    /// next where the one before it ends, the last ending where the records do, and the keys rise,
    /// of ASCII where the table says every key is. Always true of a snapshot in format 1, whose
    /// records were found so.
    func tablePlacesEveryRecord() -> Bool {
        var cursor = Cursor(self)
        while cursor.isWhole && cursor.record != nil {
            cursor.advance(in: self)
        }
        return cursor.isWhole
    }

    /// A walk through an index's records in order of key, which checks as it goes that each
    /// record can be read, lies where the one before it ends, and has a greater key, of ASCII where
    /// the index says every key is.
    ///
    /// One pass for both: comparing two snapshots after another process's compaction walks every
    /// record of both anyway. A walk that finds every record so leaves them with the index
    /// (``SnapshotIndex/rememberWalk(_:)``), and the next walk reads them there without checking
    /// again: the snapshot a catch-up reads is the older of the next one's two. The index is passed
    /// to each step rather than held, which would retain and release it at every one.
    struct Cursor {
        private var position = -1
        private let count: Int
        /// The records as a walk already found them whole; `nil` until one has.
        private let known: [Located]?
        /// The records found so far, for the index to keep if they all are found whole.
        private var found: [Located] = []
        /// Where the next record must start; `nil` for a snapshot in format 1.
        private var expectedStart: Int?
        /// Where the records end; `nil` for a snapshot in format 1.
        private let recordsEnd: Int?
        /// The record at the walk's position; `nil` at the end, or where it cannot be read.
        private(set) var record: Located?
        /// Whether every record so far could be read, followed the one before it, and rose.
        private(set) var isWhole = true

        init(_ index: SnapshotIndex) {
            count = index.count
            known = index.walkedRecords
            let records = index.tableRecords
            expectedStart = records?.lowerBound
            recordsEnd = records?.upperBound
            if known == nil {
                found.reserveCapacity(count)
            }
            advance(in: index)
        }

        mutating func advance(in index: SnapshotIndex) {
            position += 1
            if let known {
                record = position < count ? known[position] : nil
                return
            }
            let previous = record
            guard position < count else {
                record = nil
                isWhole = isWhole && expectedStart == recordsEnd
                if isWhole {
                    index.rememberWalk(found)
                }
                return
            }
            let located = index.locate(at: position)
            record = located?.record
            // A table that says every key is ASCII where one is not would have bytes compared where
            // only strings can tell keys apart.
            guard let located, !index.keysAreASCII || located.keyIsASCII,
                expectedStart.map({ index.recordStart(at: position) == $0 }) ?? true
            else {
                isWhole = false
                return
            }
            let record = located.record
            found.append(record)
            if expectedStart != nil {
                expectedStart = record.valueEnd
            }
            if let previous {
                let buffer = index.file.buffer
                isWhole = isWhole && compareKeys(previous.key(in: buffer), record.key(in: buffer)) < 0
            }
        }
    }
}
