@testable import Preferences

/// Snapshot files put together byte by byte, for tests of what the library's own writer never
/// writes: records out of order, values no decoder reads.
enum HandWrittenSnapshot {
    /// A snapshot of `generation` whose body is `frames`, with a header that matches it.
    static func file(frames: [UInt8], generation: UInt64 = 1) -> [UInt8] {
        let header = FileHeader(
            kind: .snapshot,
            generation: generation,
            bodyLength: UInt64(frames.count),
            bodyChecksum: CRC32C.checksum(frames[...])
        )
        return header.encoded() + frames
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
