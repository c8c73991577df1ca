/// The history file: the log's records that compactions moved out of the log, for the store's
/// history (``PreferencesStore/history(for:)``).
///
/// For a store at `P`, the file `P.history`:
///
/// ```
///  0  header   40 bytes  a ``FileHeader`` of kind history; bodyLength: where the last whole append
///                        ends; generation: that of the last log appended
/// 40  frames             framed (``RecordFrame``): a marker naming the generation of the log the
///                        records after it were committed to, then those records' frames as the log
///                        held them; then the next marker, and so on
/// ```
///
/// A marker's payload is 16 bytes: `89 48 49 53 54 00 00 00`, then the generation as a `UInt64`,
/// little-endian. No record is 16 bytes and begins so: flags `0x89` say a write identifier comes
/// first, and a length of `0x48` (72) does not fit.
///
/// Compaction appends a marker and the log's frames, copied as they are, then writes the header's
/// new body length: bytes past the length the header gives are an append a crash cut short, whose
/// records the log still holds, and are written over. The header is written in place, after the
/// frames it counts.
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
        /// The record's payload.
        var record: Range<Int>
    }

    /// What a marker's payload begins with.
    private static let markerPrefix: [UInt8] = [0x89, 0x48, 0x49, 0x53, 0x54, 0, 0, 0]
    private static let markerSize = 16

    /// What a history file holds, and how it was damaged if it was.
    struct Contents {
        var bytes: [UInt8]
        var entries: [Entry]
        var damage: DamageReport?
    }

    /// The header of a history file whose frames end `bodyLength` bytes after it, the last of
    /// them from the log of `generation`.
    static func header(bodyLength: Int, generation: UInt64 = 0) -> [UInt8] {
        FileHeader(kind: .history, generation: generation, bodyLength: UInt64(bodyLength)).encoded()
    }

    /// Appends a marker: the frames after it are records of the log of `generation`.
    static func appendMarker(generation: UInt64, to writer: inout some FrameSink) {
        RecordFrame.appendFrame(to: &writer) { writer in
            markerPrefix.withUnsafeBytes { writer.append($0) }
            writer.append(generation)
        }
    }

    /// The generation a marker names, if the payload at `payload` is one.
    private static func generation(ofMarkerAt payload: Range<Int>, in bytes: [UInt8]) -> UInt64? {
        guard payload.count == markerSize, bytes[payload.prefix(markerPrefix.count)].elementsEqual(markerPrefix)
        else { return nil }
        var reader = ByteReader(bytes, range: (payload.lowerBound + markerPrefix.count)..<payload.upperBound)
        return try? reader.readUInt64()
    }

    /// Where the frames of a file whose header reads `header` end, and the generation of the last
    /// log appended, if the header verifies.
    static func bodyEnd(ofHeader header: [UInt8]) throws(UnsupportedVersion) -> (end: Int?, generation: UInt64?) {
        switch FileHeader.check(header, expecting: .history) {
        case .valid(let header): return (FileHeader.size + Int(clamping: header.bodyLength), header.generation)
        case .damaged: return (nil, nil)
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
        // Records before any marker (only damage can leave them so) are of no known log.
        var generation: UInt64 = 0
        while position < end {
            if let payload = RecordFrame.payload(in: bytes, at: position, verifyChecksum: true),
                payload.upperBound <= end
            {
                if let start = damageStart {
                    damaged.append(start..<position)
                    damageStart = nil
                }
                if let marked = Self.generation(ofMarkerAt: payload, in: bytes) {
                    generation = marked
                } else {
                    entries.append(Entry(generation: generation, frame: position..<payload.upperBound, record: payload))
                }
                position = payload.upperBound
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

}
