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

    /// Appends `record` to `writer`, framed.
    static func append(_ record: Record, to writer: inout ByteWriter) {
        let start = writer.bytes.count
        writer.append(UInt32(0))
        writer.append(UInt32(0))
        writer.append(UInt32(0))
        record.encode(into: &writer)
        let payload = (start + headerSize)..<writer.bytes.count
        let length = UInt32(payload.count)
        writer.overwrite(length, at: start)
        writer.overwrite(~length, at: start + 4)
        writer.overwrite(CRC32C.checksum(writer.bytes[payload]), at: start + 8)
    }

    /// The record framed at `offset`, with the offset just past it, if the frame verifies and its
    /// payload decodes; `nil` otherwise.
    static func record(in bytes: [UInt8], at offset: Int, verifyChecksum: Bool = true) -> (Record, next: Int)? {
        guard offset >= 0, bytes.count - offset >= headerSize else { return nil }
        var header = ByteReader(bytes, range: offset..<(offset + headerSize))
        guard let length = try? header.readUInt32(), let complement = try? header.readUInt32(),
            let checksum = try? header.readUInt32(), complement == ~length, length > 0,
            Int(length) <= bytes.count - offset - headerSize
        else { return nil }
        let payload = (offset + headerSize)..<(offset + headerSize + Int(length))
        if verifyChecksum && CRC32C.checksum(bytes[payload]) != checksum {
            return nil
        }
        var reader = ByteReader(bytes, range: payload)
        guard let record = try? Record(payload: &reader) else { return nil }
        return (record, payload.upperBound)
    }
}
