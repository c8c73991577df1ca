/// The snapshot: a ``FileHeader``, one framed record per entry in increasing order of key, then,
/// framed too, the table of where each record starts (``SnapshotTable``), which the header locates.
///
/// A snapshot that verifies as a whole is indexed by its table, and its entries decoded as they
/// are looked up (``SnapshotIndex``). Any other is salvaged record by record: each frame carries
/// its own checksum, so damage costs only the records it touches. A snapshot in format 1, which
/// has no table, is indexed by reading each record.
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
    /// opening can find a key by binary search over the table (``SnapshotIndex``); `entries` keeps
    /// the order for the next snapshot (see ``StoredEntries/forEachInKeyOrder(_:)``).
    ///
    /// The entries are written through a pointer into an array of `expectedSize` bytes, or of twice
    /// as many when they do not fit, then twice again: appending to an array would check its
    /// capacity at every byte. A compaction expects the size of the last snapshot.
    static func encode(_ entries: inout StoredEntries, generation: UInt64, expectedSize: Int = 0) -> [UInt8] {
        var capacity = max(expectedSize + expectedSize / 8, FileHeader.size + entries.countUpperBound * 68 + 32)
        var bytes: [UInt8] = []
        var offsets: [UInt32] = []
        offsets.reserveCapacity(entries.countUpperBound)
        var tableOffset = 0
        while bytes.isEmpty {
            offsets.removeAll(keepingCapacity: true)
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                // Zeros where the header goes, written once the body's checksum is known.
                buffer.prefix(FileHeader.size).initialize(repeating: 0)
                var writer = UnsafeByteWriter(UnsafeMutableRawBufferPointer(buffer), from: FileHeader.size)
                var keysAreASCII = true
                entries.forEachInKeyOrder { key, value in
                    let start = writer.count
                    offsets.append(UInt32(truncatingIfNeeded: start))
                    RecordFrame.appendEntry(key, value, to: &writer)
                    if keysAreASCII && !writer.overflowed {
                        keysAreASCII =
                            isPlainASCII(writer.written, payload: (start + RecordFrame.headerSize)..<writer.count)
                            || isASCII(key)
                    }
                }
                tableOffset = writer.count
                SnapshotTable.append(offsets: offsets, keysAreASCII: keysAreASCII, to: &writer)
                count = writer.overflowed ? 0 : writer.count
            }
            capacity *= 2
        }
        var version = FileHeader.Kind.snapshot.currentVersion
        if bytes.count > UInt32.max {
            // Offsets past 4 GiB do not fit the table's 32 bits: format 1, which has no table.
            bytes.removeSubrange(tableOffset...)
            (version, tableOffset) = (1, 0)
        }
        let body = bytes[FileHeader.size...]
        let header = FileHeader(
            kind: .snapshot,
            version: version,
            generation: generation,
            bodyLength: UInt64(body.count),
            bodyChecksum: CRC32C.checksum(body),
            tableOffset: UInt32(tableOffset)
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
            return salvage(file.array, reason: reason, header: nil)
        case .valid(let header):
            let actual = file.count - FileHeader.size
            guard header.bodyLength == UInt64(actual) else {
                let reason = "the body is \(actual) bytes but the header says \(header.bodyLength)"
                return salvage(file.array, reason: reason, header: header)
            }
            let body = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(file.buffer)[FileHeader.size...])
            guard CRC32C.checksum(body) == header.bodyChecksum else {
                let reason = "the body's checksum does not match"
                return salvage(file.array, reason: reason, header: header)
            }
            guard let tableOffset = tableOffset(of: file.buffer, header: header) else {
                let index = SnapshotIndex(verified: file, from: FileHeader.size)
                return contents(of: file, index: index, header: header)
            }
            guard let index = SnapshotIndex(verified: file, recordsFrom: FileHeader.size, tableAt: tableOffset) else {
                let reason = "the header places the snapshot's table where no table ends the file"
                return salvage(file.array, reason: reason, header: header)
            }
            return Contents(entries: StoredEntries(snapshot: index), generation: header.generation, damage: nil)
        }
    }

    /// Where the header places the snapshot's table (format 2), if it places one; `nil` for a
    /// snapshot without one, or for an offset no `Int` holds, which no table of a readable file has.
    private static func tableOffset(of buffer: UnsafeBufferPointer<UInt8>, header: FileHeader) -> Int? {
        guard header.version >= 2, header.tableOffset != 0 else { return nil }
        return Int(exactly: header.tableOffset) ?? buffer.count
    }

    /// What a snapshot without a table holds: its records, indexed as they lie when they can be,
    /// decoded whole when not, salvaged when a record that verified does not decode.
    private static func contents(of file: FileBytes, index: SnapshotIndex?, header: FileHeader) -> Contents {
        if let index {
            return Contents(entries: StoredEntries(snapshot: index), generation: header.generation, damage: nil)
        }
        let bytes = file.array
        guard let entries = readVerifiedBody(bytes) else {
            let reason = "a record that verified did not decode"
            return salvage(bytes, reason: reason, header: header)
        }
        return Contents(entries: StoredEntries(entries), generation: header.generation, damage: nil)
    }

    /// Where the records of `bytes` end: where the header places the table, when a table is there,
    /// or, with no header to trust, where a table that verifies ends the file; the end of the file
    /// otherwise.
    private static func recordsEnd(of bytes: [UInt8], header: FileHeader?) -> Int {
        guard let header else { return SnapshotTable.verifiedStart(atEndOf: bytes) ?? bytes.count }
        // Only where a table's frame ends the file: an offset between two records would leave the
        // records after it unread.
        return bytes.withUnsafeBufferPointer { buffer in
            guard let offset = tableOffset(of: buffer, header: header), offset >= FileHeader.size,
                SnapshotTable(in: buffer, at: offset) != nil
            else { return bytes.count }
            return offset
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
    ///
    /// The records are scanned up to the table the header places, and the table is damaged if its
    /// frame does not verify: it holds no entry, but the next compaction writes it again.
    private static func salvage(_ bytes: [UInt8], reason: String, header: FileHeader?) -> Contents {
        var entries: [ResolvedKey: StoredValue] = [:]
        let end = recordsEnd(of: bytes, header: header)
        var scan = RecordFrame.scan(bytes, from: FileHeader.size, to: end, headerIsDamaged: header == nil) {
            record in
            record.apply(to: &entries)
        }
        if end < bytes.count {
            let table = RecordFrame.payload(in: bytes, at: end, verifyChecksum: true)
            if table?.upperBound != bytes.count {
                scan.damagedRanges.append(end..<bytes.count)
            }
        }
        let report = DamageReport(
            recoveredRecords: scan.recovered,
            damagedRanges: scan.damagedRanges,
            reason: reason,
            copyPath: nil
        )
        return Contents(entries: StoredEntries(entries), generation: header?.generation ?? 0, damage: report)
    }
}

/// Whether a key's namespace and name are ASCII.
private func isASCII(_ key: ResolvedKey) -> Bool {
    withUTF8(key.namespace, isASCII) && withUTF8(key.name, isASCII)
}

/// Whether the record just written at `payload` is of a key the fast path reads as ASCII: the
/// common case, told from the bytes in a few instructions, where asking the key's strings costs
/// a copy of each.
private func isPlainASCII(_ written: UnsafeRawBufferPointer, payload: Range<Int>) -> Bool {
    Record.locatePlainSingleSet(in: written.assumingMemoryBound(to: UInt8.self), payload: payload) != nil
}
