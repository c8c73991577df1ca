import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// A damaged file is never taken for an empty one: what verifies is loaded, a copy is kept, and
/// the damage is reported.
struct FileDamageTests {
    /// A store file of a few entries of every kind, and the entries it holds.
    private static func sampleFile() -> (bytes: [UInt8], entries: [ResolvedKey: StoredValue]) {
        var entries: [ResolvedKey: StoredValue] = [:]
        entries[ResolvedKey(namespace: "app", name: "flag")] = .bool(true)
        entries[ResolvedKey(namespace: "app", name: "count")] = .signed(-42)
        entries[ResolvedKey(namespace: "app", name: "title")] = .string("héllo")
        entries[ResolvedKey(namespace: "", name: "global")] = .unsigned(7)
        entries[ResolvedKey(namespace: "com.vendor", name: "list")] = .array([.double(1.5), .url("https://a.example/")])
        entries[ResolvedKey(namespace: "app", name: "pet")] = .encoded(Data(#"{"age":3,"name":"Rex"}"#.utf8))
        entries[ResolvedKey(namespace: "app", name: "map")] = .dictionary(["a": .date(12), "b": .data(Data([1, 2]))])
        return (SnapshotFile.encode(entries, generation: 3), entries)
    }

    /// Where the table of records starts in a snapshot the library wrote: where its records end.
    private static func tableOffset(of bytes: [UInt8]) -> Int {
        guard case .valid(let header) = FileHeader.check(Array(bytes.prefix(FileHeader.size)), expecting: .snapshot)
        else { return bytes.count }
        return Int(header.tableOffset)
    }

    /// Writes a snapshot and, as every compaction does, an empty log of its generation beside it.
    private static func writeStore(snapshot: [UInt8], in directory: TemporaryDirectory) throws {
        try Data(snapshot).write(to: directory.storeURL)
        try Data(LogFile.start(generation: 3, lockStamp: 0)).write(to: directory.logURL)
    }

    @Test func anIntactFileReadsBackExactly() throws {
        let (bytes, entries) = Self.sampleFile()
        let contents = try SnapshotFile.decode(bytes)
        #expect(contents == SnapshotFile.Contents(entries: StoredEntries(entries), generation: 3, damage: nil))
        #expect(Array(bytes.prefix(8)) == FileHeader.magic)
    }

    @Test func aFileIsTheSameBytesForTheSameEntries() {
        let (bytes, entries) = Self.sampleFile()
        #expect(SnapshotFile.encode(entries, generation: 3) == bytes)
    }

    @Test func truncationAtEveryOffsetIsDetectedAndEveryWholeRecordBeforeItRecovered() throws {
        let (bytes, entries) = Self.sampleFile()
        // Where each record ends, to know which survive a cut.
        var recordEnds: [Int] = []
        var offset = FileHeader.size
        while let (_, next) = RecordFrame.record(in: bytes, at: offset) {
            recordEnds.append(next)
            offset = next
        }
        #expect(recordEnds.count == entries.count)
        for length in 0..<bytes.count {
            let contents = try SnapshotFile.decode(Array(bytes.prefix(length)))
            let damage = try #require(contents.damage, "a file cut to \(length) bytes was not detected")
            let whole = recordEnds.filter { $0 <= length }.count
            #expect(contents.entries.all.count == whole, "cut at \(length)")
            #expect(damage.recoveredRecords == whole)
            for (key, value) in contents.entries.all {
                #expect(entries[key] == value)
            }
        }
    }

    @Test func everyFlippedBitIsDetectedAndOnlyTheRecordItHitIsLost() throws {
        let (bytes, entries) = Self.sampleFile()
        var generator = SplitMix64(seed: 0x5EED)
        var flips = 0
        while flips < 1_000 {
            var damaged = bytes
            let bit = Int(generator.next() % UInt64(bytes.count * 8))
            damaged[bit / 8] ^= 1 << UInt8(bit % 8)
            let contents = try SnapshotFile.decode(damaged)
            let damage = try #require(contents.damage, "flipping bit \(bit) was not detected")
            // Every entry that was loaded is one that was written, unchanged.
            for (key, value) in contents.entries.all {
                #expect(entries[key] == value, "flipping bit \(bit) changed \(key)")
            }
            // A flip in the header loses nothing; a flip in a record loses that record only.
            #expect(contents.entries.all.count >= entries.count - 1, "flipping bit \(bit)")
            #expect(!damage.damagedRanges.isEmpty)
            flips += 1
        }
    }

    @Test(arguments: [
        ("empty", [UInt8]()),
        ("garbage", Array("this is not a preferences store at all, just some text\n".utf8)),
        ("zeros", [UInt8](repeating: 0, count: 4096)),
        ("signature only", FileHeader.magic),
    ])
    func aFileWithNothingThatVerifiesIsDamageNotAnEmptyStore(name: String, bytes: [UInt8]) throws {
        let contents = try SnapshotFile.decode(bytes)
        #expect(contents.entries.all.isEmpty)
        #expect(contents.damage != nil, "\(name)")
    }

    @Test func aDamagedFileIsCopiedRecoveredReportedAndReplacedOnce() throws {
        let directory = try TemporaryDirectory()
        let (bytes, entries) = Self.sampleFile()
        var damaged = bytes
        damaged[Self.tableOffset(of: bytes) - 3] ^= 0xFF  // inside the last record, before the table
        try Self.writeStore(snapshot: damaged, in: directory)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        let error = try #require(reported.first)
        #expect(error.filePath == directory.storeURL.path)
        #expect(error.description.contains("recovered \(entries.count - 1) records"))
        #expect(store.storedKeys().count == entries.count - 1)

        let copies = try directory.fileNames().filter { $0.hasPrefix("preferences.store.damaged-") }
        #expect(copies.count == 1)
        let copy = try Data(contentsOf: directory.url.appendingPathComponent(try #require(copies.first)))
        #expect(Array(copy) == damaged)
        #expect(error.description.contains(try #require(copies.first)))

        // The file now holds what verified; opening it again finds no damage and makes no copy.
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
        #expect(reopened.storedKeys().count == entries.count - 1)
        #expect(try directory.fileNames().filter { $0.contains(".damaged-") }.count == 1)
    }

    /// A snapshot whose checksums all match but one of whose values does not decode, as only a
    /// writer other than this library's can leave: opening checks keys, not values, so the store
    /// opens and reads the rest; the value reads as none; the compaction that would drop it keeps a
    /// copy of the snapshot and reports it first.
    @Test func aValueThatVerifiesButDoesNotDecodeIsCopiedAndReportedByTheCompactionThatDropsIt() throws {
        let directory = try TemporaryDirectory()
        let snapshot = Self.snapshotWithAnUnreadableValue()
        try Self.writeStore(snapshot: snapshot, in: directory)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        #expect(store[PreferenceKey<Int>("a", default: 0)] == 1)
        #expect(store[PreferenceKey<Int>("broken", default: -1)] == -1)
        #expect(store[PreferenceKey<Int>("z", default: 0)] == 2)

        try store.compact()
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.description.contains("do not decode") == true)
        let copies = try directory.fileNames().filter { $0.hasPrefix("preferences.store.damaged-") }
        #expect(copies.count == 1)
        let copy = try Data(contentsOf: directory.url.appendingPathComponent(try #require(copies.first)))
        #expect(Array(copy) == snapshot)

        // The new snapshot holds the values that decoded, and nothing is reported again.
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
        #expect(reopened.storedKeys().map(\.name).sorted() == ["a", "z"])
        try reopened.compact()
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    /// A snapshot of generation 3 holding `a` = 1, `z` = 2, and `broken`, whose value has a tag no
    /// value has, every checksum matching.
    private static func snapshotWithAnUnreadableValue() -> [UInt8] {
        let a = EntryChange(key: ResolvedKey(namespace: "app", name: "a"), value: .signed(1))
        let z = EntryChange(key: ResolvedKey(namespace: "app", name: "z"), value: .signed(2))
        var broken = HandWrittenSnapshot.payloadSetting(namespace: "app", name: "broken")
        broken.append(UInt8(0xEE))
        return HandWrittenSnapshot.file(
            frames: HandWrittenSnapshot.frames([Record(changes: [a])])
                + HandWrittenSnapshot.frame(payload: broken.bytes) + HandWrittenSnapshot.frames([Record(changes: [z])]),
            generation: 3)
    }

    /// A compaction that fails after keeping the copy (here the snapshot's rename) still reports the
    /// values it left out: the store's memory no longer holds them, and the next compaction will not
    /// find them again.
    @Test func aCompactionThatFailsAfterCopyingStillReportsTheValuesItLeftOut() throws {
        let directory = try TemporaryDirectory()
        try Self.writeStore(snapshot: Self.snapshotWithAnUnreadableValue(), in: directory)
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        log.fail(.rename, with: EIO, where: { $0 == directory.storeURL.path })
        #expect(throws: PreferencesError.self) { try store.compact() }
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.description.contains(".damaged-") == true)
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.damaged-") })
        #expect(Array(try Data(contentsOf: directory.storeURL)) == Self.snapshotWithAnUnreadableValue())
    }

    /// A compaction that cannot keep a copy of a snapshot whose values it would leave out does not
    /// compact: it throws, the snapshot stays as it is, and the store refuses writes from then on.
    @Test func aCompactionThatCannotCopyLeavesTheSnapshotAndRefusesWrites() throws {
        let directory = try TemporaryDirectory()
        try Self.writeStore(snapshot: Self.snapshotWithAnUnreadableValue(), in: directory)
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        log.fail(.write, with: ENOSPC, where: { $0.contains(".damaged-") })
        let error = #expect(throws: PreferencesError.self) { try store.compact() }
        #expect(error?.code == .storeUnavailable)
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.damagedFile, .fileOperationFailed])
        #expect(Array(try Data(contentsOf: directory.storeURL)) == Self.snapshotWithAnUnreadableValue())
        log.fail(.write, with: nil)
        // Nor does a second compaction, once a copy could be kept: the store refuses writes.
        let again = #expect(throws: PreferencesError.self) { try store.compact() }
        #expect(again?.code == .storeUnavailable)
        #expect(Array(try Data(contentsOf: directory.storeURL)) == Self.snapshotWithAnUnreadableValue())
        let refused = #expect(throws: PreferencesError.self) {
            try store.setValue(3, for: PreferenceKey<Int>("a", default: 0))
        }
        #expect(refused?.code == .storeUnavailable)
        #expect(store[PreferenceKey<Int>("a", default: 0)] == 1)
    }

    /// A snapshot that cannot be mapped, as on a file system without mappings, is read instead.
    @Test(.enabled(if: FileSystem.canShareMemory, "only where writers share memory is a snapshot mapped"))
    func aSnapshotThatCannotBeMappedIsReadInstead() throws {
        let directory = try TemporaryDirectory()
        let (bytes, entries) = Self.sampleFile()
        try Self.writeStore(snapshot: bytes, in: directory)
        let log = FileOperationLog()
        log.fail(.map, with: ENODEV, where: { $0 == directory.storeURL.path })
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        #expect(log.performed.contains { $0.0 == .map && $0.path == directory.storeURL.path })
        #expect(store.errorChannel.takeBacklog().isEmpty)
        #expect(store.storedKeys().count == entries.count)
        #expect(store[PreferenceKey<Bool>("flag", default: false)] == true)
    }

    @Test func aGarbageFileOpensEmptyWithItsCopyKeptAndTheDamageReported() throws {
        let directory = try TemporaryDirectory()
        let garbage = Data("{\"not\": \"ours\"}".utf8)
        try garbage.write(to: directory.storeURL)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.storedKeys().isEmpty)
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.damagedFile])
        let copy = try #require(try directory.fileNames().first { $0.contains(".damaged-") })
        #expect(try Data(contentsOf: directory.url.appendingPathComponent(copy)) == garbage)
        store[.count] = 1
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 1)
    }

    @Test func throwErrorLeavesADamagedFileExactlyAsItIs() throws {
        let directory = try TemporaryDirectory()
        let damaged = Array(Self.sampleFile().bytes.dropLast(5))
        try Self.writeStore(snapshot: damaged, in: directory)
        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: directory.storeURL, ifDamaged: .throwError)
        }
        #expect(error?.code == .damagedFile)
        #expect(try directory.fileNames() == ["preferences.store", "preferences.store.lock", "preferences.store.log"])
        #expect(Array(try Data(contentsOf: directory.storeURL)) == damaged)
    }

    @Test func aFileFromANewerVersionIsNeitherReadNorReplaced() throws {
        let directory = try TemporaryDirectory()
        var bytes = SnapshotFile.encode([ResolvedKey(namespace: "app", name: "a"): .bool(true)], generation: 1)
        let newer = FileHeader.Kind.snapshot.currentVersion + 1
        bytes[8] = UInt8(newer)  // a version to come, with the header's checksum made to match
        var writer = ByteWriter()
        writer.append(CRC32C.checksum(bytes[0..<(FileHeader.size - 4)]))
        bytes.replaceSubrange((FileHeader.size - 4)..<FileHeader.size, with: writer.bytes)
        try Data(bytes).write(to: directory.storeURL)
        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: directory.storeURL)
        }
        #expect(
            error
                == PreferencesError(
                    .unsupportedFormatVersion(path: directory.storeURL.path, found: newer, supported: newer - 1)))
        #expect(Array(try Data(contentsOf: directory.storeURL)) == bytes)
        #expect(try directory.fileNames().filter { !$0.hasSuffix(".lock") } == ["preferences.store"])
    }

    @Test func aDamagedFileThatCannotBeCopiedIsLeftAloneAndWritesAreRefused() throws {
        let directory = try TemporaryDirectory()
        let damaged = Array(Self.sampleFile().bytes.dropLast(5))
        try Self.writeStore(snapshot: damaged, in: directory)
        let log = FileOperationLog()
        log.fail(.write, with: ENOSPC, where: { $0.contains(".damaged-") })
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile, .fileOperationFailed])
        #expect(reported.first?.description.contains("no copy was kept") == true)
        #expect(
            try directory.fileNames() == ["preferences.store", "preferences.store.lock", "preferences.store.log"],
            "a partial copy was left behind"
        )
        #expect(store[PreferenceKey<Bool>("flag", default: false)] == true)

        log.fail(.write, with: nil)
        let fresh = PreferenceKey<Int>("fresh", default: 0)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(5, for: fresh) }
        #expect(error?.code == .storeUnavailable)
        #expect(Array(try Data(contentsOf: directory.storeURL)) == damaged)
        #expect(store[fresh] == 0)
    }

    @Test func aFileThatCannotBeReadMakesOpeningThrow() throws {
        let directory = try TemporaryDirectory()
        try FileManager().createDirectory(at: directory.storeURL, withIntermediateDirectories: false)
        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: directory.storeURL)
        }
        #expect(error?.code == .fileOperationFailed)
        #expect(error?.filePath == directory.storeURL.path)
        #expect(error?.description.contains("Is a directory") == true)
    }
}
