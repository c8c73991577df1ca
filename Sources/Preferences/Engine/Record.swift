/// One committed batch of changes: the unit that is framed, checksummed and replayed.
///
/// A snapshot holds one record per entry; the log one record per commit. A record also says where
/// its commit came from, so that observers in other processes learn it too, and the store's
/// history can say who made it and when (see ``HistoryFile``).
///
/// ```
/// flags: UInt8  bit 0: a write identifier follows    bit 4: the writer's process id follows
///               bit 1: the cause's subject follows    bit 5: the writer's program follows
///               bit 2: a sequence number follows      bit 6: a cause follows
///               bit 3: a time follows                 bit 7: a change is kept out of history
/// [writeIdentifier: string] [subject: string] [sequence: varint]
/// [time: Int64 LE, milliseconds since 1970] [processID: Int32 LE] [program: string] [cause: UInt8]
/// count: varint, then each change: operation (bit 7: kept out of history), namespace, name, [value]
/// ```
///
/// Bits 3 to 7 are new in version 3 of the log (``FileHeader/Kind/currentVersion``); a snapshot's
/// records use none of them.
struct Record: Equatable, Sendable, LogContent {
    var changes: [EntryChange]
    /// The identifier the writer gave its transaction, if any.
    var writeIdentifier: String?
    /// What the cause names: the identity of the migration that made the commit, or the device a
    /// synced change came from (``CommitCause/sync``); `nil` for the other causes.
    var subject: String?
    /// The commit's number in its log, from 1 after each compaction; `nil` in a snapshot.
    ///
    /// A gap in the numbers, or a log that ends before the number the lock page acknowledged, shows
    /// that commits are missing.
    var sequence: UInt64?
    /// When, by whom and why the commit was made, as far as its record says.
    var stamp = CommitStamp()
    /// Why the commit was made.
    var cause: CommitCause = .write

    private enum Operation: UInt8 {
        case set = 1
        case remove = 2

        /// Marks a change kept out of history.
        static let keepsNoHistory: UInt8 = 0x80
    }

    enum Flag {
        static let writeIdentifier: UInt8 = 1
        static let subject: UInt8 = 2
        static let sequence: UInt8 = 4
        static let time: UInt8 = 8
        static let processID: UInt8 = 16
        static let program: UInt8 = 32
        static let cause: UInt8 = 64
        static let keepsNoHistory: UInt8 = 128
    }

    /// Encodes the record as numbered `sequence` in its log and stamped with `stamp`, whatever its
    /// own fields say: how the engine numbers and stamps a commit without copying its record.
    func encode<Sink: ByteSink>(into writer: inout Sink, sequence: UInt64?, stamp: borrowing CommitStamp) {
        let keepsNoHistory = changes.contains { $0.key.keepsNoHistory }
        Self.encodeHeader(
            writeIdentifier: writeIdentifier, subject: subject, sequence: sequence, stamp: stamp, cause: cause,
            keepsNoHistory: keepsNoHistory, count: changes.count, into: &writer)
        for change in changes {
            Self.encode(change.key, change.value, into: &writer)
        }
    }

    /// Encodes the record as it is, with its own number and stamp.
    func encode<Sink: ByteSink>(into writer: inout Sink) {
        encode(into: &writer, sequence: sequence, stamp: stamp)
    }

    /// Encodes the record of one entry, as ``SnapshotFile`` holds it: `Record(changes: [change])`,
    /// with no record and no array made.
    static func encodeEntry<Sink: ByteSink>(_ key: ResolvedKey, _ value: StoredValue, into writer: inout Sink) {
        // Flags, then a count of one: a snapshot's entries carry no identifiers, stamp or cause.
        writer.append(UInt8(0))
        writer.append(UInt8(1))
        encode(key, value, into: &writer, markingHistory: false)
    }

    /// Encodes what comes before a record's changes: its flags, identifiers, number and stamp,
    /// and how many changes follow.
    ///
    /// Inlined, so that a write of one key, which has no identifiers and no cause, tests none.
    @inline(__always)
    fileprivate static func encodeHeader<Sink: ByteSink>(
        writeIdentifier: String?,
        subject: String?,
        sequence: UInt64?,
        stamp: borrowing CommitStamp,
        cause: CommitCause,
        keepsNoHistory: Bool,
        count: Int,
        into writer: inout Sink
    ) {
        var flags = (writeIdentifier == nil ? 0 : Flag.writeIdentifier) | (subject == nil ? 0 : Flag.subject)
        flags |= (sequence == nil ? 0 : Flag.sequence) | (stamp.time == nil ? 0 : Flag.time)
        flags |= (stamp.processID == nil ? 0 : Flag.processID) | (stamp.program == nil ? 0 : Flag.program)
        flags |= (cause == .write ? 0 : Flag.cause) | (keepsNoHistory ? Flag.keepsNoHistory : 0)
        writer.append(flags)
        if let writeIdentifier {
            writer.appendLengthPrefixed(writeIdentifier)
        }
        if let subject {
            writer.appendLengthPrefixed(subject)
        }
        if let sequence {
            writer.appendVarint(Int(sequence))
        }
        // Fixed-width: two stores, where varints would cost a commit a loop over nine bytes.
        if let time = stamp.time {
            writer.append(UInt64(bitPattern: time))
        }
        if let processID = stamp.processID {
            writer.append(UInt32(bitPattern: processID))
        }
        if let program = stamp.program {
            writer.appendLengthPrefixed(program)
        }
        if cause != .write {
            writer.append(cause.rawValue)
        }
        writer.appendVarint(count)
    }

    fileprivate static func encode<Sink: ByteSink>(
        _ key: ResolvedKey,
        _ value: borrowing StoredValue?,
        into writer: inout Sink,
        markingHistory: Bool = true
    ) {
        // Borrowed, and switched on rather than unwrapped: `value?.write` would copy the value first.
        let isSet: Bool
        switch value {
        case .some: isSet = true
        case .none: isSet = false
        }
        let operation = isSet ? Operation.set.rawValue : Operation.remove.rawValue
        writer.append(markingHistory && key.keepsNoHistory ? operation | Operation.keepsNoHistory : operation)
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
        let header = try Self.read(&reader) { count in
            changes.reserveCapacity(count)
        } change: { key, value in
            changes.append(EntryChange(key: key, value: value))
        }
        self.changes = changes
        writeIdentifier = header.writeIdentifier
        subject = header.subject
        sequence = header.sequence
        stamp = header.stamp
        cause = header.cause
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

    /// What comes before a record's changes.
    struct Header {
        var flags: UInt8
        var writeIdentifier: String?
        var subject: String?
        var sequence: UInt64?
        var stamp = CommitStamp()
        var cause = CommitCause.write
        var changeCount: Int
    }

    /// Reads what comes before a record's changes, leaving `reader` at the first change.
    static func readHeader(_ reader: inout ByteReader) throws(FormatError) -> Header {
        let flags = try reader.readByte()
        let writeIdentifier = flags & Flag.writeIdentifier == 0 ? nil : try reader.readLengthPrefixedString()
        let subject = flags & Flag.subject == 0 ? nil : try reader.readLengthPrefixedString()
        let sequence = flags & Flag.sequence == 0 ? nil : UInt64(try reader.readVarint())
        var stamp = CommitStamp()
        if flags & Flag.time != 0 {
            stamp.time = Int64(bitPattern: try reader.readUInt64())
        }
        if flags & Flag.processID != 0 {
            stamp.processID = Int32(bitPattern: try reader.readUInt32())
        }
        if flags & Flag.program != 0 {
            stamp.program = try reader.readLengthPrefixedString()
        }
        var cause = CommitCause.write
        if flags & Flag.cause != 0 {
            let at = reader.position
            guard let known = CommitCause(rawValue: try reader.readByte()), known != .write else {
                throw .malformed("unknown cause", at: at)
            }
            cause = known
        }
        let changeCount = try reader.readCount(minimumItemSize: 3)
        return Header(
            flags: flags, writeIdentifier: writeIdentifier, subject: subject, sequence: sequence, stamp: stamp,
            cause: cause, changeCount: changeCount)
    }

    /// Decodes a payload, handing over each change as it is read; returns what came before them.
    private static func read(
        _ reader: inout ByteReader,
        count: (Int) -> Void,
        change: (ResolvedKey, StoredValue?) -> Void
    ) throws(FormatError) -> Header {
        let header = try readHeader(&reader)
        count(header.changeCount)
        var marksHistory = false
        for _ in 0..<header.changeCount {
            let start = reader.position
            let byte = try reader.readByte()
            guard let operation = Operation(rawValue: byte & ~Operation.keepsNoHistory) else {
                throw .malformed("unknown operation", at: start)
            }
            let keepsNoHistory = byte & Operation.keepsNoHistory != 0
            marksHistory = marksHistory || keepsNoHistory
            let namespace = try reader.readLengthPrefixedString()
            let name = try reader.readLengthPrefixedString()
            guard !name.isEmpty else { throw .malformed("empty key name", at: start) }
            let key = ResolvedKey(namespace: namespace, name: name, keepsNoHistory: keepsNoHistory)
            switch operation {
            case .set: change(key, try StoredValue(from: &reader))
            case .remove: change(key, nil)
            }
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the last change", at: reader.position) }
        guard marksHistory == (header.flags & Flag.keepsNoHistory != 0) else {
            throw .malformed("the record's flags and its changes disagree on history", at: reader.position)
        }
        return header
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
    /// A lookup in a snapshot locates each record its binary search passes, and opening a snapshot
    /// in format 1 every record, most of them of this form: inlined, with one check for ASCII over
    /// both lengths and both strings, it takes a fraction of what a reader that checks and may
    /// throw at every step takes.
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

    init(
        changes: [EntryChange],
        writeIdentifier: String? = nil,
        subject: String? = nil,
        sequence: UInt64? = nil,
        cause: CommitCause = .write
    ) {
        self.changes = changes
        self.writeIdentifier = writeIdentifier
        self.subject = subject
        self.sequence = sequence
        self.cause = cause
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
    /// Encodes the content as a record numbered `sequence` in its log, stamped with `stamp`.
    func encode<Sink: ByteSink>(into writer: inout Sink, sequence: UInt64?, stamp: borrowing CommitStamp)
    /// Applies the content's changes to `entries`.
    func apply(to entries: inout StoredEntries)
    /// Whether the engine compacts as soon as the content is committed, so that the snapshot and
    /// the log no longer hold the values it removes: a removal of a key kept out of history (see
    /// ``PreferenceKey/withoutHistory()``), or a reset's or the `prefs` tool's removals, which
    /// know no key's declaration.
    var compactsAtOnce: Bool { get }
}

extension Record {
    var compactsAtOnce: Bool {
        let removesAny = cause == .reset || cause == .tool
        return changes.contains { $0.value == nil && (removesAny || $0.key.keepsNoHistory) }
    }
}

extension EntryChange: LogContent {
    func encode<Sink: ByteSink>(into writer: inout Sink, sequence: UInt64?, stamp: borrowing CommitStamp) {
        let keepsNoHistory = key.keepsNoHistory
        Record.encodeHeader(
            writeIdentifier: nil, subject: nil, sequence: sequence, stamp: stamp, cause: .write,
            keepsNoHistory: keepsNoHistory, count: 1, into: &writer)
        Record.encode(key, value, into: &writer)
    }

    var compactsAtOnce: Bool {
        // The key's flag first: for nearly every write, the one load this takes.
        guard key.keepsNoHistory else { return false }
        if case .none = value {
            return true
        }
        return false
    }

    func apply(to entries: inout StoredEntries) {
        entries.set(value, for: key)
    }
}
