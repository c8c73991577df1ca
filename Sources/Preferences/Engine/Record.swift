/// One committed batch of changes: the unit that is framed, checksummed and replayed.
///
/// A snapshot holds one record per entry; the log one record per commit. A record also says where
/// its commit came from, so that observers in other processes learn it too.
///
/// ```
/// flags: UInt8 (bit 0: a write identifier follows, bit 1: a migration's identity follows,
///               bit 2: a sequence number follows)
/// [writeIdentifier: string] [migration: string] [sequence: varint]
/// count: varint, then each change: operation, namespace, name, [value]
/// ```
struct Record: Equatable, Sendable, LogContent {
    var changes: [EntryChange]
    /// The identifier the writer gave its transaction, if any.
    var writeIdentifier: String?
    /// The identity of the migration that made this commit, if one did.
    var migration: String?
    /// The commit's number in its log, from 1 after each compaction; `nil` in a snapshot.
    ///
    /// A gap in the numbers, or a log that ends before the number the lock page acknowledged, shows
    /// that commits are missing.
    var sequence: UInt64?

    private enum Operation: UInt8 {
        case set = 1
        case remove = 2
    }

    private enum Flag {
        static let writeIdentifier: UInt8 = 1
        static let migration: UInt8 = 2
        static let sequence: UInt8 = 4
        static let all = writeIdentifier | migration | sequence
    }

    /// Encodes the record as numbered `sequence` in its log, whatever its own `sequence` says: how
    /// the engine numbers a commit without copying its record.
    func encode<Sink: ByteSink>(into writer: inout Sink, sequence: UInt64?) {
        Self.encodeHeader(
            writeIdentifier: writeIdentifier, migration: migration, sequence: sequence, count: changes.count,
            into: &writer)
        for change in changes {
            Self.encode(change.key, change.value, into: &writer)
        }
    }

    /// Encodes the record of one entry, as ``SnapshotFile`` holds it: `Record(changes: [change])`,
    /// with no record and no array made.
    static func encodeEntry<Sink: ByteSink>(_ key: ResolvedKey, _ value: StoredValue, into writer: inout Sink) {
        encodeHeader(writeIdentifier: nil, migration: nil, sequence: nil, count: 1, into: &writer)
        encode(key, value, into: &writer)
    }

    /// Encodes what comes before a record's changes: its flags, identifiers and number, and how
    /// many changes follow.
    fileprivate static func encodeHeader<Sink: ByteSink>(
        writeIdentifier: String?,
        migration: String?,
        sequence: UInt64?,
        count: Int,
        into writer: inout Sink
    ) {
        writer.append(
            (writeIdentifier == nil ? 0 : Flag.writeIdentifier) | (migration == nil ? 0 : Flag.migration)
                | (sequence == nil ? 0 : Flag.sequence)
        )
        if let writeIdentifier {
            writer.appendLengthPrefixed(writeIdentifier)
        }
        if let migration {
            writer.appendLengthPrefixed(migration)
        }
        if let sequence {
            writer.appendVarint(Int(sequence))
        }
        writer.appendVarint(count)
    }

    fileprivate static func encode<Sink: ByteSink>(
        _ key: ResolvedKey,
        _ value: borrowing StoredValue?,
        into writer: inout Sink
    ) {
        // Borrowed, and switched on rather than unwrapped: `value?.write` would copy the value first.
        let isSet: Bool
        switch value {
        case .some: isSet = true
        case .none: isSet = false
        }
        writer.append(isSet ? Operation.set.rawValue : Operation.remove.rawValue)
        if key.withEncoded({ writer.append($0) }) == nil {
            writer.appendLengthPrefixed(key.namespace)
            writer.appendLengthPrefixed(key.name)
        }
        switch value {
        case .some(let value): value.write(to: &writer)
        case .none: break
        }
    }

    /// Decodes a record's payload, which must be consumed exactly.
    init(payload reader: inout ByteReader) throws(FormatError) {
        var changes: [EntryChange] = []
        (writeIdentifier, migration, sequence) = try Self.read(&reader) { count in
            changes.reserveCapacity(count)
        } change: { key, value in
            changes.append(EntryChange(key: key, value: value))
        }
        self.changes = changes
    }

    /// Applies a record's payload to `entries` as it decodes it, with no record in between: how a
    /// snapshot of many one-change records is read.
    static func apply(payload reader: inout ByteReader, to entries: inout [ResolvedKey: StoredValue])
        throws(FormatError)
    {
        _ = try read(&reader) { _ in
        } change: { key, value in
            entries[key] = value
        }
    }

    /// Decodes a payload, handing over each change as it is read; returns the record's identifiers.
    private static func read(
        _ reader: inout ByteReader,
        count: (Int) -> Void,
        change: (ResolvedKey, StoredValue?) -> Void
    ) throws(FormatError) -> (writeIdentifier: String?, migration: String?, sequence: UInt64?) {
        let flagsAt = reader.position
        let flags = try reader.readByte()
        guard flags & ~Flag.all == 0 else {
            throw .malformed("unknown record flags", at: flagsAt)
        }
        let writeIdentifier = flags & Flag.writeIdentifier == 0 ? nil : try reader.readLengthPrefixedString()
        let migration = flags & Flag.migration == 0 ? nil : try reader.readLengthPrefixedString()
        let sequence = flags & Flag.sequence == 0 ? nil : UInt64(try reader.readVarint())
        let changeCount = try reader.readCount(minimumItemSize: 3)
        count(changeCount)
        for _ in 0..<changeCount {
            let start = reader.position
            guard let operation = Operation(rawValue: try reader.readByte()) else {
                throw .malformed("unknown operation", at: start)
            }
            let namespace = try reader.readLengthPrefixedString()
            let name = try reader.readLengthPrefixedString()
            guard !name.isEmpty else { throw .malformed("empty key name", at: start) }
            let key = ResolvedKey(namespace: namespace, name: name)
            switch operation {
            case .set: change(key, try StoredValue(from: &reader))
            case .remove: change(key, nil)
            }
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the last change", at: reader.position) }
        return (writeIdentifier, migration, sequence)
    }

    /// Where the key and value of a record that sets one entry lie, and whether the key is ASCII;
    /// `nil` for any other record, which may still decode.
    ///
    /// The key is checked as decoding checks it; the value only holds at least a byte, and is
    /// checked when it is decoded (see ``SnapshotIndex``). A record ``SnapshotFile`` writes is of
    /// this form: no identifiers, one change, a set.
    static func locateSingleSet(
        payload reader: inout ByteReader
    ) throws(FormatError) -> (namespace: Range<Int>, name: Range<Int>, value: Range<Int>, keyIsASCII: Bool)? {
        guard try reader.readByte() == 0, try reader.readVarint() == 1, try reader.readByte() == Operation.set.rawValue
        else { return nil }
        let namespace = try reader.skipLengthPrefixedString()
        let name = try reader.skipLengthPrefixedString()
        guard !name.range.isEmpty, !reader.isAtEnd else { return nil }
        let value = try reader.readBytesRange(reader.remaining)
        return (namespace.range, name.range, value, namespace.isASCII && name.isASCII)
    }

    /// What ``locateSingleSet(payload:)`` finds, for the records it finds most, straight from the bytes.
    ///
    /// Takes a key of ASCII, each string shorter than 128 bytes; `nil` for any other record, valid
    /// or not, which `locateSingleSet(payload:)` then decides. The key is ASCII when it finds one.
    ///
    /// Opening a store locates every record of its snapshot, most of them of this form: inlined,
    /// with one check for ASCII over both lengths and both strings, it takes a fraction of what a
    /// reader that checks and may throw at every step takes.
    @inline(__always)
    static func locatePlainSingleSet(
        in buffer: UnsafeBufferPointer<UInt8>,
        payload: Range<Int>
    ) -> (namespace: Range<Int>, name: Range<Int>, value: Range<Int>)? {
        let (start, end) = (payload.lowerBound, payload.upperBound)
        // No flags, one change, a set, the two lengths, a byte of name and one of value at least.
        guard start >= 0, end <= buffer.count, end - start >= 7, let base = buffer.baseAddress,
            base[start] == 0, base[start + 1] == 1, base[start + 2] == Operation.set.rawValue
        else { return nil }
        // Each length is one byte, below 128, as the check for ASCII below makes sure.
        let namespace = (start + 4)..<(start + 4 + Int(base[start + 3]))
        guard namespace.upperBound < end else { return nil }
        let name = (namespace.upperBound + 1)..<(namespace.upperBound + 1 + Int(base[namespace.upperBound]))
        guard !name.isEmpty, name.upperBound < end,
            isASCII(UnsafeBufferPointer(start: base + start + 3, count: name.upperBound - start - 3))
        else { return nil }
        return (namespace, name, name.upperBound..<end)
    }

    init(changes: [EntryChange], writeIdentifier: String? = nil, migration: String? = nil, sequence: UInt64? = nil) {
        self.changes = changes
        self.writeIdentifier = writeIdentifier
        self.migration = migration
        self.sequence = sequence
    }

    func apply(to entries: inout StoredEntries) {
        // By index, so that no change is copied whole (see `PreferencesStore.commit`).
        for index in changes.indices {
            entries.set(changes[index].value, for: changes[index].key)
        }
    }

    func apply(to entries: inout [ResolvedKey: StoredValue]) {
        for change in changes {
            entries[change.key] = change.value
        }
    }
}

/// What a commit appends to the log, framed: a whole record, or the one change of a write of one key.
///
/// A write of one key hands the engine its change alone, which encodes as the record of that one
/// change would: no record, and no array of changes, is made for it (see
/// ``PreferencesStore/commit(_:valueType:)``).
protocol LogContent {
    /// Encodes the content as a record numbered `sequence` in its log.
    func encode<Sink: ByteSink>(into writer: inout Sink, sequence: UInt64?)
    /// Applies the content's changes to `entries`.
    func apply(to entries: inout StoredEntries)
}

extension EntryChange: LogContent {
    func encode<Sink: ByteSink>(into writer: inout Sink, sequence: UInt64?) {
        Record.encodeHeader(writeIdentifier: nil, migration: nil, sequence: sequence, count: 1, into: &writer)
        Record.encode(key, value, into: &writer)
    }

    func apply(to entries: inout StoredEntries) {
        entries.set(value, for: key)
    }
}
