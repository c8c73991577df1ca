/// A snapshot whose body verified, kept as its bytes: each entry is decoded when it is first
/// looked up.
///
/// Opening checks the body's checksum, which tells the bytes are those its writer wrote, and then
/// reads only the keys: each record's frame, that it sets one entry, where its key and value lie,
/// and that the keys rise. Decoding every entry would make, hash and insert strings for entries
/// that may never be read; checking every value would read every byte again. A value is checked
/// when it is decoded: one that does not decode, which only a writer other than this library's can
/// leave under a matching checksum, reads as no value and is reported by the compaction that would
/// drop it (see ``StoredEntries/takeInSnapshot()``).
///
/// Only a snapshot in the form ``SnapshotFile/encode(_:generation:)`` writes is indexed: one
/// entry a record, in increasing order of key. Any other is decoded whole instead.
///
/// Keys compare as `String` compares them, where canonically equivalent strings are equal
/// ("é" as one scalar or as "e" and an accent): bytes tell only for ASCII, which every key
/// declared in code is. A lookup where either side is not ASCII goes through a dictionary of
/// every key instead, made the first time one is needed.
final class SnapshotIndex: Sendable {
    /// The file the entries are read from.
    let file: FileBytes
    private let records: [Located]
    /// Whether every key's namespace and name are ASCII, so that a binary search over bytes finds
    /// what comparing strings would.
    private let keysAreASCII: Bool
    /// Each key's record, for lookups that bytes cannot answer; made when first needed.
    private let positions = Locked<[ResolvedKey: Int]?>(nil)

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
    }

    /// Indexes the records from `offset` to the end of `file`, whose checksum matched; `nil` if one
    /// of them is not in the indexed form, or the keys do not rise.
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
            guard let (payload, _) = RecordFrame.payload(in: buffer, at: offset) else { return nil }
            let located: Located
            if let plain = Record.locatePlainSingleSet(in: buffer, payload: payload) {
                located = Located(namespace: plain.namespace, name: plain.name, valueEnd: payload.upperBound)
            } else {
                // A reader only here, where the fast path gives up, over a copy of the record.
                var reader = ByteReader(file.copy(of: payload), range: 0..<payload.count)
                guard let found = try? Record.locateSingleSet(payload: &reader) else { return nil }
                let shift = payload.lowerBound
                located = Located(
                    namespace: found.namespace.shifted(by: shift), name: found.name.shifted(by: shift),
                    valueEnd: payload.upperBound)
                keysAreASCII = keysAreASCII && found.keyIsASCII
            }
            if let previous = records.last, compareKeys(previous.key(in: buffer), located.key(in: buffer)) >= 0 {
                return nil
            }
            records.append(located)
            offset = payload.upperBound
        }
        self.file = file
        self.records = records
        self.keysAreASCII = keysAreASCII
    }

    /// Indexes a copy of `bytes`: for tests and tools that hold a file as an array.
    convenience init?(verified bytes: [UInt8], from offset: Int) {
        self.init(verified: FileBytes(copying: bytes), from: offset)
    }

    var count: Int { records.count }

    /// The value stored under `key`, decoded; `nil` if the snapshot holds none, or one that does
    /// not decode.
    func value(for key: ResolvedKey) -> StoredValue? {
        position(of: key).flatMap { decodeValue(of: records[$0]) }
    }

    /// Every entry, decoded, and where the values that do not decode lie in the file.
    func decodeAll() -> (entries: [ResolvedKey: StoredValue], unreadable: [Range<Int>]) {
        var entries: [ResolvedKey: StoredValue] = [:]
        var unreadable: [Range<Int>] = []
        entries.reserveCapacity(records.count)
        forEachKey { key, position in
            if let value = decodeValue(of: records[position]) {
                entries[key] = value
            } else {
                // A later record whose key is canonically equivalent wins, as in decoding.
                entries.removeValue(forKey: key)
                unreadable.append(records[position].value)
            }
        }
        return (entries, unreadable)
    }

    /// Calls `body` with each record's key, made as a string, and the record's position, in order.
    private func forEachKey(_ body: (ResolvedKey, Int) -> Void) {
        var previous: (range: Range<Int>, namespace: String)?
        let buffer = file.buffer
        for (position, record) in records.enumerated() {
            // Entries sorted by namespace share few namespaces: each is made once.
            let namespace: String
            if let previous, compareBytes(part(buffer, previous.range), part(buffer, record.namespace)) == 0 {
                namespace = previous.namespace
            } else {
                namespace = String(decoding: part(buffer, record.namespace), as: UTF8.self)
                previous = (record.namespace, namespace)
            }
            body(
                ResolvedKey(namespace: namespace, name: String(decoding: part(buffer, record.name), as: UTF8.self)),
                position)
        }
    }

    /// The changes that turn this snapshot's entries into `newer`'s, or `nil` when bytes cannot
    /// tell keys apart (a key of either is not ASCII).
    ///
    /// Both are walked in key order, and an entry is decoded only where its bytes differ: after
    /// another process compacts, most entries are the same bytes in the old snapshot and the new.
    func changes(to newer: SnapshotIndex) -> [EntryChange]? {
        guard keysAreASCII, newer.keysAreASCII else { return nil }
        var changes: [EntryChange] = []
        let (oldBytes, newBytes) = (file.buffer, newer.file.buffer)
        var old = 0
        var new = 0
        while old < records.count || new < newer.records.count {
            let order: Int
            if old == records.count {
                order = 1
            } else if new == newer.records.count {
                order = -1
            } else {
                order = compareKeys(records[old].key(in: oldBytes), newer.records[new].key(in: newBytes))
            }
            // A value that does not decode reads as none: its coming or going is no change.
            if order < 0 {
                if decodeValue(of: records[old]) != nil {
                    changes.append(EntryChange(key: key(of: records[old], in: oldBytes), value: nil))
                }
                old += 1
            } else if order > 0 {
                let record = newer.records[new]
                if let value = newer.decodeValue(of: record) {
                    changes.append(EntryChange(key: newer.key(of: record, in: newBytes), value: value))
                }
                new += 1
            } else {
                let (before, after) = (records[old], newer.records[new])
                // Equal bytes are equal values; unequal ones may still be (strings that are
                // canonically equivalent), so those are decoded and compared.
                if compareBytes(part(oldBytes, before.value), part(newBytes, after.value)) != 0 {
                    let value = newer.decodeValue(of: after)
                    if decodeValue(of: before) != value {
                        changes.append(EntryChange(key: newer.key(of: after, in: newBytes), value: value))
                    }
                }
                old += 1
                new += 1
            }
        }
        return changes
    }

    private func key(of record: Located, in buffer: UnsafeBufferPointer<UInt8>) -> ResolvedKey {
        ResolvedKey(
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
        case .notASCII: positionByEquality(of: key)
        }
    }

    private enum Search {
        case found(Int)
        case absent
        /// The key, or a key of the snapshot, is not ASCII: bytes cannot tell.
        case notASCII
    }

    /// Finds `key` by binary search over the keys' bytes.
    private func search(for key: ResolvedKey) -> Search {
        withUTF8(key.namespace) { namespace in
            withUTF8(key.name) { name in
                guard keysAreASCII, isASCII(namespace), isASCII(name) else { return .notASCII }
                let buffer = file.buffer
                var low = 0
                var high = records.count
                while low < high {
                    let middle = (low + high) / 2
                    let order = compareKeys(records[middle].key(in: buffer), (namespace, name))
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
                var made: [ResolvedKey: Int] = [:]
                made.reserveCapacity(records.count)
                forEachKey { key, position in
                    made[key] = position
                }
                positions = made
            }
            return positions?[key]
        }
    }
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
