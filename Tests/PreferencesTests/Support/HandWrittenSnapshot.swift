@testable import Preferences

/// Snapshot files put together byte by byte, for tests of what the library's own writer never
/// writes: records out of order, values no decoder reads, tables that place records wrongly.
enum HandWrittenSnapshot {
    /// A snapshot of `generation` whose body is `frames`, with a header that matches it: with no
    /// table (format 1), or with a table of where each frame starts, in the order they lie, that
    /// says whether every key is ASCII as `keysAreASCII` does.
    static func file(
        frames: [UInt8], generation: UInt64 = 1, layout: SnapshotLayout = .formatOne, keysAreASCII: Bool = true
    ) -> [UInt8] {
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
            SnapshotTable.append(offsets: offsets, keysAreASCII: keysAreASCII, to: &body)
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
