/// The 40-byte header at the start of a snapshot, a log, a history file and a device's file of
/// synced changes (``SyncFile``).
///
/// ```
///  0  magic       8 bytes   89 50 52 45 46 0D 0A 1A  ("\x89PREF\r\n\x1A")
///  8  version     UInt16    the kind's format version (``Kind/currentVersion``)
/// 10  kind        UInt16    0 snapshot, 1 log, 2 history, 3 a device's file of synced changes
/// 12  table       UInt32    where a snapshot's table of records starts (format 2); 0 in other files
/// 16  generation  UInt64    the compaction that wrote the snapshot or started the log
/// 24  bodyLength  UInt64    bytes after the header (0 in a log, which grows)
/// 32  bodyCRC     UInt32    CRC-32C of the body (0 in a log; each record has its own)
/// 36  headerCRC   UInt32    CRC-32C of bytes 0..<36
/// ```
struct FileHeader: Equatable {
    init(
        kind: Kind, version: Int? = nil, generation: UInt64, bodyLength: UInt64 = 0, bodyChecksum: UInt32 = 0,
        tableOffset: UInt32 = 0
    ) {
        self.kind = kind
        self.version = version ?? kind.currentVersion
        self.generation = generation
        self.bodyLength = bodyLength
        self.bodyChecksum = bodyChecksum
        self.tableOffset = tableOffset
    }

    enum Kind: UInt16 {
        case snapshot = 0
        case log = 1
        case history = 2
        case syncChanges = 3

        /// The format version of this kind of file that the library writes.
        ///
        /// A log's is 3: its records may carry a stamp, a cause and changes kept out of history
        /// (see ``Record``). Version 2 had none of them, and version 1, which no release wrote, no
        /// lock stamp after the header (see ``LogFile``). A snapshot's is 2: its records end with a
        /// table of where each starts (``SnapshotTable``), which version 1 had not.
        var currentVersion: Int {
            switch self {
            case .snapshot: 2
            case .log: 3
            case .history: 1
            case .syncChanges: 1
            }
        }

        /// The oldest format version of this kind of file that the library reads.
        var oldestReadableVersion: Int {
            switch self {
            case .log: 2
            case .snapshot: 1
            case .history, .syncChanges: currentVersion
            }
        }
    }

    static let magic: [UInt8] = [0x89, 0x50, 0x52, 0x45, 0x46, 0x0D, 0x0A, 0x1A]
    static let size = 40

    var kind: Kind
    /// The format version the file was written in: the kind's current one for a header to write.
    var version: Int
    var generation: UInt64
    var bodyLength: UInt64 = 0
    var bodyChecksum: UInt32 = 0
    /// Where a snapshot's table of records starts, from the start of the file; 0 when it has none.
    var tableOffset: UInt32 = 0

    func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.append(contentsOf: Self.magic)
        writer.append(UInt16(version))
        writer.append(kind.rawValue)
        writer.append(tableOffset)
        writer.append(generation)
        writer.append(bodyLength)
        writer.append(bodyChecksum)
        writer.append(CRC32C.checksum(writer.bytes))
        return writer.bytes
    }

    enum Check: Equatable {
        case valid(FileHeader)
        /// Why the header does not verify, in words for a damage report.
        case damaged(String)
        /// A header that verifies but was written by a newer version of the library.
        case newerVersion(Int)
    }

    static func check(_ bytes: [UInt8], expecting kind: Kind) -> Check {
        if bytes.isEmpty {
            return .damaged("the file is empty")
        }
        guard bytes.count >= size else {
            return .damaged("the file is shorter than its header")
        }
        guard bytes[0..<magic.count].elementsEqual(magic) else {
            return .damaged("the file does not begin with the store's signature")
        }
        var reader = ByteReader(bytes, range: magic.count..<size)
        guard let version = try? reader.readUInt16(), let rawKind = try? reader.readUInt16(),
            let tableOffset = try? reader.readUInt32(), let generation = try? reader.readUInt64(),
            let bodyLength = try? reader.readUInt64(), let bodyChecksum = try? reader.readUInt32(),
            let headerChecksum = try? reader.readUInt32(), headerChecksum == CRC32C.checksum(bytes[0..<(size - 4)])
        else {
            return .damaged("the header's checksum does not match")
        }
        // Only a header that verifies is trusted to say the file is from a newer version.
        guard Int(version) <= kind.currentVersion else { return .newerVersion(Int(version)) }
        guard Int(version) >= kind.oldestReadableVersion else {
            return .damaged("the header names format version \(version)")
        }
        guard rawKind == kind.rawValue else { return .damaged("the header names another kind of file (\(rawKind))") }
        return .valid(
            FileHeader(
                kind: kind, version: Int(version), generation: generation, bodyLength: bodyLength,
                bodyChecksum: bodyChecksum, tableOffset: tableOffset))
    }
}

/// A file written by a newer version of the library, which must not be read or replaced.
struct UnsupportedVersion: Error, Equatable {
    var version: Int
    /// The version of that kind of file this library reads.
    var supported: Int
}
