import CPreferencesAtomics

/// The frame around each record: its length, the length's complement, and a CRC-32C of the payload.
///
/// ```
/// length: UInt32 LE | ~length: UInt32 LE | crc32c(payload): UInt32 LE | payload
/// ```
///
/// The complement lets a reader reject a damaged or random length in a few nanoseconds, before
/// checksumming anything; that keeps a scan for the next good frame in damaged bytes linear.
enum RecordFrame {
    static let headerSize = 12

    // Each kind of payload is written between `begin` and `end`, not by a closure: a closure
    // capturing the record would copy it and destroy it again on every write.

    /// Appends `record` to `writer`, framed, with its own number and stamp.
    static func append(_ record: Record, to writer: inout some FrameSink) {
        append(record, numbered: record.sequence, stamp: record.stamp, to: &writer)
    }

    /// Appends `content` to `writer`, framed, as a record numbered `sequence` in its log and
    /// stamped with `stamp` (see ``Record/encode(into:sequence:stamp:)``).
    static func append(
        _ content: some LogContent,
        numbered sequence: UInt64?,
        stamp: borrowing CommitStamp,
        to writer: inout some FrameSink
    ) {
        let start = begin(&writer)
        content.encode(into: &writer, sequence: sequence, stamp: stamp)
        end(&writer, from: start)
    }

    /// Appends `content` to `writer`, framed, its header written last, after a release fence, and
    /// only if the whole payload fit: how a record is encoded straight into memory other processes
    /// map (``LogMapping/appendInPlace(_:numbered:at:)``), where a header makes a record.
    ///
    /// - Returns: `false`, with the header's bytes left as they were, if the payload did not fit.
    static func appendHeaderLast(
        _ content: some LogContent,
        numbered sequence: UInt64?,
        stamp: borrowing CommitStamp,
        to writer: inout UnsafeByteWriter
    ) -> Bool {
        let start = begin(&writer)
        content.encode(into: &writer, sequence: sequence, stamp: stamp)
        guard !writer.overflowed else { return false }
        preferences_fence_release()
        end(&writer, from: start)
        return true
    }

    /// Appends the record of one snapshot entry to `writer`, framed (see ``Record/encodeEntry(_:_:into:)``).
    static func appendEntry(_ key: ResolvedKey, _ value: StoredValue, to writer: inout some FrameSink) {
        let start = begin(&writer)
        Record.encodeEntry(key, value, into: &writer)
        end(&writer, from: start)
    }

    /// Appends a frame around whatever `body` writes: how the history file frames its entries.
    static func appendFrame<Sink: FrameSink>(to writer: inout Sink, _ body: (inout Sink) -> Void) {
        let start = begin(&writer)
        body(&writer)
        end(&writer, from: start)
    }

    /// Leaves room for a frame's header; returns where the frame starts.
    private static func begin(_ writer: inout some FrameSink) -> Int {
        let start = writer.count
        writer.skip(headerSize)
        return start
    }

    /// Writes the header of the frame that starts at `start`, around what was written since.
    private static func end(_ writer: inout some FrameSink, from start: Int) {
        // A writer that ran out of room may not even hold the header; its caller starts again.
        guard writer.count >= start + headerSize else { return }
        let length = UInt32(writer.count - start - headerSize)
        writer.overwrite(length, at: start)
        writer.overwrite(~length, at: start + 4)
        writer.overwrite(writer.checksum(from: start + headerSize), at: start + 8)
    }

    /// The room a commit's record is first encoded in, on the stack: most records fit.
    private static let smallFrameSize = 512

    /// Gives `body` the bytes of `content` framed, as a record numbered `sequence` in its log and
    /// stamped with `stamp`.
    ///
    /// How a commit encodes its record: written through a pointer into memory on the stack, where
    /// appending to an array would check its uniqueness and capacity at every byte. A record too large
    /// for ``smallFrameSize`` is counted, then written into memory of its size.
    static func withFrame<Content: LogContent, Result, Failure: Error>(
        of content: Content,
        numbered sequence: UInt64?,
        stamp: borrowing CommitStamp,
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        if let small = withFrame(of: content, numbered: sequence, stamp: stamp, inBytes: smallFrameSize, body) {
            return try small.get()
        }
        var counter = ByteCounter()
        content.encode(into: &counter, sequence: sequence, stamp: stamp)
        guard
            let large = withFrame(
                of: content, numbered: sequence, stamp: stamp, inBytes: headerSize + counter.count, body)
        else {
            preconditionFailure("a record's count and its encoding disagree")
        }
        return try large.get()
    }

    /// What `body` made of `content` framed in `byteCount` bytes of temporary memory (the stack's,
    /// when small); `nil`, with `body` not called, if the frame does not fit.
    private static func withFrame<Content: LogContent, Result, Failure: Error>(
        of content: Content,
        numbered sequence: UInt64?,
        stamp: borrowing CommitStamp,
        inBytes byteCount: Int,
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) -> Swift.Result<Result, Failure>? {
        withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 8) { buffer in
            var writer = UnsafeByteWriter(buffer)
            append(content, numbered: sequence, stamp: stamp, to: &writer)
            guard !writer.overflowed else { return nil }
            return Swift.Result { () throws(Failure) -> Result in try body(writer.written) }
        }
    }

    /// The record framed at `offset`, with the offset just past it, if the frame verifies and its
    /// payload decodes; `nil` otherwise.
    static func record(in bytes: [UInt8], at offset: Int) -> (Record, next: Int)? {
        guard let payload = payload(in: bytes, at: offset, verifyChecksum: true) else { return nil }
        var reader = ByteReader(bytes, range: payload)
        guard let record = try? Record(payload: &reader) else { return nil }
        return (record, payload.upperBound)
    }

    /// Where the payload framed at `offset` lies, if the frame's lengths agree and fit, and (when
    /// asked) its checksum matches; `nil` otherwise.
    static func payload(in bytes: [UInt8], at offset: Int, verifyChecksum: Bool) -> Range<Int>? {
        guard let (payload, checksum) = bytes.withUnsafeBufferPointer({ Self.payload(in: $0, at: offset) }) else {
            return nil
        }
        if verifyChecksum && CRC32C.checksum(bytes[payload]) != checksum {
            return nil
        }
        return payload
    }

    /// Where the payload framed at `offset` in `buffer` lies, and the checksum its header gives
    /// it, if the frame's lengths agree and fit; `nil` otherwise.
    static func payload(
        in buffer: UnsafeBufferPointer<UInt8>,
        at offset: Int
    ) -> (payload: Range<Int>, checksum: UInt32)? {
        guard offset >= 0, buffer.count - offset >= headerSize, let base = buffer.baseAddress else { return nil }
        let header = UnsafeRawPointer(base + offset)
        let length = UInt32(littleEndian: header.loadUnaligned(as: UInt32.self))
        let complement = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        // `Int(exactly:)`: a length of 2³¹ or more does not fit a 32-bit `Int` (watchOS), nor a buffer.
        guard complement == ~length, length > 0, let length = Int(exactly: length),
            length <= buffer.count - offset - headerSize
        else { return nil }
        let checksum = UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
        return ((offset + headerSize)..<(offset + headerSize + length), checksum)
    }

    /// Whether the bytes from `offset` to the end are a record cut short: what a writer killed while
    /// appending leaves, rather than a record damaged after it was written.
    ///
    /// A `pwrite` puts the frame's header first, so a cut leaves either less than a header, or a
    /// header that verifies and promises more bytes than there are. A copy into a mapping of the log
    /// puts the header in last (``LogMapping/append(_:at:)``), so a cut leaves a header of zeros.
    /// Bytes that are all zeros are a write whose data never reached the disk (a power loss) or
    /// space allocated ahead of one.
    static func isCutShort(_ bytes: [UInt8], at offset: Int) -> Bool {
        let remaining = bytes.count - offset
        if remaining < headerSize || bytes[offset..<(offset + headerSize)].allSatisfy({ $0 == 0 }) {
            return true
        }
        var header = ByteReader(bytes, range: offset..<(offset + 8))
        guard let length = try? header.readUInt32(), let complement = try? header.readUInt32(), complement == ~length
        else { return false }
        return Int(exactly: length).map { $0 > remaining - headerSize } ?? true
    }

    /// The offset of the first record that verifies after `offset`, if there is one.
    static func nextRecord(in bytes: [UInt8], after offset: Int) -> Int? {
        var candidate = offset + 1
        while candidate + headerSize <= bytes.count {
            if record(in: bytes, at: candidate) != nil { return candidate }
            candidate += 1
        }
        return nil
    }

    /// What a scan through damaged bytes found.
    struct Scan {
        var recovered = 0
        var damagedRanges: [Range<Int>] = []
    }

    /// Passes every record that verifies from `offset` on, up to `end` or the end of `bytes`, to
    /// `found`.
    ///
    /// Steps one byte at a time past bytes that do not verify; the complement in each frame keeps
    /// that linear.
    static func scan(
        _ bytes: [UInt8],
        from offset: Int,
        to end: Int? = nil,
        headerIsDamaged: Bool,
        _ found: (Record) -> Void
    ) -> Scan {
        let end = min(end ?? bytes.count, bytes.count)
        var scan = Scan()
        var damageStart: Int? = headerIsDamaged ? 0 : nil
        var position = offset
        while position < end {
            if let (record, next) = record(in: bytes, at: position), next <= end {
                if let start = damageStart {
                    scan.damagedRanges.append(start..<position)
                    damageStart = nil
                }
                found(record)
                scan.recovered += 1
                position = next
            } else {
                damageStart = damageStart ?? position
                position += 1
            }
        }
        if let start = damageStart, start < end {
            scan.damagedRanges.append(start..<end)
        }
        return scan
    }
}
