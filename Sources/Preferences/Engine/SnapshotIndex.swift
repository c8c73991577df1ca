/// A snapshot whose body verified, kept as its bytes: each entry is decoded when it is first
/// looked up.
///
/// Opening checks the body's checksum, which tells the bytes are those a writer wrote, and reads
/// nothing else: a snapshot in format 2 ends with a table of where each record starts, in order of
/// key (``SnapshotTable``), so a lookup is a binary search over that table, reading the records it
/// passes. Reading every key at open would cost a pass over the records, and decoding every entry
/// would make, hash and insert strings for entries that may never be read.
///
/// What the table says is checked as it is used. A lookup reads only records the table places among
/// the records, and a record that is not one set entry, or a value that does not decode, reads as
/// no value. Whether the table places every record once, in order, is checked by the walks over
/// all of them (``decodeAll()``, ``changes(to:)``), which read the records themselves when it does
/// not. Only a writer other than this library's leaves such a table under a matching checksum; until
/// a compaction or `prefs verify` reports it, lookups may miss the entries it places wrongly.
///
/// A snapshot in format 1 has no table: opening reads each record's frame, that it sets one entry,
/// where its key and value lie, and that the keys rise, and indexes what it found; one that is not
/// in that form is decoded whole instead (see ``SnapshotFile``).
///
/// Keys compare as `String` compares them, where canonically equivalent strings are equal
/// ("é" as one scalar or as "e" and an accent): bytes tell only for ASCII, which every key
/// declared in code is. A lookup where either side is not ASCII goes through a table of every key
/// instead, made the first time one is needed.
final class SnapshotIndex: Sendable {
    /// The file the entries are read from.
    let file: FileBytes
    private let layout: Layout
    /// Whether every key's namespace and name are ASCII, so that a binary search over bytes finds
    /// what comparing strings would.
    let keysAreASCII: Bool
    /// What the index learns after it is made, under one lock: one generic type fewer for the
    /// runtime to make when a process first opens a store.
    private let learned = Locked(Learned())

    /// What an index learns as it is used.
    private struct Learned {
        /// Each key's record, for lookups that bytes cannot answer; made when first needed.
        ///
        /// A ``KeyTable``, not a dictionary: a dictionary keyed by ``ResolvedKey`` has the runtime
        /// search every loaded library for the key's conformance to `Hashable` the first time in
        /// a process, which costs more than opening a store of 10,000 keys. A table finds a key as
        /// a dictionary does, by the hash of its strings and `==`.
        var positions: KeyTable<Int>?
        /// The records in order of key, once a walk over all of them found the table places them
        /// whole (see ``Cursor``); a snapshot in format 1 has them from the start.
        var walked: [Located]?
    }

    /// How the index finds the record at each position, in order of key.
    private enum Layout {
        /// The records, located by a pass over them when the snapshot opened (format 1).
        case located([Located])
        /// The snapshot's own table (format 2), placing records that lie in `records`.
        case table(SnapshotTable, records: Range<Int>)
    }

    /// Indexes the records from `offset` to the end of `file`, whose checksum matched, by reading
    /// each of them; `nil` if one of them is not in the indexed form, or the keys do not rise.
    init?(verified file: FileBytes, from offset: Int) {
        let buffer = file.buffer
        guard buffer.count <= UInt32.max else { return nil }
        var records: [Located] = []
        // Room for records of about 48 bytes, the size of a small one, up to 65,536 of them:
        // growing the array copies it, and a few large records must not reserve room for many.
        records.reserveCapacity(min(max(buffer.count - offset, 0) / 48, 1 << 16))
        var keysAreASCII = true
        var offset = offset
        while offset < buffer.count {
            guard let (payload, _) = RecordFrame.payload(in: buffer, at: offset),
                let (located, keyIsASCII) = Located.find(payload: payload, in: file)
            else { return nil }
            keysAreASCII = keysAreASCII && keyIsASCII
            if let previous = records.last, compareKeys(previous.key(in: buffer), located.key(in: buffer)) >= 0 {
                return nil
            }
            records.append(located)
            offset = payload.upperBound
        }
        self.file = file
        self.layout = .located(records)
        self.keysAreASCII = keysAreASCII
    }

    /// Indexes a copy of `bytes`: for tests and tools that hold a file as an array.
    convenience init?(verified bytes: [UInt8], from offset: Int) {
        self.init(verified: FileBytes(copying: bytes), from: offset)
    }

    /// Indexes `file`, whose checksum matched, by the table framed at `tableOffset` after the
    /// records that begin at `recordsStart`, reading no record (format 2); `nil` if the table's
    /// frame does not end the file or its length does not match its count.
    init?(verified file: FileBytes, recordsFrom recordsStart: Int, tableAt tableOffset: Int) {
        guard file.buffer.count <= UInt32.max, recordsStart <= tableOffset,
            let table = SnapshotTable(in: file.buffer, at: tableOffset)
        else { return nil }
        self.file = file
        self.layout = .table(table, records: recordsStart..<tableOffset)
        self.keysAreASCII = table.keysAreASCII
    }

    /// How many records the snapshot holds.
    var count: Int {
        switch layout {
        case .located(let records): records.count
        case .table(let table, _): table.count
        }
    }

    /// The record at `position` in order of key; `nil` where the table places no record of one set
    /// entry among the records.
    func record(at position: Int) -> Located? {
        locate(at: position)?.record
    }

    /// The record at `position` and whether its key is ASCII, as ``record(at:)`` finds it.
    func locate(at position: Int) -> (record: Located, keyIsASCII: Bool)? {
        switch layout {
        case .located(let records):
            // An index made by reading the records knows whether all of their keys are ASCII.
            return (records[position], keysAreASCII)
        case .table(let table, let records):
            guard let offset = table.recordOffset(at: position, in: file.buffer), records.contains(offset) else {
                return nil
            }
            // Framed within the records, so that no length in them reaches into the table.
            let recordBytes = UnsafeBufferPointer(rebasing: file.buffer[..<records.upperBound])
            guard let (payload, _) = RecordFrame.payload(in: recordBytes, at: offset) else { return nil }
            return Located.find(payload: payload, in: file)
        }
    }

    /// The records in order of key as a walk found them whole, if one has.
    var walkedRecords: [Located]? {
        switch layout {
        case .located(let records): records
        case .table: learned.withLock { $0.walked }
        }
    }

    /// Keeps the records a walk found whole, for the walks after it.
    func rememberWalk(_ records: [Located]) {
        guard case .table = layout else { return }
        learned.withLock { $0.walked = records }
    }

    /// Where the records lie that the table places; `nil` for a snapshot in format 1.
    var tableRecords: Range<Int>? {
        guard case .table(_, let records) = layout else { return nil }
        return records
    }

    /// Where the table says the record at `position` starts; `nil` for a snapshot in format 1.
    func recordStart(at position: Int) -> Int? {
        guard case .table(let table, _) = layout else { return nil }
        return table.recordOffset(at: position, in: file.buffer)
    }

    /// The value stored under `key`, decoded; `nil` if the snapshot holds none, or one that does
    /// not decode.
    func value(for key: ResolvedKey) -> StoredValue? {
        position(of: key).flatMap { record(at: $0) }.flatMap { decodeValue(of: $0) }
    }

    /// Every entry, decoded; where the values that do not decode lie in the file; and whether the
    /// table does not place every record once and in order (``tablePlacesEveryRecord()``).
    ///
    /// One walk through the records in order, which checks the table as it goes. When it finds the
    /// table wrong, the entries are those of the records themselves, read in the order they lie,
    /// and the table's bytes are the first of the unreadable ones.
    func decodeAll() -> (entries: [ResolvedKey: StoredValue], unreadable: [Range<Int>], tableIsWrong: Bool) {
        var decoded = DecodedEntries(file: file, capacity: count)
        var cursor = Cursor(self)
        while cursor.isWhole, let record = cursor.record {
            decoded.take(record)
            cursor.advance(in: self)
        }
        guard !cursor.isWhole, let records = tableRecords else {
            return (decoded.entries, decoded.unreadable, false)
        }
        decoded = DecodedEntries(file: file, capacity: count)
        decoded.unreadable.append(records.upperBound..<file.count)
        decoded.takeRecordsAsTheyLie(in: records)
        return (decoded.entries, decoded.unreadable, true)
    }

    /// The record's key, made as strings.
    func key(of record: Located) -> ResolvedKey {
        var keys = KeyMaker(file: file)
        return keys.key(of: record)
    }

    /// The record's value, decoded; `nil` if it does not decode.
    func decodeValue(of record: Located) -> StoredValue? {
        record.decodeValue(in: file)
    }

    /// The position of the record of `key`.
    private func position(of key: ResolvedKey) -> Int? {
        switch search(for: key) {
        case .found(let position): position
        case .absent: nil
        case .bytesCannotTell: positionByEquality(of: key)
        }
    }

    private enum Search {
        case found(Int)
        case absent
        /// The key, or a key of the snapshot, is not ASCII, or the search met a record it cannot
        /// read: bytes cannot tell.
        case bytesCannotTell
    }

    /// Finds `key` by binary search over the keys' bytes.
    private func search(for key: ResolvedKey) -> Search {
        withUTF8(key.namespace) { namespace in
            withUTF8(key.name) { name in
                guard keysAreASCII, isASCII(namespace), isASCII(name) else { return .bytesCannotTell }
                let buffer = file.buffer
                var low = 0
                var high = count
                while low < high {
                    let middle = low + (high - low) / 2
                    guard let record = record(at: middle) else { return .bytesCannotTell }
                    let order = compareKeys(record.key(in: buffer), (namespace, name))
                    if order < 0 {
                        low = middle + 1
                    } else if order > 0 {
                        high = middle
                    } else {
                        return .found(middle)
                    }
                }
                return .absent
            }
        }
    }

    /// Finds `key` as a dictionary finds it, through one of every key; where a key is in the
    /// snapshot twice as canonically equivalent strings, the later record wins, as in decoding.
    private func positionByEquality(of key: ResolvedKey) -> Int? {
        learned.withLock { learned in
            if learned.positions == nil {
                var made = KeyTable<Int>(minimumCapacity: count)
                var keys = KeyMaker(file: file)
                for position in 0..<count {
                    if let record = record(at: position) {
                        made[keys.key(of: record)] = position
                    }
                }
                learned.positions = made
            }
            return learned.positions?[key]
        }
    }
}

/// A key as bytes: its namespace's and its name's UTF-8.
typealias KeyBytes = (namespace: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>)

/// Orders two keys by namespace, then name, each as bytes.
///
/// The order of a snapshot, and of `ResolvedKey`'s `<`: negative, zero or positive, as `memcmp`.
func compareKeys(_ lhs: KeyBytes, _ rhs: KeyBytes) -> Int {
    let order = compareBytes(lhs.namespace, rhs.namespace)
    return order != 0 ? order : compareBytes(lhs.name, rhs.name)
}

/// The bytes of `buffer` in `range`.
func part(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: buffer[range])
}

/// Calls `body` with a string's UTF-8 bytes, contiguous.
func withUTF8<Result>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    var string = string
    return string.withUTF8(body)
}
