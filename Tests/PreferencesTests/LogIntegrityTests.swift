import Foundation
import Testing

@testable import Preferences

/// What marks a commit as done, and the losses that marks makes visible: a final record damaged
/// after it was written, commits missing from the log, and a log missing beside its snapshot.
struct LogIntegrityTests {
    private let counter = PreferenceKey<Int>("counter", default: -1)

    /// A store whose log holds `count` commits of `counter = 1, 2, …`, never compacted.
    private func storeWithLog(commits count: Int) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        for value in 1...count {
            try store.setValue(value, for: counter)
        }
        return directory
    }

    /// Where each record of a log begins, and where the last one ends.
    private func recordBounds(of bytes: [UInt8]) -> [Int] {
        var bounds = [LogFile.recordsOffset]
        while let (_, next) = RecordFrame.record(in: bytes, at: bounds.last!) {
            bounds.append(next)
        }
        return bounds
    }

    private func damageReports(of store: PreferencesStore) -> [PreferencesError] {
        store.errorChannel.takeBacklog().filter { $0.code == .damagedFile }
    }

    @Test func aBitFlippedInTheFinalRecordIsDamageReportedWithACopyNotATornTail() throws {
        let directory = try storeWithLog(commits: 3)
        var bytes = Array(try Data(contentsOf: directory.logURL))
        // The records end before the space allocated after them.
        bytes[recordBounds(of: bytes).last! - 2] ^= 0x04
        try Data(bytes).write(to: directory.logURL)

        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: directory.storeURL, ifDamaged: .throwError)
        }
        #expect(error?.code == .damagedFile)
        #expect(error?.description.contains("the log's last record is complete but does not verify") == true)
        #expect(Array(try Data(contentsOf: directory.logURL)) == bytes, "throwError changed the log")

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(damageReports(of: store).count == 1)
        #expect(store[counter] == 2)
        let copy = try #require(try directory.fileNames().first { $0.hasPrefix("preferences.store.log.damaged-") })
        #expect(Array(try Data(contentsOf: directory.url.appendingPathComponent(copy))) == bytes)
        try store.setValue(4, for: counter)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 4)
        #expect(damageReports(of: reopened).isEmpty)
    }

    @Test func aCompleteRecordPastTheAcknowledgedEndIsAnUnfinishedWriteUnlessThePageIsGone() throws {
        let directory = try storeWithLog(commits: 2)
        // A whole frame whose payload a writer was still filling in when it was killed: it was never
        // acknowledged, so the lock page's committed end lies before it.
        var writer = ByteWriter()
        let change = EntryChange(key: ResolvedKey(namespace: "app", name: "counter"), value: .signed(3))
        RecordFrame.append(Record(changes: [change], sequence: 3), to: &writer)
        var frame = writer.bytes
        frame[frame.count - 1] ^= 0xFF
        var bytes = Array(try Data(contentsOf: directory.logURL))
        let end = recordBounds(of: bytes).last!
        bytes = Array(bytes.prefix(end)) + frame + bytes.dropFirst(end + frame.count)
        try Data(bytes).write(to: directory.logURL)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 2)
        #expect(damageReports(of: store).isEmpty)

        // Without the lock page nothing says where acknowledged commits end, and a complete record
        // that does not verify is damage.
        let copy = try TemporaryDirectory()
        try Data(bytes).write(to: copy.logURL)
        let unmarked = try PreferencesStore(fileURL: copy.storeURL)
        #expect(unmarked[counter] == 2)
        #expect(damageReports(of: unmarked).count == 1)
    }

    /// With the lock file gone nothing says where acknowledged commits end: a log cut inside its
    /// last record is a write cut short, at the first opening and at every one after it, whoever
    /// wrote since.
    @Test(arguments: [false, true])
    func aLogCutInsideItsLastRecordWithTheLockFileGoneGetsOneVerdict(writesBetween: Bool) throws {
        let directory = try storeWithLog(commits: 3)
        let bytes = Array(try Data(contentsOf: directory.logURL))
        let bounds = recordBounds(of: bytes)
        try #require(bounds.count == 4)
        try FileManager().removeItem(at: directory.lockURL)
        let cut = Array(bytes.prefix(bounds[3] - 3))
        try Data(cut).write(to: directory.logURL)

        let first = try PreferencesStore(fileURL: directory.storeURL)
        #expect(first[counter] == 2)
        #expect(damageReports(of: first).isEmpty)
        // Nothing cut off, nothing zeroed: only the lock stamp, a hint outside every checksum, names
        // the lock page this opening set up (see `LockFile.confirm(stampedAt:)`).
        var after = Array(try Data(contentsOf: directory.logURL))
        #expect(after.count == cut.count)
        let stamp = LogFile.lockStampOffset..<LogFile.recordsOffset
        after.replaceSubrange(stamp, with: cut[stamp])
        #expect(after == cut, "opening changed the log's records")
        if writesBetween {
            try first.setValue(7, for: counter)
        }
        for _ in 1...2 {
            let next = try PreferencesStore(fileURL: directory.storeURL)
            #expect(next[counter] == (writesBetween ? 7 : 2))
            #expect(damageReports(of: next).isEmpty)
        }
        #expect(try directory.fileNames().filter { $0.contains("damaged") }.isEmpty)
    }

    @Test func recordsMissingFromTheEndOfTheLogAreReported() throws {
        let directory = try storeWithLog(commits: 5)
        let bytes = Array(try Data(contentsOf: directory.logURL))
        let bounds = recordBounds(of: bytes)
        try #require(bounds.count == 6)
        // Cut at a record boundary: what is left verifies, but two acknowledged commits are gone.
        try Data(bytes.prefix(bounds[3])).write(to: directory.logURL)

        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: directory.storeURL, ifDamaged: .throwError)
        }
        #expect(error?.description.contains("the log ends at commit 3, but commits up to 5 were acknowledged") == true)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 3)
        let reports = damageReports(of: store)
        #expect(reports.count == 1)
        #expect(reports.first?.description.contains("the last 2 commits are missing") == true)
        #expect(damageReports(of: try PreferencesStore(fileURL: directory.storeURL)).isEmpty, "reported twice")
    }

    @Test func aLogReplacedByAnOlderCopyIsReported() throws {
        let directory = try storeWithLog(commits: 2)
        let older = try Data(contentsOf: directory.logURL)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(3, for: counter)
        try older.write(to: directory.logURL)

        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 2)
        #expect(damageReports(of: reopened).first?.description.contains("commits up to 3 were acknowledged") == true)
    }

    @Test func aCommitRemovedFromTheMiddleOfTheLogIsReported() throws {
        let directory = try storeWithLog(commits: 4)
        let bytes = Array(try Data(contentsOf: directory.logURL))
        let bounds = recordBounds(of: bytes)
        try Data(bytes[..<bounds[1]] + bytes[bounds[2]...]).write(to: directory.logURL)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 4)
        #expect(damageReports(of: store).first?.description.contains("commit 2 is missing from the log") == true)
    }

    @Test func aStoreOpenWhileRecordsVanishFromItsLogReportsItWhenItCatchesUp() throws {
        let directory = try storeWithLog(commits: 2)
        let reader = try PreferencesStore(fileURL: directory.storeURL)
        // Not the subscript: a key a view may track is watched, and would catch up at once.
        #expect(try reader.value(for: counter) == 2)
        let writer = try PreferencesStore(fileURL: directory.storeURL)
        try writer.setValue(3, for: counter)
        // Another program cuts the log back to before the commit the reader has not seen yet.
        let bytes = Array(try Data(contentsOf: directory.logURL))
        try Data(bytes.prefix(recordBounds(of: bytes)[2])).write(to: directory.logURL)

        #expect(try reader.value(for: counter) == 2)
        // The read cannot catch up without the lock; the catch-up under it follows and reports.
        var reported: [PreferencesError] = []
        let deadline = Date().addingTimeInterval(5)
        while reported.isEmpty && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
            reported = reader.errorChannel.takeBacklog()
        }
        #expect(reported.first?.code == .damagedFile)
        #expect(reported.first?.description.contains("commits up to 3 were acknowledged") == true)
    }

    @Test func aLogMissingBesideItsSnapshotIsReported() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(1, for: counter)
        try store.compact()
        try store.setValue(2, for: counter)
        try FileManager().removeItem(at: directory.logURL)

        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: directory.storeURL, ifDamaged: .throwError)
        }
        #expect(error?.filePath == directory.logURL.path)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 1)
        #expect(
            damageReports(of: reopened).first?.description.contains("the log beside the snapshot is missing") == true)
        #expect(damageReports(of: try PreferencesStore(fileURL: directory.storeURL)).isEmpty, "reported twice")
    }

    @Test func aLogMissingWhenNothingWasCommittedSinceTheSnapshotLosesNothingAndIsNotReported() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(1, for: counter)
        try store.compact()
        try FileManager().removeItem(at: directory.logURL)

        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 1)
        #expect(damageReports(of: reopened).isEmpty)
    }

    /// What a power loss may leave after a compaction in standard durability, whose new log is not
    /// flushed: the log's name on disk, its contents not.
    @Test func aNewLogWhoseContentsNeverReachedTheDiskIsReportedAndTheSnapshotKept() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(1, for: counter)
        try store.compact()
        try store.setValue(2, for: counter)
        try Data().write(to: directory.logURL)

        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 1)
        let reported = damageReports(of: reopened)
        #expect(reported.count == 1)
        #expect(reported.first?.filePath == directory.logURL.path)
    }
}
