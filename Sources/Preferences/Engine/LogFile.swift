/// The log: a ``FileHeader``, then one framed record per commit, appended.
///
/// A log's records apply on top of the snapshot of the same generation. Replay stops quietly at a
/// torn final record, the normal result of a process killed while appending. Bytes that do not
/// verify with a good record after them are damage.
enum LogFile {
    /// What replaying a log found.
    struct Replay {
        /// Whether the header verified; when it did not, the records are what a scan could salvage.
        var headerIsValid = true
        var generation: UInt64
        var records: [Record]
        /// Where the last record that verifies ends: where the next append belongs.
        var validEnd: Int
        /// Damage in the middle of the log; a torn tail is not damage.
        var damage: DamageReport?
    }

    static func header(generation: UInt64) -> [UInt8] {
        FileHeader(kind: .log, generation: generation).encoded()
    }

    static func replay(_ bytes: [UInt8]) throws(UnsupportedVersion) -> Replay {
        switch FileHeader.check(bytes, expecting: .log) {
        case .newerVersion(let version):
            throw UnsupportedVersion(version: version)
        case .damaged(let reason):
            // With no header to trust, keep what verifies and report the rest.
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
            return Replay(headerIsValid: false, generation: 0, records: records, validEnd: bytes.count, damage: damage)
        case .valid(let header):
            var replay = records(in: bytes, from: FileHeader.size)
            replay.generation = header.generation
            return replay
        }
    }

    /// Replays the records from `offset` on: the records up to the first that does not verify and,
    /// if a good record follows that one, every record that verifies, reported as damage.
    static func records(in bytes: [UInt8], from offset: Int) -> Replay {
        var records: [Record] = []
        var position = offset
        while let (record, next) = RecordFrame.record(in: bytes, at: position) {
            records.append(record)
            position = next
        }
        guard position < bytes.count, RecordFrame.nextRecord(in: bytes, after: position) != nil else {
            return Replay(generation: 0, records: records, validEnd: position, damage: nil)
        }
        let before = records.count
        let scan = RecordFrame.scan(bytes, from: position, headerIsDamaged: false) { records.append($0) }
        let damage = DamageReport(
            recoveredRecords: before + scan.recovered,
            damagedRanges: scan.damagedRanges,
            reason: "the log has bytes that do not verify before records that do",
            copyPath: nil
        )
        return Replay(generation: 0, records: records, validEnd: bytes.count, damage: damage)
    }
}
