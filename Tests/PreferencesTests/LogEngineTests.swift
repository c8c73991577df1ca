import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// The log's own failure modes: torn tails, damage in the middle, logs that do not match their
/// snapshot, random damage, and how large the files grow.
struct LogEngineTests {
    /// A store whose log holds `count` commits of `k<i % 3> = i`, never compacted.
    private func storeWithLog(commits count: Int) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        for index in 0..<count {
            try store.setValue(index, for: PreferenceKey<Int>("k\(index % 3)", default: -1))
        }
        return directory
    }

    /// Where each record of a log ends.
    private func recordEnds(of bytes: [UInt8]) -> [Int] {
        var ends: [Int] = []
        var offset = LogFile.recordsOffset
        while let (_, next) = RecordFrame.record(in: bytes, at: offset) {
            ends.append(next)
            offset = next
        }
        return ends
    }

    /// The frame of a commit of `k<slot> = value`, numbered `sequence`, as a writer appends it.
    private func frame(slot: Int, value: Int, sequence: UInt64) -> [UInt8] {
        var writer = ByteWriter()
        let change = EntryChange(key: ResolvedKey(namespace: "app", name: "k\(slot)"), value: .signed(Int64(value)))
        RecordFrame.append(Record(changes: [change], sequence: sequence), to: &writer)
        return writer.bytes
    }

    /// The mapping's check that nobody wrote where an append goes sees one byte anywhere in the
    /// range, whatever its length and alignment, and nothing outside it.
    @Test func theMappingSeesAnyByteWrittenWhereAnAppendGoes() throws {
        let directory = try TemporaryDirectory()
        let path = directory.logURL.path
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        let file = try #require(try FileSystem().openExisting(at: path, readOnly: false))
        defer { close(file.descriptor) }
        let mapping = LogMapping(file: file, fileSystem: FileSystem(), allocationTarget: 1 << 20)
        try mapping.reserve(256)
        func write(_ byte: UInt8, at offset: Int) {
            var byte = byte
            #expect(pwrite(file.descriptor, &byte, 1, off_t(offset)) == 1)
        }
        for start in [8, 13] {
            for count in 0...40 {
                #expect(mapping.isZero(at: start, count: count))
                for offset in (start - 1)...(start + count) {
                    write(1, at: offset)
                    let inside = offset >= start && offset < start + count
                    #expect(
                        mapping.isZero(at: start, count: count) == !inside, "byte at \(offset), \(count) from \(start)")
                    write(0, at: offset)
                }
            }
        }
    }

    /// The bytes a writer killed mid-copy left are cleared by the next append, wherever they lie.
    ///
    /// Copying a record into the mapping leaves bytes behind a header of zeros, not necessarily
    /// from the record's start. The next append clears them wherever they lie in the bytes it looks
    /// at, so that none is left after its record: a copy of the files without the lock page (a
    /// backup restored), which cannot tell where commits end, would read them as damage.
    @Test(.enabled(if: FileSystem.canShareMemory, "only an append through the mapping leaves such bytes"))
    func bytesAKilledWriterLeftPastWhereTheNextRecordEndsAreCleared() throws {
        let directory = try storeWithLog(commits: 3)
        var bytes = Array(try Data(contentsOf: directory.logURL))
        let end = try #require(recordEnds(of: bytes).last)
        let next = frame(slot: 0, value: 7, sequence: 4).count
        let left = (end + next + 2)..<(end + next + 40)
        try #require(bytes.count >= left.upperBound)
        for offset in left {
            bytes[offset] = 0xAB
        }
        try Data(bytes).write(to: directory.logURL)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        store[PreferenceKey<Int>("k0", default: -1)] = 7
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(at: directory.logURL, to: copy.logURL)
        let restored = try PreferencesStore(fileURL: copy.storeURL)
        #expect(restored.errorChannel.takeBacklog().isEmpty)
        #expect(restored[PreferenceKey<Int>("k0", default: -1)] == 7)
        #expect(restored[PreferenceKey<Int>("k2", default: -1)] == 2)
        #expect(!(try copy.fileNames().contains { $0.contains(".damaged-") }))
    }

    /// The log is allocated ahead in steps (64 KiB, or a quarter of the log), but never past where
    /// it will be compacted (and a frame), so the space it holds and will never use stays small: in
    /// a store whose snapshot is larger than the step, the step alone would reach past it.
    @Test func theLogIsAllocatedNoFurtherThanWhereItWillBeCompacted() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let keys = (0..<2_000).map { PreferenceKey<String>("key\($0)", default: "") }
        try store.transaction { preferences in
            for key in keys {
                preferences[key] = String(repeating: "v", count: 60)
            }
        }
        try store.compact()
        func size(_ url: URL) throws -> Int {
            try #require(try FileManager().attributesOfItem(atPath: url.path)[.size] as? Int)
        }
        var largestOver = Int.min
        for round in 0..<3_000 {
            try store.setValue("\(round) " + String(repeating: "w", count: 60), for: keys[round % keys.count])
            let compactionEnd = LogFile.recordsOffset + max(try size(directory.storeURL), 64 * 1024)
            let limit = (compactionEnd + LogMapping.inPlaceFrameLimit + 4095) / 4096 * 4096
            largestOver = max(largestOver, try size(directory.logURL) - limit)
        }
        #expect(largestOver <= 0, "the log was allocated \(largestOver) bytes past where it compacts")
    }

    @Test func aRecordCutShortByAKilledWriterIsDroppedQuietlyAndTheNextAppendCutsItOff() throws {
        let directory = try storeWithLog(commits: 3)
        // What a writer killed in the middle of its append leaves: the start of an unacknowledged record.
        var bytes = try Data(contentsOf: directory.logURL)
        bytes.append(contentsOf: frame(slot: 2, value: 99, sequence: 4).dropLast(4))
        try bytes.write(to: directory.logURL)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[PreferenceKey<Int>("k2", default: -1)] == 2)
        #expect(store[PreferenceKey<Int>("k1", default: -1)] == 1)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        #expect(!(try directory.fileNames().contains { $0.contains(".damaged-") }))

        store[PreferenceKey<Int>("k2", default: -1)] = 22
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[PreferenceKey<Int>("k2", default: -1)] == 22)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    @Test func aLogCutAtAnyOffsetKeepsEveryRecordBeforeTheCut() throws {
        let directory = try storeWithLog(commits: 6)
        let log = Array(try Data(contentsOf: directory.logURL))
        let ends = recordEnds(of: log)
        #expect(ends.count == 6)
        // Every cut within the records, and one into the zeros of the space allocated after them.
        let bytes = Array(log.prefix(ends.last! + 1))
        for length in 0...bytes.count {
            let copy = try TemporaryDirectory()
            try Data(bytes.prefix(length)).write(to: copy.logURL)
            let store = try PreferencesStore(fileURL: copy.storeURL)
            let whole = ends.filter { $0 <= length }.count
            for index in 0..<6 {
                let expected = (0..<whole).last { $0 % 3 == index % 3 } ?? -1
                #expect(store[PreferenceKey<Int>("k\(index % 3)", default: -1)] == expected, "cut at \(length)")
            }
            // A cut inside the header leaves no log to trust: that is damage, reported with a copy.
            // A cut after it is a torn tail, the normal result of a kill: nothing to report.
            let reported = store.errorChannel.takeBacklog()
            if length < FileHeader.size {
                #expect(reported.map(\.code) == [.damagedFile], "cut at \(length)")
            } else {
                #expect(reported.isEmpty, "cut at \(length)")
            }
        }
    }

    @Test func damageBeforeGoodRecordsIsReportedWithACopyAndTheRestLoaded() throws {
        let directory = try storeWithLog(commits: 6)
        var bytes = Array(try Data(contentsOf: directory.logURL))
        let ends = recordEnds(of: bytes)
        bytes[ends[0] + 14] ^= 0x01  // inside the second record's payload
        try Data(bytes).write(to: directory.logURL)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.filePath == directory.logURL.path)
        #expect(reported.first?.description.contains("recovered 5 records") == true)
        #expect(store[PreferenceKey<Int>("k0", default: -1)] == 3)
        #expect(store[PreferenceKey<Int>("k1", default: -1)] == 4)
        #expect(store[PreferenceKey<Int>("k2", default: -1)] == 5)
        let copy = try #require(try directory.fileNames().first { $0.hasPrefix("preferences.store.log.damaged-") })
        #expect(Array(try Data(contentsOf: directory.url.appendingPathComponent(copy))) == bytes)

        // The damage was folded into a new snapshot: opening again finds none.
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
        #expect(reopened[PreferenceKey<Int>("k2", default: -1)] == 5)
    }

    /// A compaction killed before its rename leaves a temporary snapshot or log; opening removes
    /// both kinds, and nothing else in the folder.
    @Test func openingRemovesTheTemporaryFilesAKilledCompactionLeft() throws {
        let directory = try TemporaryDirectory()
        let leftovers = ["preferences.store.tmp-1A2B", "preferences.store.log.tmp-3C4D"]
        let others = ["other.store.tmp-5E6F", "preferences.store.tmpfile", "notes.txt"]
        for name in leftovers + others {
            try Data("x".utf8).write(to: directory.url.appendingPathComponent(name))
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 1
        let names = try directory.fileNames()
        #expect(leftovers.allSatisfy { !names.contains($0) }, "\(names)")
        #expect(others.allSatisfy { names.contains($0) }, "\(names)")
    }

    @Test func aLogOlderThanItsSnapshotIsIgnored() throws {
        let directory = try TemporaryDirectory()
        let entries = [ResolvedKey(namespace: "app", name: "count"): StoredValue.signed(7)]
        try Data(SnapshotFile.encode(entries, generation: 2)).write(to: directory.storeURL)
        // A log of generation 1, as a crash between a compaction's two renames leaves it.
        try writeLog(startingWith: LogFile.start(generation: 1, lockStamp: 0), counts: [1], in: directory)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[.count] == 7)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        store[.title] = "next"
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[.count] == 7)
        #expect(reopened[.title] == "next")
    }

    @Test func aLogNewerThanItsSnapshotIsDamageButItsRecordsAreKept() throws {
        let directory = try TemporaryDirectory()
        try writeLog(startingWith: LogFile.start(generation: 4, lockStamp: 0), counts: [9], in: directory)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[.count] == 9)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.description.contains("continues snapshot generation 4") == true)
    }

    /// A log of format version 1 (no release wrote one) has its records where version 2 has the
    /// lock stamp: it is reported as damage, kept in a copy, and every record in it recovered.
    @Test func aLogOfVersionOneIsDamageButItsRecordsAreKept() throws {
        let directory = try TemporaryDirectory()
        var header = FileHeader(kind: .log, generation: 0).encoded()
        header[8] = 1
        var writer = ByteWriter()
        writer.append(CRC32C.checksum(header[0..<(FileHeader.size - 4)]))
        header.replaceSubrange((FileHeader.size - 4)..<FileHeader.size, with: writer.bytes)
        try writeLog(startingWith: header, counts: [3, 5], in: directory)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[.count] == 5)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.description.contains("format version 1") == true)
        #expect(try directory.fileNames().contains { $0.contains(".damaged-") })
        try store.setValue(6, for: .count)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 6)
    }

    /// Writes a log that begins with `start` (a header, and since version 2 the lock stamp), then
    /// holds one record per count, each setting the `count` key to it.
    private func writeLog(startingWith start: [UInt8], counts: [Int64], in directory: TemporaryDirectory) throws {
        var writer = ByteWriter()
        writer.append(contentsOf: start)
        for count in counts {
            let change = EntryChange(key: ResolvedKey(namespace: "app", name: "count"), value: .signed(count))
            RecordFrame.append(Record(changes: [change]), to: &writer)
        }
        try Data(writer.bytes).write(to: directory.logURL)
    }

    @Test func randomDamageToALogNeverLoadsAValueThatWasNotWritten() throws {
        let directory = try storeWithLog(commits: 12)
        // The records, without the zeros of the space allocated after them.
        let log = Array(try Data(contentsOf: directory.logURL))
        let bytes = Array(log.prefix(recordEnds(of: log).last!))
        var generator = SplitMix64(seed: 0xB17F)
        for flip in 0..<300 {
            var damaged = bytes
            let bit = Int(generator.next() % UInt64(bytes.count * 8))
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            let copy = try TemporaryDirectory()
            try Data(damaged).write(to: copy.logURL)
            let store = try PreferencesStore(fileURL: copy.storeURL)
            for slot in 0..<3 {
                let value = store[PreferenceKey<Int>("k\(slot)", default: -1)]
                #expect(
                    value == -1 || (value % 3 == slot && value < 12), "flip \(flip) at bit \(bit): k\(slot) = \(value)")
            }
        }
    }

    @Test func filesStayUnderTwiceTheLiveDataWhateverTheWritePattern() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        var largest = 0
        for round in 0..<20_000 {
            try store.setValue(
                "value \(round) of a preference", for: PreferenceKey<String>("k\(round % 500)", default: ""))
            if round % 500 == 499 {
                let files = try directory.storeBytes().values.reduce(0) { $0 + $1.count }
                largest = max(largest, files)
            }
        }
        let live = SnapshotFile.encode(
            try #require(
                (store.backend as? FileEngine)?.state.withLock { $0.entries.all }
            ),
            generation: 0
        ).count
        #expect(
            largest <= 2 * live + PreferencesStore.defaultCompactionMinimumBytes, "largest \(largest), live \(live)")
    }
}
