/// The log: a ``FileHeader``, the lock stamp, then one framed record per commit, appended.
///
/// ```
///  0  header      40 bytes  a ``FileHeader`` of kind log
/// 40  lockStamp   UInt64    the incarnation of the lock page writers last confirmed current
/// 48  records               one framed record per commit (``RecordFrame``)
/// ```
///
/// The lock stamp is a hint shared through the log's mapping, never data: a writer whose lock
/// page's incarnation it holds need not ask the kernel whether its lock file was deleted or
/// replaced (see ``LockFile/confirm(stampedAt:)``). It is outside the header's checksum, written
/// in place while the log is in use, and ignored when reading.
///
/// A log's records apply on top of the snapshot of the same generation, and each carries its
/// commit's number in the log (``Record/sequence``).
///
/// What ends a log decides whether anything was lost:
/// - zeros after the last record are space allocated ahead of appends (``LogMapping``), or a write
///   whose data never reached the disk: the log ends there;
/// - a record **cut short** (the file ends inside it, or its header is still zeros because a copy
///   into the mapping puts the header in last) is what a process killed while appending leaves, and
///   is dropped quietly: that write was never acknowledged;
/// - so is any record that starts at or after the end of the last acknowledged commit, which the
///   lock page records (``LockFile/Acknowledged``): a write in progress that never finished;
/// - a record that is **complete but does not verify** before that end, or bytes that do not
///   verify before records that do, are damage.
enum LogFile {
    /// What replaying a log found.
    struct Replay {
        /// Whether the header verified; when it did not, the records are what a scan could salvage.
        var headerIsValid = true
        var generation: UInt64 = 0
        /// The format version the header names (see ``FileHeader/Kind/currentVersion``).
        var version = FileHeader.Kind.log.currentVersion
        var records: [Record] = []
        /// Where the last record that verifies ends: where the next append belongs.
        var validEnd: Int
        /// How many bytes after `validEnd` a write cut short left: not damage.
        var tornBytes = 0
        /// Damaged bytes; a torn tail is not damage.
        var damage: DamageReport?
        /// The number of the last commit replayed, or the one replay started after.
        var lastSequence: UInt64
        /// Commit numbers absent between the records: records removed from the middle of the log.
        var missingSequences: [ClosedRange<UInt64>] = []
    }

    /// Where the lock stamp lies in a log.
    static let lockStampOffset = FileHeader.size
    /// Where a log's first record begins: after its header and lock stamp.
    static let recordsOffset = lockStampOffset + 8

    /// The bytes a new log begins with: its header, and the lock stamp of the page its writer holds.
    static func start(generation: UInt64, lockStamp: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: recordsOffset)
        writer.append(contentsOf: FileHeader(kind: .log, generation: generation).encoded())
        writer.append(lockStamp)
        return writer.bytes
    }

    /// Replays a whole log.
    ///
    /// - Parameters:
    ///   - bytes: The log's bytes.
    ///   - acknowledged: The last commit the lock page acknowledged, if it knows one.
    /// - Returns: What the log holds, and how it ends.
    /// - Throws: ``UnsupportedVersion`` for a log a newer version of the library wrote.
    static func replay(
        _ bytes: [UInt8],
        acknowledged: LockFile.Acknowledged? = nil
    ) throws(UnsupportedVersion) -> Replay {
        switch FileHeader.check(bytes, expecting: .log) {
        case .newerVersion(let version):
            throw UnsupportedVersion(version: version, supported: FileHeader.Kind.log.currentVersion)
        case .damaged(let reason):
            // With no header to trust, keep what verifies and report the rest; from the header's
            // end, which also finds the records of a log of version 1, before the lock stamp.
            var records: [Record] = []
            let scan = RecordFrame.scan(bytes, from: min(FileHeader.size, bytes.count), headerIsDamaged: true) {
                records.append($0)
            }
            let damage = DamageReport(
                recoveredRecords: scan.recovered,
                damagedRanges: scan.damagedRanges,
                reason: reason,
                copyPath: nil
            )
            return Replay(
                headerIsValid: false,
                records: records,
                validEnd: bytes.count,
                damage: damage,
                lastSequence: records.last { $0.sequence != nil }?.sequence ?? 0
            )
        case .valid(let header):
            let committedEnd = acknowledged.flatMap { $0.generation == header.generation ? $0.committedEnd : nil }
            var replay = records(in: bytes, from: recordsOffset, after: 0, committedEnd: committedEnd)
            replay.generation = header.generation
            replay.version = header.version
            return replay
        }
    }

    /// Replays the records from `offset` on, which continue commit number `sequence`.
    ///
    /// Replays up to the first record that does not verify. If a good record follows that one, it
    /// replays every record that verifies and reports the rest as damage; if none does, the tail is
    /// torn or damaged as the type's discussion says.
    static func records(in bytes: [UInt8], from offset: Int, after sequence: UInt64, committedEnd: Int?) -> Replay {
        var replay = Replay(validEnd: offset, lastSequence: sequence)
        // Zeros to the end are allocated space: the records end where they begin.
        let dataEnd = endOfData(bytes, from: offset)
        // Room for records of the smallest common size, a write of one small value: growing the
        // array one doubling at a time would copy every record of a long log a dozen times.
        replay.records.reserveCapacity((dataEnd - offset) / 64)
        func add(_ record: Record) {
            if let next = record.sequence {
                if next > replay.lastSequence + 1 {
                    replay.missingSequences.append((replay.lastSequence + 1)...(next - 1))
                }
                replay.lastSequence = next
            }
            replay.records.append(record)
        }
        var position = offset
        while let (record, next) = RecordFrame.record(in: bytes, at: position) {
            add(record)
            position = next
        }
        replay.validEnd = position
        guard position < dataEnd else { return replay }
        if RecordFrame.nextRecord(in: bytes, after: position) != nil {
            let before = replay.records.count
            let scan = RecordFrame.scan(bytes, from: position, headerIsDamaged: false, add)
            replay.damage = DamageReport(
                recoveredRecords: before + scan.recovered,
                damagedRanges: scan.damagedRanges.compactMap { range in
                    range.lowerBound < dataEnd ? range.lowerBound..<min(range.upperBound, dataEnd) : nil
                },
                reason: "the log has bytes that do not verify before records that do",
                copyPath: nil
            )
            replay.validEnd = bytes.count
        } else if RecordFrame.isCutShort(bytes, at: position) || position >= (committedEnd ?? .max) {
            replay.tornBytes = dataEnd - position
        } else {
            replay.damage = DamageReport(
                recoveredRecords: replay.records.count,
                damagedRanges: [position..<dataEnd],
                reason: "the log's last record is complete but does not verify",
                copyPath: nil
            )
            replay.validEnd = bytes.count
        }
        return replay
    }

    /// The offset just past the last byte from `start` on that is not zero; `start` if there is none.
    static func endOfData(_ bytes: [UInt8], from start: Int) -> Int {
        var end = bytes.count
        while end > start && bytes[end - 1] == 0 {
            end -= 1
        }
        return end
    }
}
