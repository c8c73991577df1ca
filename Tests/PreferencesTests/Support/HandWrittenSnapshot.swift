@testable import Preferences

/// Snapshot files put together byte by byte, for tests of what the library's own writer never
/// writes: records out of order, values no decoder reads, tables that place records wrongly.
enum HandWrittenSnapshot {
    /// A snapshot of `generation` whose body is `frames`, with a header that matches it: with no
    /// table (format 1), or with a table of where each frame starts, in the order they lie.
    static func file(frames: [UInt8], generation: UInt64 = 1, layout: SnapshotLayout = .formatOne) -> [UInt8] {
        var body = ByteWriter()
        body.skip(FileHeader.size)
        body.append(contentsOf: frames)
        var tableOffset = 0
        if layout == .table {
            var offsets: [UInt32] = []
            var offset = 0
            while let (payload, _) = frames.withUnsafeBufferPointer({ RecordFrame.payload(in: $0, at: offset) }) {
                offsets.append(UInt32(FileHeader.size + offset))
                offset = payload.upperBound
            }
            tableOffset = body.count
            SnapshotTable.append(offsets: offsets, keysAreASCII: true, to: &body)
        }
        return sealed(
            Array(body.bytes[FileHeader.size...]), generation: generation, layout: layout, tableOffset: tableOffset)
    }

    /// `body` after a header that matches it, in `layout`'s format, placing the table at `tableOffset`.
    static func sealed(_ body: [UInt8], generation: UInt64, layout: SnapshotLayout, tableOffset: Int) -> [UInt8] {
        let header = FileHeader(
            kind: .snapshot,
            version: layout == .table ? 2 : 1,
            generation: generation,
            bodyLength: UInt64(body.count),
            bodyChecksum: CRC32C.checksum(body[...]),
            tableOffset: UInt32(tableOffset)
        )
        return header.encoded() + body
    }

    /// `payload`, framed as ``RecordFrame`` frames a record, checksum included.
    static func frame(payload: [UInt8]) -> [UInt8] {
        var writer = ByteWriter()
        writer.append(UInt32(payload.count))
        writer.append(~UInt32(payload.count))
        writer.append(CRC32C.checksum(payload[...]))
        return writer.bytes + payload
    }

    /// `records`, each framed as the library frames it.
    static func frames(_ records: [Record]) -> [UInt8] {
        var writer = ByteWriter()
        for record in records {
            RecordFrame.append(record, to: &writer)
        }
        return writer.bytes
    }

    /// The payload of a record that sets the key `namespace`, `name`, as far as its value: no
    /// flags, one change, a set, and the key.
    static func payloadSetting(namespace: String, name: String) -> ByteWriter {
        var payload = ByteWriter()
        payload.append(UInt8(0))  // flags
        payload.appendVarint(1)  // one change
        payload.append(UInt8(1))  // set
        payload.appendLengthPrefixed(namespace)
        payload.appendLengthPrefixed(name)
        return payload
    }
}

/// The two forms of snapshot opening reads: with a table of where each record starts (format 2,
/// what the library writes), and without (format 1, what it wrote before).
enum SnapshotLayout: CaseIterable, Sendable {
    case table
    case formatOne

    /// A snapshot the library wrote, in this layout.
    func bytes(of written: [UInt8]) -> [UInt8] {
        guard self == .formatOne, let header = SnapshotLayout.header(of: written), header.tableOffset != 0 else {
            return written
        }
        let body = Array(written[FileHeader.size..<Int(header.tableOffset)])
        return HandWrittenSnapshot.sealed(body, generation: header.generation, layout: .formatOne, tableOffset: 0)
    }

    /// The index opening makes of `bytes`: through the table the header places, or by reading each
    /// record when it places none.
    static func index(of bytes: [UInt8]) -> SnapshotIndex? {
        guard let header = header(of: bytes) else { return nil }
        let file = FileBytes(copying: bytes)
        return header.tableOffset == 0
            ? SnapshotIndex(verified: file, from: FileHeader.size)
            : SnapshotIndex(verified: file, recordsFrom: FileHeader.size, tableAt: Int(header.tableOffset))
    }

    /// The header of a snapshot, if it verifies.
    static func header(of bytes: [UInt8]) -> FileHeader? {
        guard case .valid(let header) = FileHeader.check(Array(bytes.prefix(FileHeader.size)), expecting: .snapshot)
        else { return nil }
        return header
    }
}
