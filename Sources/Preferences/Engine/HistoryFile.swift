/// The history file: the log's records that compactions moved out of the log, for the store's
/// history (``PreferencesStore/history(for:)``).
///
/// For a store at `P`, the file `P.history`:
///
/// ```
///  0  header   40 bytes  a ``FileHeader`` of kind history; bodyLength: where the last whole append ends
/// 40  entries            one frame (``RecordFrame``) per record: generation: varint, then the record's
///                        payload as the log held it
/// ```
///
/// Compaction appends the log's records, then writes the header's new body length: bytes past the
/// length the header gives are an append a crash cut short, whose records the log still holds,
/// and are written over. The header is written in place, after the entries it counts.
///
/// The same record may be in the file twice: a compaction that appended it and then failed leaves
/// it in the log, and the next compaction appends it again. A record is known by its log's
/// generation and its number in that log; readers keep one of each.
enum HistoryFile {
    /// Where a record lies in the file, and the generation of the log it was committed to.
    struct Entry {
        var generation: UInt64
        /// The whole frame.
        var frame: Range<Int>
        /// The record's payload, after the generation.
        var record: Range<Int>
    }

    /// What a history file holds, and how it was damaged if it was.
    struct Contents {
        var bytes: [UInt8]
        var entries: [Entry]
        var damage: DamageReport?
    }

    /// The header of a history file whose entries end `bodyLength` bytes after it.
    static func header(bodyLength: Int) -> [UInt8] {
        FileHeader(kind: .history, generation: 0, bodyLength: UInt64(bodyLength)).encoded()
    }

    /// Appends one entry, framed: a record of the log of `generation`, its payload as the log held it.
    static func appendEntry(generation: UInt64, payload: ArraySlice<UInt8>, to writer: inout ByteWriter) {
        RecordFrame.appendFrame(to: &writer) { writer in
            writer.appendVarint(Int(generation))
            writer.append(contentsOf: payload)
        }
    }

    /// Where the entries of a file whose header reads `header` end, if it verifies.
    static func bodyEnd(ofHeader header: [UInt8]) throws(UnsupportedVersion) -> Int? {
        switch FileHeader.check(header, expecting: .history) {
        case .valid(let header): return FileHeader.size + Int(clamping: header.bodyLength)
        case .damaged: return nil
        case .newerVersion(let version):
            throw UnsupportedVersion(version: version, supported: FileHeader.Kind.history.currentVersion)
        }
    }

    /// Finds every entry that verifies, and reports the bytes that do not.
    ///
    /// Entries that do not verify are skipped, a byte at a time, to the next that does; bytes past
    /// the body length the header gives are an append cut short, not damage.
    static func read(_ bytes: [UInt8]) throws(UnsupportedVersion) -> Contents {
        let headerBytes = Array(bytes.prefix(FileHeader.size))
        var reason: String?
        var end = bytes.count
        switch FileHeader.check(headerBytes, expecting: .history) {
        case .newerVersion(let version):
            throw UnsupportedVersion(version: version, supported: FileHeader.Kind.history.currentVersion)
        case .damaged(let why):
            reason = why
        case .valid(let header):
            let length = Int(clamping: header.bodyLength)
            if length > bytes.count - FileHeader.size {
                reason = "the file is \(bytes.count) bytes but its header counts \(FileHeader.size + length)"
            } else {
                end = FileHeader.size + length
            }
        }
        var entries: [Entry] = []
        var damaged: [Range<Int>] = []
        var damageStart: Int? = reason == nil ? nil : 0
        var position = min(FileHeader.size, bytes.count)
        while position < end {
            if let entry = entry(in: bytes, at: position, before: end) {
                if let start = damageStart {
                    damaged.append(start..<position)
                    damageStart = nil
                }
                entries.append(entry)
                position = entry.frame.upperBound
            } else {
                damageStart = damageStart ?? position
                position += 1
            }
        }
        if let start = damageStart, start < end {
            damaged.append(start..<end)
        }
        guard reason != nil || !damaged.isEmpty else { return Contents(bytes: bytes, entries: entries) }
        let damage = DamageReport(
            recoveredRecords: entries.count,
            damagedRanges: damaged,
            reason: reason ?? "the history has bytes that do not verify",
            copyPath: nil
        )
        return Contents(bytes: bytes, entries: entries, damage: damage)
    }

    /// The entry framed at `offset`, if its frame verifies within `end` and holds a generation.
    private static func entry(in bytes: [UInt8], at offset: Int, before end: Int) -> Entry? {
        guard let payload = RecordFrame.payload(in: bytes, at: offset, verifyChecksum: true),
            payload.upperBound <= end
        else { return nil }
        var reader = ByteReader(bytes, range: payload)
        guard let generation = try? reader.readVarint(), !reader.isAtEnd else { return nil }
        return Entry(
            generation: UInt64(generation), frame: offset..<payload.upperBound,
            record: reader.position..<payload.upperBound)
    }
}
