/// A snapshot whose body verified, kept as its bytes: each entry is decoded when it is first
/// looked up.
///
/// Opening checks the body's checksum, which tells the bytes are those its writer wrote, and reads
/// nothing else: a snapshot in format 2 ends with a table of where each record starts, in order of
/// key (``SnapshotFile``), so a lookup is a binary search over that table, reading the records it
/// passes. Reading every key at open would cost a pass over the records, and decoding every entry
/// would make, hash and insert strings for entries that may never be read. A record is checked
/// when it is first read: one the table names wrongly, or whose value does not decode, which only a
/// writer other than this library's can leave under a matching checksum, reads as no value and is
/// reported by the compaction that would drop it (see ``StoredEntries/takeInSnapshot()``).
///
/// A snapshot in format 1 has no table: opening it reads each record's frame, that it sets one
/// entry, where its key and value lie, and that the keys rise, and indexes what it found. Only a
/// snapshot in the form ``SnapshotFile/encode(_:generation:expectedSize:)`` writes is indexed: one
/// entry a record, in increasing order of key. Any other is decoded whole instead.
///
/// Keys compare as `String` compares them, where canonically equivalent strings are equal
/// ("é" as one scalar or as "e" and an accent): bytes tell only for ASCII, which every key
/// declared in code is. A lookup where either side is not ASCII goes through a dictionary of
/// every key instead, made the first time one is needed.
final class SnapshotIndex: Sendable {
    /// The file the entries are read from.
    let file: FileBytes
    private let layout: Layout
    /// Whether every key's namespace and name are ASCII, so that a binary search over bytes finds
    /// what comparing strings would.
    private let keysAreASCII: Bool
    /// Each key's record, for lookups that bytes cannot answer; made when first needed.
    ///
    /// A ``KeyTable``, not a dictionary: a dictionary keyed by ``ResolvedKey`` has the runtime
    /// search every loaded library for the key's conformance to `Hashable` the first time in a
    /// process, which costs more than opening a store of 10,000 keys. A table finds a key as a
    /// dictionary does, by the hash of its strings and `==`.
    private let positions = Locked<KeyTable<Int>?>(nil)

    /// How the index finds the record at each position, in order of key.
    private enum Layout {
        /// The records, located by a pass over them when the snapshot opened (format 1).
        case located([Located])
        /// The snapshot's own table (format 2): `count` offsets of 4 bytes each from `start`, where
        /// the frames of records lying between `records` start.
        case table(start: Int, count: Int, records: Range<Int>)
    }

    /// Where one record's key and value lie in the file's bytes.
    private struct Located {
        var namespaceStart: UInt32
        var namespaceEnd: UInt32
        var nameStart: UInt32
        var nameEnd: UInt32
        var valueEnd: UInt32

        /// Where the key lies, and where the value ends, in a file of at most `UInt32.max` bytes.
        init(namespace: Range<Int>, name: Range<Int>, valueEnd: Int) {
            namespaceStart = UInt32(truncatingIfNeeded: namespace.lowerBound)
            namespaceEnd = UInt32(truncatingIfNeeded: namespace.upperBound)
            nameStart = UInt32(truncatingIfNeeded: name.lowerBound)
            nameEnd = UInt32(truncatingIfNeeded: name.upperBound)
            self.valueEnd = UInt32(truncatingIfNeeded: valueEnd)
        }

        var namespace: Range<Int> { Int(namespaceStart)..<Int(namespaceEnd) }
        var name: Range<Int> { Int(nameStart)..<Int(nameEnd) }
        var value: Range<Int> { Int(nameEnd)..<Int(valueEnd) }

        /// The key's bytes in `buffer`, the bytes the record lies in, for ``compareKeys(_:_:)``.
        func key(in buffer: UnsafeBufferPointer<UInt8>) -> KeyBytes {
            (part(buffer, namespace), part(buffer, name))
        }

        /// Where the key and value of the single-entry record whose payload lies at `payload` in
        /// `file` are, and whether its key is ASCII; `nil` if the record is not of one set entry.
        static func find(payload: Range<Int>, in file: FileBytes) -> (Located, keyIsASCII: Bool)? {
            if let plain = Record.locatePlainSingleSet(in: file.buffer, payload: payload) {
                return (Located(namespace: plain.namespace, name: plain.name, valueEnd: payload.upperBound), true)
            }
            // A reader only here, where the fast path gives up, over a copy of the record.
            var reader = ByteReader(file.copy(of: payload), range: 0..<payload.count)
            guard let found = try? Record.locateSingleSet(payload: &reader) else { return nil }
            let shift = payload.lowerBound
            let located = Located(
                namespace: found.namespace.shifted(by: shift), name: found.name.shifted(by: shift),
                valueEnd: payload.upperBound)
            return (located, found.keyIsASCII)
        }
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

    /// Indexes `file`, whose checksum matched, by the table of records framed at `tableOffset`
    /// after the records that begin at `recordsStart`, reading no record (format 2); `nil` if the
    /// table's frame does not end the file or its length does not match its count.
    ///
    /// The table's offsets are checked as each is read: a lookup never reads outside the records.
    init?(verified file: FileBytes, recordsFrom recordsStart: Int, tableAt tableOffset: Int) {
        let buffer = file.buffer
        guard buffer.count <= UInt32.max, recordsStart <= tableOffset,
            let (payload, _) = RecordFrame.payload(in: buffer, at: tableOffset),
            payload.upperBound == buffer.count, payload.count >= SnapshotTable.headerSize
        else { return nil }
        let flags = buffer[payload.lowerBound]
        let count = Int(loadUInt32(buffer, at: payload.lowerBound + 1))
        guard payload.count == SnapshotTable.headerSize + 4 * count else { return nil }
        self.file = file
        self.layout = .table(
            start: payload.lowerBound + SnapshotTable.headerSize, count: count, records: recordsStart..<tableOffset)
        self.keysAreASCII = flags & SnapshotTable.keysAreASCII != 0
    }

    /// Indexes a copy of `bytes`: for tests and tools that hold a file as an array.
    convenience init?(verified bytes: [UInt8], from offset: Int) {
        self.init(verified: FileBytes(copying: bytes), from: offset)
    }

    /// How many records the snapshot holds.
    var count: Int {
        switch layout {
        case .located(let records): records.count
        case .table(_, let count, _): count
        }
    }

    /// The record at `position` in order of key; `nil` where the table names no record of one set
    /// entry lying among the records.
    private func record(at position: Int) -> Located? {
        switch layout {
        case .located(let records):
            return records[position]
        case .table(let start, _, let records):
            let offset = Int(loadUInt32(file.buffer, at: start + 4 * position))
            guard offset >= records.lowerBound, offset < records.upperBound else { return nil }
            // Framed within the records, so that no length in them reaches into the table.
            let recordBytes = UnsafeBufferPointer(rebasing: file.buffer[..<records.upperBound])
            guard let (payload, _) = RecordFrame.payload(in: recordBytes, at: offset) else { return nil }
            return Located.find(payload: payload, in: file)?.0
        }
    }

    /// The bytes of the table's entry for `position`, for a report of a record it names wrongly.
    private func tableEntry(at position: Int) -> Range<Int> {
        guard case .table(let start, _, _) = layout else { return 0..<0 }
        return (start + 4 * position)..<(start + 4 * position + 4)
    }

    /// The value stored under `key`, decoded; `nil` if the snapshot holds none, or one that does
    /// not decode.
    func value(for key: ResolvedKey) -> StoredValue? {
        position(of: key).flatMap { record(at: $0) }.flatMap { decodeValue(of: $0) }
    }

    /// Every entry, decoded, and where the values that do not decode, or the table's entries that
    /// name no record, lie in the file.
    func decodeAll() -> (entries: [ResolvedKey: StoredValue], unreadable: [Range<Int>]) {
        var entries: [ResolvedKey: StoredValue] = [:]
        var unreadable: [Range<Int>] = []
        entries.reserveCapacity(count)
        forEachRecord { position, key, record in
            guard let key, let record else {
                unreadable.append(tableEntry(at: position))
                return
            }
            if let value = decodeValue(of: record) {
                entries[key] = value
            } else {
                // A later record whose key is canonically equivalent wins, as in decoding.
                entries.removeValue(forKey: key)
                unreadable.append(record.value)
            }
        }
        return (entries, unreadable)
    }

    /// Calls `body` with each record's position, its key made as a string, and the record, in
    /// order; with no key or record where the table names no record.
    private func forEachRecord(_ body: (Int, ResolvedKey?, Located?) -> Void) {
        var previous: (range: Range<Int>, namespace: String)?
        let buffer = file.buffer
        for position in 0..<count {
            guard let record = record(at: position) else {
                body(position, nil, nil)
                continue
            }
            // Entries sorted by namespace share few namespaces: each is made once.
            let namespace: String
            if let previous, compareBytes(part(buffer, previous.range), part(buffer, record.namespace)) == 0 {
                namespace = previous.namespace
            } else {
                namespace = String(decoding: part(buffer, record.namespace), as: UTF8.self)
                previous = (record.namespace, namespace)
            }
            let name = String(decoding: part(buffer, record.name), as: UTF8.self)
            body(position, ResolvedKey(namespace: namespace, name: name), record)
        }
    }

    /// The changes that turn this snapshot's entries into `newer`'s, or `nil` when bytes cannot
    /// tell keys apart (a key of either is not ASCII), or either names a record it cannot read or
    /// holds keys out of order, which only another writer leaves.
    ///
    /// Both are walked in key order, and an entry is decoded only where its bytes differ: after
    /// another process compacts, most entries are the same bytes in the old snapshot and the new.
    func changes(to newer: SnapshotIndex) -> [EntryChange]? {
        guard keysAreASCII, newer.keysAreASCII else { return nil }
        var changes: [EntryChange] = []
        let (oldBytes, newBytes) = (file.buffer, newer.file.buffer)
        var old = Walk(index: self)
        var new = Walk(index: newer)
        while old.record != nil || new.record != nil {
            guard old.isInOrder, new.isInOrder else { return nil }
            let order: Int
            if let before = old.record, let after = new.record {
                order = compareKeys(before.key(in: oldBytes), after.key(in: newBytes))
            } else {
                order = old.record == nil ? 1 : -1
            }
            // A value that does not decode reads as none: its coming or going is no change.
            if order < 0, let before = old.record {
                if decodeValue(of: before) != nil {
                    changes.append(EntryChange(key: key(of: before), value: nil))
                }
                old.advance()
            } else if order > 0, let after = new.record {
                if let value = newer.decodeValue(of: after) {
                    changes.append(EntryChange(key: newer.key(of: after), value: value))
                }
                new.advance()
            } else if let before = old.record, let after = new.record {
                // Equal bytes are equal values; unequal ones may still be (strings that are
                // canonically equivalent), so those are decoded and compared.
                if compareBytes(part(oldBytes, before.value), part(newBytes, after.value)) != 0 {
                    let value = newer.decodeValue(of: after)
                    if decodeValue(of: before) != value {
                        changes.append(EntryChange(key: newer.key(of: after), value: value))
                    }
                }
                old.advance()
                new.advance()
            }
        }
        guard old.isInOrder, new.isInOrder else { return nil }
        return changes
    }

    /// A walk through an index's records in order, which notices a record it cannot read or a key
    /// that does not rise.
    private struct Walk {
        let index: SnapshotIndex
        private var position = 0
        /// The record at the walk's position; `nil` at the end, or where it cannot be read.
        private(set) var record: SnapshotIndex.Located?
        /// Whether every record so far could be read, and rose.
        private(set) var isInOrder = true

        init(index: SnapshotIndex) {
            self.index = index
            record = index.count > 0 ? index.record(at: 0) : nil
            isInOrder = index.count == 0 || record != nil
        }

        mutating func advance() {
            let previous = record
            position += 1
            guard position < index.count else {
                record = nil
                return
            }
            record = index.record(at: position)
            guard let previous, let record else {
                isInOrder = false
                return
            }
            let buffer = index.file.buffer
            isInOrder = isInOrder && compareKeys(previous.key(in: buffer), record.key(in: buffer)) < 0
        }
    }

    private func key(of record: Located) -> ResolvedKey {
        let buffer = file.buffer
        return ResolvedKey(
            namespace: String(decoding: part(buffer, record.namespace), as: UTF8.self),
            name: String(decoding: part(buffer, record.name), as: UTF8.self)
        )
    }

    /// The record's value, decoded from a copy of its bytes; `nil` if it does not decode.
    private func decodeValue(of record: Located) -> StoredValue? {
        var reader = ByteReader(file.copy(of: record.value), range: 0..<record.value.count)
        guard let value = try? StoredValue(from: &reader), reader.isAtEnd else { return nil }
        return value
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
                    let middle = (low + high) / 2
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
        positions.withLock { positions in
            if positions == nil {
                var made = KeyTable<Int>(minimumCapacity: count)
                forEachRecord { position, key, _ in
                    if let key {
                        made[key] = position
                    }
                }
                positions = made
            }
            return positions?[key]
        }
    }
}

/// The table that ends a snapshot in format 2, framed as a record is:
///
/// ```
/// flags    UInt8    bit 0: every key's namespace and name are ASCII
/// count    UInt32   how many records the snapshot holds
/// offsets  count × UInt32   where each record's frame starts in the file, in order of key
/// ```
enum SnapshotTable {
    /// The bytes before the offsets: the flags and the count.
    static let headerSize = 5
    /// The flag that says every key is ASCII.
    static let keysAreASCII: UInt8 = 1
}

/// The little-endian `UInt32` at `offset` in `buffer`, which holds its four bytes.
private func loadUInt32(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32 {
    UInt32(littleEndian: UnsafeRawPointer(buffer.baseAddress! + offset).loadUnaligned(as: UInt32.self))
}

/// A key as bytes: its namespace's and its name's UTF-8.
private typealias KeyBytes = (namespace: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>)

/// Orders two keys by namespace, then name, each as bytes.
///
/// The order of a snapshot, and of `ResolvedKey`'s `<`: negative, zero or positive, as `memcmp`.
private func compareKeys(_ lhs: KeyBytes, _ rhs: KeyBytes) -> Int {
    let order = compareBytes(lhs.namespace, rhs.namespace)
    return order != 0 ? order : compareBytes(lhs.name, rhs.name)
}

/// The bytes of `buffer` in `range`.
private func part(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UnsafeBufferPointer<UInt8> {
    UnsafeBufferPointer(rebasing: buffer[range])
}

/// Calls `body` with a string's UTF-8 bytes, contiguous.
private func withUTF8<Result>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    var string = string
    return string.withUTF8(body)
}

extension Range<Int> {
    /// The range moved `offset` places up.
    fileprivate func shifted(by offset: Int) -> Range<Int> {
        (lowerBound + offset)..<(upperBound + offset)
    }
}
