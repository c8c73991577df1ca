/// The store's file: a checksummed header, then one framed record per entry.
///
/// ```
///  0  magic       8 bytes   89 50 52 45 46 0D 0A 1A  ("\x89PREF\r\n\x1A")
///  8  version     UInt16    1
/// 10  reserved    UInt16    0
/// 12  reserved    UInt32    0
/// 16  bodyLength  UInt64    bytes after the header
/// 24  bodyCRC     UInt32    CRC-32C of the body
/// 28  headerCRC   UInt32    CRC-32C of bytes 0..<28
/// 32  body        framed records (see ``RecordFrame``)
/// ```
///
/// A file that verifies as a whole is read in one pass. Any other file is salvaged record by
/// record: each frame carries its own checksum, so damage costs only the records it touches.
enum StoreFile {
    static let magic: [UInt8] = [0x89, 0x50, 0x52, 0x45, 0x46, 0x0D, 0x0A, 0x1A]
    static let currentVersion = 1
    static let headerSize = 32

    /// What a file holds, and how it was damaged if it was.
    struct Contents: Equatable {
        var entries: [StorageKey: StoredValue]
        var damage: DamageReport?
    }

    /// A file written by a newer version of the library, which must not be read or replaced.
    struct UnsupportedVersion: Error, Equatable {
        var version: Int
    }

    static func encode(_ entries: [StorageKey: StoredValue]) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize + entries.count * 64)
        writer.append(contentsOf: [UInt8](repeating: 0, count: headerSize))
        // Sorted, so that the same entries always make the same file.
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
            RecordFrame.append(Record(changes: [EntryChange(key: key, value: value)]), to: &writer)
        }
        var bytes = writer.bytes
        let body = bytes[headerSize...]
        var header = ByteWriter(capacity: headerSize)
        header.append(contentsOf: magic)
        header.append(UInt16(currentVersion))
        header.append(UInt16(0))
        header.append(UInt32(0))
        header.append(UInt64(body.count))
        header.append(CRC32C.checksum(body))
        header.append(CRC32C.checksum(header.bytes))
        bytes.replaceSubrange(0..<headerSize, with: header.bytes)
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(UnsupportedVersion) -> Contents {
        switch try verifyHeader(bytes) {
        case .valid:
            if let entries = readVerifiedBody(bytes) {
                return Contents(entries: entries, damage: nil)
            }
            return salvage(bytes, reason: "a record that verified did not decode", headerIsValid: true)
        case .damaged(let reason, let headerIsValid):
            return salvage(bytes, reason: reason, headerIsValid: headerIsValid)
        }
    }

    private enum HeaderCheck {
        case valid
        case damaged(reason: String, headerIsValid: Bool)
    }

    private static func verifyHeader(_ bytes: [UInt8]) throws(UnsupportedVersion) -> HeaderCheck {
        if bytes.isEmpty {
            return .damaged(reason: "the file is empty", headerIsValid: false)
        }
        guard bytes.count >= headerSize else {
            return .damaged(reason: "the file is shorter than its header", headerIsValid: false)
        }
        guard bytes[0..<magic.count].elementsEqual(magic) else {
            return .damaged(reason: "the file does not begin with the store's signature", headerIsValid: false)
        }
        var reader = ByteReader(bytes, range: magic.count..<headerSize)
        guard let version = try? reader.readUInt16(), (try? reader.readUInt16()) != nil,
            (try? reader.readUInt32()) != nil, let bodyLength = try? reader.readUInt64(),
            let bodyChecksum = try? reader.readUInt32(), let headerChecksum = try? reader.readUInt32(),
            headerChecksum == CRC32C.checksum(bytes[0..<(headerSize - 4)])
        else {
            return .damaged(reason: "the header's checksum does not match", headerIsValid: false)
        }
        // Only a header that verifies is trusted to say the file is from a newer version.
        guard Int(version) <= currentVersion else { throw UnsupportedVersion(version: Int(version)) }
        guard version == currentVersion else {
            return .damaged(reason: "the header names format version \(version)", headerIsValid: false)
        }
        guard bodyLength == UInt64(bytes.count - headerSize) else {
            let actual = bytes.count - headerSize
            return .damaged(
                reason: "the body is \(actual) bytes but the header says \(bodyLength)", headerIsValid: true)
        }
        guard CRC32C.checksum(bytes[headerSize...]) == bodyChecksum else {
            return .damaged(reason: "the body's checksum does not match", headerIsValid: true)
        }
        return .valid
    }

    /// Reads a body whose checksum matched; `nil` if a record still fails to decode.
    private static func readVerifiedBody(_ bytes: [UInt8]) -> [StorageKey: StoredValue]? {
        var entries: [StorageKey: StoredValue] = [:]
        var offset = headerSize
        while offset < bytes.count {
            guard let (record, next) = RecordFrame.record(in: bytes, at: offset, verifyChecksum: false) else {
                return nil
            }
            apply(record, to: &entries)
            offset = next
        }
        return entries
    }

    /// Loads every record that verifies, scanning past damage one byte at a time for the next frame.
    private static func salvage(_ bytes: [UInt8], reason: String, headerIsValid: Bool) -> Contents {
        var entries: [StorageKey: StoredValue] = [:]
        var damaged: [Range<Int>] = []
        var damageStart: Int? = headerIsValid ? nil : 0
        var recovered = 0
        var offset = min(headerSize, bytes.count)
        while offset < bytes.count {
            if let (record, next) = RecordFrame.record(in: bytes, at: offset) {
                if let start = damageStart {
                    damaged.append(start..<offset)
                    damageStart = nil
                }
                apply(record, to: &entries)
                recovered += 1
                offset = next
            } else {
                damageStart = damageStart ?? offset
                offset += 1
            }
        }
        if let start = damageStart, start < bytes.count {
            damaged.append(start..<bytes.count)
        }
        let report = DamageReport(recoveredRecords: recovered, damagedRanges: damaged, reason: reason, copyPath: nil)
        return Contents(entries: entries, damage: report)
    }

    private static func apply(_ record: Record, to entries: inout [StorageKey: StoredValue]) {
        for change in record.changes {
            entries[change.key] = change.value
        }
    }
}
