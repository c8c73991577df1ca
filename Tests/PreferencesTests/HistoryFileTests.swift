import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// The history file when things go wrong: damage, an append cut short, an older log.
///
/// A damaged history never stops the store and never costs a value.
@Suite struct HistoryFileTests {
    private func store(_ directory: TemporaryDirectory) throws -> PreferencesStore {
        try PreferencesStore(fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: 512)
    }

    private func historyURL(_ directory: TemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("preferences.store.history")
    }

    /// A store whose history file holds the changes 0 ..< 200 of `count`, its last value 199.
    private func storeWithHistory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        for value in 0..<200 {
            store[.count] = value
        }
        try store.compact()
        return directory
    }

    private func values(_ history: [KeyHistoryEntry<Int>]) -> [Int] {
        history.compactMap { entry in
            guard case .value(let value) = entry.value else { return nil }
            return value
        }
    }

    @Test func aDamagedHistoryIsReportedWhenReadAndNeverStopsTheStore() throws {
        let directory = try storeWithHistory()
        var bytes = try Data(contentsOf: historyURL(directory))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: historyURL(directory))

        let store = try store(directory)
        #expect(store[.count] == 199)
        #expect(store.errorChannel.takeBacklog().isEmpty, "opening read the history")
        let kept = values(try store.history(for: .count))
        #expect(kept.count == 32 && kept.first == 199)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.filePath == historyURL(directory).path)
        // The damaged file is left as it is until a compaction prunes it or `prefs repair` runs.
        #expect(try Data(contentsOf: historyURL(directory)) == bytes)
        store[.count] = 200
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 200)
    }

    @Test func aHistoryWhoseHeaderIsDamagedIsCopiedAndStartedAgainAtTheNextCompaction() throws {
        let directory = try storeWithHistory()
        var bytes = try Data(contentsOf: historyURL(directory))
        bytes.replaceSubrange(0..<8, with: Data(repeating: 0xEE, count: 8))
        try bytes.write(to: historyURL(directory))

        let store = try store(directory)
        store[.count] = 200
        try store.compact()
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        let copies = try directory.fileNames().filter { $0.hasPrefix("preferences.store.history.damaged-") }
        #expect(copies.count == 1)
        if let copy = copies.first {
            #expect(try Data(contentsOf: directory.url.appendingPathComponent(copy)) == bytes)
        }
        // What verified was kept, and the new file verifies.
        #expect(values(try store.history(for: .count)) == Array((169...200).reversed()))
        #expect(store.errorChannel.takeBacklog().isEmpty)
        let rewritten = try [UInt8](Data(contentsOf: historyURL(directory)))
        #expect(try HistoryFile.read(rewritten).damage == nil)
    }

    @Test func anAppendCutShortIsNotDamageAndIsWrittenOver() throws {
        let directory = try storeWithHistory()
        let whole = try Data(contentsOf: historyURL(directory))
        // What a process killed while appending leaves: bytes past the end the header counts.
        try (whole + Data(repeating: 0x5A, count: 37)).write(to: historyURL(directory))

        let store = try store(directory)
        #expect(values(try store.history(for: .count)).first == 199)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        for value in 200..<260 {
            store[.count] = value
        }
        try store.compact()
        let bytes = try [UInt8](Data(contentsOf: historyURL(directory)))
        let contents = try HistoryFile.read(bytes)
        #expect(contents.damage == nil)
        #expect(contents.entries.last?.frame.upperBound == bytes.count, "the cut-short bytes are still there")
        #expect(values(try store.history(for: .count)).first == 259)
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    /// A compaction that appended to the history and then failed leaves its records in the log,
    /// and the next appends them again: readers and pruning keep each record once.
    @Test func recordsAppendedTwiceAreKeptOnce() throws {
        let directory = try storeWithHistory()
        let bytes = try [UInt8](Data(contentsOf: historyURL(directory)))
        let once = try HistoryFile.read(bytes)
        // The whole body again, as a second append of the same logs' records would leave it.
        var twice = bytes + bytes[FileHeader.size...]
        twice.replaceSubrange(
            0..<FileHeader.size, with: HistoryFile.header(bodyLength: twice.count - FileHeader.size))
        try Data(twice).write(to: historyURL(directory))
        #expect(try HistoryFile.read(twice).entries.count == 2 * once.entries.count)

        let store = try store(directory)
        #expect(values(try store.history(for: .count)) == Array((168..<200).reversed()))
        let pruned = HistoryPruning(retention: .standard, erasing: []).prune(try HistoryFile.read(twice))
        #expect(pruned.undecodable == 0)
        let kept = try HistoryFile.read(pruned.file)
        #expect(kept.damage == nil)
        #expect(kept.entries.count == HistoryRetention.standard.changesPerKey)
        let sequences = kept.entries.map { entry -> UInt64? in
            var reader = ByteReader(pruned.file, range: entry.record)
            return try? Record(payload: &reader).sequence
        }
        #expect(Set(zip(kept.entries.map(\.generation), sequences).map { "\($0)-\($1 ?? 0)" }).count == sequences.count)
    }

    /// A compaction that appended the log to the history and then failed leaves its records in
    /// the log; the next appends them again.
    @Test func aCompactionThatFailedAfterAppendingToTheHistoryLeavesEachChangeOnce() throws {
        let directory = try TemporaryDirectory()
        let operations = FileOperationLog()
        let store = try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: operations.fileSystem, compactionMinimumBytes: 512)
        store[.count] = 0
        operations.fail(.rename, with: ENOSPC, where: { $0.hasSuffix("preferences.store") })
        for value in 1..<40 {
            store[.count] = value
        }
        try #require(store.errorChannel.takeBacklog().map(\.code) == [.fileOperationFailed])
        operations.fail(.rename, with: nil)
        try store.compact()
        #expect(values(try store.history(for: .count)) == Array((8..<40).reversed()))
        let bytes = try [UInt8](Data(contentsOf: historyURL(directory)))
        #expect(try HistoryFile.read(bytes).entries.count > 40, "the retried compaction did not append again")
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    /// A history file left by an earlier store at the same path: its snapshot and log deleted, the
    /// history kept, the numbers of its logs start again.
    @Test func aHistoryOfAnEarlierStoreAtThePathIsCopiedAndStartedAgain() throws {
        let directory = try storeWithHistory()
        for name in ["preferences.store", "preferences.store.log", "preferences.store.lock"] {
            try FileManager().removeItem(at: directory.url.appendingPathComponent(name))
        }
        let store = try store(directory)
        store[.title] = "new"
        try store.compact()
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.description.contains("does not go with the store's snapshot and log") == true)
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.history.damaged-") })
        #expect(try store.history(for: .count).isEmpty)
        #expect(try store.history(for: .title).count == 1)
    }

    /// The same, when the earlier store compacted once: its history names generation 0, as the
    /// new store's first compaction does, and only the store's having had no files tells them apart.
    @Test func aHistoryOfAnEarlierStoreOfOneCompactionIsStartedAgainToo() throws {
        let directory = try TemporaryDirectory()
        let earlier = try PreferencesStore(fileURL: directory.storeURL)
        earlier[.count] = 1
        try earlier.compact()
        for name in ["preferences.store", "preferences.store.log", "preferences.store.lock"] {
            try FileManager().removeItem(at: directory.url.appendingPathComponent(name))
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 2
        try store.compact()
        store[.count] = 3
        try store.compact()
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.damagedFile])
        #expect(values(try store.history(for: .count)) == [3, 2])
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func noFlippedBitGoesUnnoticedOrStopsTheReader() throws {
        let directory = try storeWithHistory()
        let bytes = try [UInt8](Data(contentsOf: historyURL(directory)))
        let original = try HistoryFile.read(bytes)
        #expect(original.damage == nil)
        let records = Set(original.entries.map { Array(bytes[$0.frame]) })
        var generator = SplitMix64(seed: 0x4157_0A7)
        for _ in 0..<500 {
            let bit = Int(generator.next() % UInt64(bytes.count * 8))
            var flipped = bytes
            flipped[bit / 8] ^= UInt8(1 << (bit % 8))
            let contents = try HistoryFile.read(flipped)
            #expect(contents.damage != nil, "flipping bit \(bit) was not noticed")
            // Whatever verifies is a record that was there; a flip costs at most the record it hits.
            #expect(contents.entries.allSatisfy { records.contains(Array(flipped[$0.frame])) }, "bit \(bit)")
            #expect(contents.entries.count >= original.entries.count - 1, "bit \(bit)")
        }
    }

    @Test func aLogAnOlderVersionWroteIsCompactedBeforeTheFirstWrite() throws {
        let directory = try TemporaryDirectory()
        // A log as version 0.1 of the library wrote it: a version 2 header, the lock stamp, and
        // records with a number and no stamp, one of them a transaction's.
        var log = ByteWriter()
        log.append(contentsOf: FileHeader(kind: .log, version: 2, generation: 0).encoded())
        log.append(UInt64(0))
        let count = ResolvedKey(namespace: PreferenceNamespace.defaultAppNamespace, name: "count")
        let title = ResolvedKey(namespace: PreferenceNamespace.defaultAppNamespace, name: "title")
        RecordFrame.append(Record(changes: [EntryChange(key: count, value: .signed(1))], sequence: 1), to: &log)
        RecordFrame.append(
            Record(
                changes: [EntryChange(key: title, value: .string("kept")), EntryChange(key: count, value: .signed(2))],
                sequence: 2),
            to: &log)
        try Data(log.bytes).write(to: directory.logURL)

        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[.count] == 2 && reopened[.title] == "kept")
        // Opening may stamp the log with its lock page (ARCHITECTURE.md, invariant 5), and changes
        // nothing else in it.
        var opened = try [UInt8](Data(contentsOf: directory.logURL))
        opened.replaceSubrange(LogFile.lockStampOffset..<LogFile.recordsOffset, with: [UInt8](repeating: 0, count: 8))
        #expect(opened == log.bytes, "opening changed the old log")
        reopened[.count] = 3
        let newLog = try [UInt8](Data(contentsOf: directory.logURL))
        guard case .valid(let written) = FileHeader.check(Array(newLog.prefix(FileHeader.size)), expecting: .log)
        else {
            Issue.record("the new log's header does not verify")
            return
        }
        #expect(written.version == FileHeader.Kind.log.currentVersion)
        #expect(FileManager().fileExists(atPath: directory.storeURL.path), "the old log was not compacted")
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 3)
        // The old records, with no time, program or cause, are in the history as they were.
        let history = try reopened.history(for: .count)
        #expect(values(history) == [3, 2, 1])
        #expect(history.dropFirst().allSatisfy { $0.date == nil && $0.entry.program == nil && $0.cause == .write })
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    @Test func aHistoryFileOfANewerVersionIsLeftAloneAndReported() throws {
        let directory = try storeWithHistory()
        var bytes = try [UInt8](Data(contentsOf: historyURL(directory)))
        var header = FileHeader(kind: .history, generation: 0, bodyLength: UInt64(bytes.count - FileHeader.size))
        header.version = 9
        bytes.replaceSubrange(0..<FileHeader.size, with: header.encoded())
        try Data(bytes).write(to: historyURL(directory))

        let store = try store(directory)
        let error = #expect(throws: PreferencesError.self) { try store.history(for: .count) }
        #expect(error?.code == .unsupportedFormatVersion)
        for value in 0..<100 {
            store[.count] = value
        }
        #expect(store[.count] == 99)
        #expect(try [UInt8](Data(contentsOf: historyURL(directory))) == bytes)
        #expect(store.errorChannel.takeBacklog().map(\.code).contains(.unsupportedFormatVersion))
    }
}
