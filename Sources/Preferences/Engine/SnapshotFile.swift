/// The snapshot: a ``FileHeader``, then one framed record per entry, in increasing order of key.
///
/// A snapshot that verifies as a whole is indexed by its keys, and its entries decoded as they are
/// looked up (``SnapshotIndex``). Any other is salvaged record by record: each frame carries its
/// own checksum, so damage costs only the records it touches.
enum SnapshotFile {
    /// What a snapshot holds, and how it was damaged if it was.
    struct Contents: Equatable {
        var entries: StoredEntries
        /// The compaction that wrote it; the log that goes with it has the same generation.
        var generation: UInt64
        var damage: DamageReport?
    }

    static func encode(_ entries: [ResolvedKey: StoredValue], generation: UInt64) -> [UInt8] {
        var entries = StoredEntries(entries)
        return encode(&entries, generation: generation)
    }

    /// Encodes `entries` sorted by key, so that the same entries always make the same file and
    /// opening can find a key by binary search (``SnapshotIndex``); `entries` keeps the order for
    /// the next snapshot (see ``StoredEntries/forEachInKeyOrder(_:)``).
    ///
    /// The entries are written through a pointer into an array of `expectedSize` bytes, or of twice
    /// as many when they do not fit, then twice again: appending to an array would check its
    /// capacity at every byte. A compaction expects the size of the last snapshot.
    static func encode(_ entries: inout StoredEntries, generation: UInt64, expectedSize: Int = 0) -> [UInt8] {
        var capacity = max(expectedSize + expectedSize / 8, FileHeader.size + entries.countUpperBound * 64)
        var bytes: [UInt8] = []
        while bytes.isEmpty {
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                // Zeros where the header goes, written once the body's checksum is known.
                buffer.prefix(FileHeader.size).initialize(repeating: 0)
                var writer = UnsafeByteWriter(UnsafeMutableRawBufferPointer(buffer), from: FileHeader.size)
                entries.forEachInKeyOrder { key, value in
                    RecordFrame.appendEntry(key, value, to: &writer)
                }
                count = writer.overflowed ? 0 : writer.count
            }
            capacity *= 2
        }
        let body = bytes[FileHeader.size...]
        let header = FileHeader(
            kind: .snapshot,
            generation: generation,
            bodyLength: UInt64(body.count),
            bodyChecksum: CRC32C.checksum(body)
        )
        bytes.replaceSubrange(0..<FileHeader.size, with: header.encoded())
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws(UnsupportedVersion) -> Contents {
        try decode(FileBytes(copying: bytes))
    }

    /// Checks the header and the body's checksum, then indexes the body (``SnapshotIndex``), or
    /// decodes it whole when it is not in the form an index takes, or salvages what verifies.
    static func decode(_ file: FileBytes) throws(UnsupportedVersion) -> Contents {
        switch FileHeader.check(file.copy(of: 0..<min(file.count, FileHeader.size)), expecting: .snapshot) {
        case .newerVersion(let version):
            throw UnsupportedVersion(version: version, supported: FileHeader.Kind.snapshot.currentVersion)
        case .damaged(let reason):
            return salvage(file.array, reason: reason, generation: 0, headerIsValid: false)
        case .valid(let header):
            let actual = file.count - FileHeader.size
            guard header.bodyLength == UInt64(actual) else {
                let reason = "the body is \(actual) bytes but the header says \(header.bodyLength)"
                return salvage(file.array, reason: reason, generation: header.generation, headerIsValid: true)
            }
            let body = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(file.buffer)[FileHeader.size...])
            guard CRC32C.checksum(body) == header.bodyChecksum else {
                let reason = "the body's checksum does not match"
                return salvage(file.array, reason: reason, generation: header.generation, headerIsValid: true)
            }
            if let index = SnapshotIndex(verified: file, from: FileHeader.size) {
                return Contents(entries: StoredEntries(snapshot: index), generation: header.generation, damage: nil)
            }
            let bytes = file.array
            guard let entries = readVerifiedBody(bytes) else {
                let reason = "a record that verified did not decode"
                return salvage(bytes, reason: reason, generation: header.generation, headerIsValid: true)
            }
            return Contents(entries: StoredEntries(entries), generation: header.generation, damage: nil)
        }
    }

    /// Reads a body whose checksum matched, but not in the form an index takes (a file whose keys
    /// are out of order, say); `nil` if a record still fails to decode.
    private static func readVerifiedBody(_ bytes: [UInt8]) -> [ResolvedKey: StoredValue]? {
        var entries: [ResolvedKey: StoredValue] = [:]
        var offset = FileHeader.size
        while offset < bytes.count {
            guard let payload = RecordFrame.payload(in: bytes, at: offset, verifyChecksum: false) else { return nil }
            var reader = ByteReader(bytes, range: payload)
            do {
                try Record.apply(payload: &reader, to: &entries)
            } catch {
                return nil
            }
            offset = payload.upperBound
        }
        return entries
    }

    /// Loads every record that verifies, scanning past damage for the next frame.
    private static func salvage(_ bytes: [UInt8], reason: String, generation: UInt64, headerIsValid: Bool) -> Contents {
        var entries: [ResolvedKey: StoredValue] = [:]
        let scan = RecordFrame.scan(bytes, from: FileHeader.size, headerIsDamaged: !headerIsValid) { record in
            record.apply(to: &entries)
        }
        let report = DamageReport(
            recoveredRecords: scan.recovered,
            damagedRanges: scan.damagedRanges,
            reason: reason,
            copyPath: nil
        )
        return Contents(entries: StoredEntries(entries), generation: generation, damage: report)
    }
}
