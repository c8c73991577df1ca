import Foundation
import Testing

@testable import Preferences

/// Writes, removals, transactions and `update`, against every backend.
struct StoreWritingTests {
    @Test(arguments: BackendKind.allCases)
    func valuesOutliveTheStore(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        fixture.store[.flag] = true
        fixture.store[.count] = 42
        fixture.store[.theme] = .dark
        fixture.store[.vendorFlag] = true
        let reopened = try fixture.reopened()
        #expect(reopened[.flag] == true)
        #expect(reopened[.count] == 42)
        #expect(reopened[.theme] == .dark)
        #expect(reopened[.vendorFlag] == true)
        #expect(reopened[.globalFlag] == false)
    }

    @Test(arguments: BackendKind.allCases)
    func removingAValueGivesTheDefaultAgain(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        fixture.store[.count] = 5
        try fixture.store.removeValue(for: .count)
        #expect(fixture.store[.count] == 0)
        #expect(!fixture.store.contains(.count))
        #expect(try fixture.reopened().value(for: .count) == nil)
    }

    @Test(arguments: BackendKind.allCases)
    func removingANamespaceRemovesOnlyItsEntries(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = fixture.store
        store[.flag] = true
        store[.count] = 1
        store[.vendorFlag] = true
        store[.globalFlag] = true
        try store.removeAll(in: .app)
        #expect(
            store.storedKeys() == [StoredKey("flag", in: .global), StoredKey("flag", in: .custom("com.vendor.sdk"))])
        #expect(store.storedKeys(in: .app).isEmpty)
        try store.removeAll(in: .custom("com.vendor.sdk"))
        #expect(try fixture.reopened().storedKeys() == [StoredKey("flag", in: .global)])
    }

    @Test func storedKeysAreListedByNamespaceAndName() {
        let store = PreferencesStore.inMemory()
        store[.title] = "a"
        store[.count] = 1
        store[.globalFlag] = true
        _ = store[.ratio]  // read, never stored: not listed
        #expect(store.storedKeys() == [StoredKey("flag", in: .global), StoredKey("count"), StoredKey("title")])
        #expect(store.storedKeys(in: .global) == [StoredKey("flag", in: .global)])
        #expect(store.storedKeys().map(\.description) == ["global:flag", "app:count", "app:title"])
    }

    @Test(arguments: BackendKind.allCases)
    func updateReadsChangesAndWritesAtomically(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let first = try fixture.store.update(.count) { value -> Int in
            value += 1
            return value
        }
        try fixture.store.update(.count) { $0 += 10 }
        #expect(first == 1)
        #expect(try fixture.reopened()[.count] == 11)
    }

    @Test func updateOfAValueThatCannotBeReadThrowsAndWritesNothing() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<String>("count", default: "")] = "seven"
        var bodyRan = false
        let error = #expect(throws: PreferencesError.self) {
            try store.update(.count) { _ in bodyRan = true }
        }
        #expect(error?.code == .typeMismatch)
        #expect(!bodyRan)
        #expect(store[PreferenceKey<String>("count", default: "")] == "seven")
    }

    @Test(arguments: BackendKind.allCases)
    func aTransactionCommitsEveryWriteTogether(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        fixture.store[.title] = "old"
        let seen = try fixture.store.transaction { preferences -> String in
            preferences[.count] = 3
            preferences[.title] = "new"
            preferences[.flag] = true
            try preferences.setValue(Pet(name: "Rex", age: 2), for: .pet)
            preferences.removeValue(for: .flag)
            return preferences[.title] + String(preferences[.count])
        }
        #expect(seen == "new3")
        let reopened = try fixture.reopened()
        #expect(reopened[.title] == "new")
        #expect(reopened[.count] == 3)
        #expect(reopened[.pet] == Pet(name: "Rex", age: 2))
        #expect(!reopened.contains(.flag))
    }

    @Test(arguments: [PreferencesStore.Durability.standard, .synchronous])
    func aTransactionOfManyKeysIsOneWriteToTheLog(durability: PreferencesStore.Durability) throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.flag] = true  // creates the log
        let before = log.counts
        try store.transaction(durability: durability) { preferences in
            for index in 0..<100 {
                preferences[PreferenceKey<Int>("key\(index)", default: 0)] = index
            }
        }
        #expect(log.count(of: .write) - before[.write, default: 0] == 1)
        #expect(log.count(of: .fsync) - before[.fsync, default: 0] == (durability == .synchronous ? 1 : 0))
        #expect(log.count(of: .rename) == before[.rename, default: 0])
        #expect(try PreferencesStore(fileURL: directory.storeURL).storedKeys().count == 101)
    }

    @Test func flushSyncsTheLogAndStandardWritesDoNot() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.count] = 1
        let synced = log.count(of: .fsync)
        store[.count] = 2
        #expect(log.count(of: .fsync) == synced)
        try store.flush()
        #expect(log.count(of: .fsync) == synced + 1)

        log.fail(.fsync, with: EIO)
        let error = #expect(throws: PreferencesError.self) { try store.flush() }
        #expect(error?.filePath == directory.logURL.path)
    }

    /// Writes in standard durability until the log is compacted; returns the operations it took.
    private func writeUntilCompacted(
        _ store: PreferencesStore,
        _ log: FileOperationLog
    ) throws -> ArraySlice<(FileSystem.Operation, path: String)> {
        let before = log.performed.count
        // The snapshot's and the log's: the history file is renamed into place only when it is made.
        let renames = { log.performed.filter { $0.0 == .rename && !$0.path.hasSuffix(".history") }.count }
        let renamed = renames()
        var written = 0
        while renames() == renamed && written < 1_000 {
            try store.setValue("value \(written)", for: .title)
            written += 1
        }
        try #require(renames() == renamed + 2, "no compaction in \(written) writes")
        return log.performed[before...]
    }

    /// How many times `operations` flushed a folder: opening it and flushing it count one each.
    private func folderFlushes(in operations: ArraySlice<(FileSystem.Operation, path: String)>) -> Int {
        operations.filter { $0.0 == .fsyncDirectory }.count / 2
    }

    @Test func aCompactionInStandardDurabilityFlushesTheSnapshotAndLeavesTheNewLogToTheFirstFlushedCommit()
        throws
    {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: log.fileSystem, compactionMinimumBytes: 256)
        store[.count] = 1  // creates the log, flushed
        let compaction = try writeUntilCompacted(store, log)
        let synced = compaction.filter { $0.0 == .fsync }.map(\.path)
        #expect(synced.count == 1 && synced.allSatisfy { $0.hasPrefix(directory.storeURL.path + ".tmp-") })
        #expect(folderFlushes(in: compaction) == 1, "the snapshot's rename is flushed, the log's is not")
        // Neither the snapshot's temporary file nor the new log's is left behind.
        #expect(
            try directory.fileNames().sorted() == [
                "preferences.store", "preferences.store.history", "preferences.store.lock", "preferences.store.log",
            ])

        // The first commit that is flushed flushes the new log's name too; the next one need not.
        for expectedFolderSyncs in [1, 0] {
            let before = log.performed.count
            try store.transaction(durability: .synchronous) { $0[.count] += 1 }
            let commit = log.performed[before...]
            #expect(commit.filter { $0.0 == .fsync }.map(\.path) == [directory.logURL.path])
            #expect(folderFlushes(in: commit) == expectedFolderSyncs)
        }
        // So does a flush after the next compaction.
        _ = try writeUntilCompacted(store, log)
        let before = log.performed.count
        try store.flush()
        #expect(log.performed[before...].map(\.0) == [.fsync, .fsyncDirectory, .fsyncDirectory])
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 3)
    }

    @Test func aSynchronousCommitIntoALogAnotherStoreMadeFlushesTheLogsName() throws {
        let directory = try TemporaryDirectory()
        let first = try PreferencesStore(fileURL: directory.storeURL, compactionMinimumBytes: 64)
        for index in 0..<100 {
            try first.setValue("value \(index)", for: .title)
        }
        let log = FileOperationLog()
        let second = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        let before = log.performed.count
        try second.transaction(durability: .synchronous) { $0[.count] = 7 }
        let commit = log.performed[before...]
        #expect(commit.filter { $0.0 == .fsync }.map(\.path) == [directory.logURL.path])
        #expect(folderFlushes(in: commit) == 1)
        #expect(first[.count] == 7)
    }

    struct Cancelled: Error {}

    @Test(arguments: BackendKind.allCases)
    func aTransactionWhoseBodyThrowsWritesNothing(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        fixture.store[.count] = 1
        #expect(throws: Cancelled.self) {
            try fixture.store.transaction { preferences in
                preferences[.count] = 2
                preferences[.title] = "changed"
                throw Cancelled()
            }
        }
        let reopened = try fixture.reopened()
        #expect(reopened[.count] == 1)
        #expect(!reopened.contains(.title))
    }

    @Test func aValueThatCannotBeEncodedFailsTheWholeTransaction() throws {
        let store = PreferencesStore.inMemory()
        let error = #expect(throws: PreferencesError.self) {
            try store.transaction { preferences in
                preferences[.count] = 9
                preferences[.measurement] = Measurement(value: .nan)
            }
        }
        #expect(error?.code == .encodingFailed)
        #expect(store[.count] == 0)
    }

    @Test func aTransactionBodyMayWriteToTheStoreDirectlyWithoutDeadlocking() throws {
        let store = PreferencesStore.inMemory()
        try store.transaction { preferences in
            store[.title] = "direct"
            preferences[.count] = preferences[.title].count
        }
        #expect(store[.title] == "direct")
        #expect(store[.count] == 6)
    }

    @Test(arguments: BackendKind.allCases)
    func aValueThatCannotBeEncodedThrowsAndKeepsTheOldValue(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        fixture.store[.measurement] = Measurement(value: 1.5)
        let error = #expect(throws: PreferencesError.self) {
            try fixture.store.setValue(Measurement(value: .infinity), for: .measurement)
        }
        #expect(error?.code == .encodingFailed)
        #expect(error?.key == StoredKey("measurement"))
        #expect(error?.description.contains("Measurement") == true)
        #expect(fixture.store[.measurement] == Measurement(value: 1.5))
        #expect(try fixture.reopened()[.measurement] == Measurement(value: 1.5))
    }

    @Test func theSubscriptReportsAValueThatCannotBeEncodedAndKeepsTheOldValue() throws {
        let store = PreferencesStore.inMemory()
        store[.measurement] = Measurement(value: 2)
        store[.measurement] = Measurement(value: .nan)
        #expect(store[.measurement] == Measurement(value: 2))
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.encodingFailed])
        #expect(reported.first?.description.contains("Nothing was written") == true)
    }

    @Test func writingTheValueAlreadyStoredTouchesNoFile() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.title] = "same"
        store[.pet] = Pet(name: "Rex", age: 1)
        let before = log.counts
        store[.title] = "same"
        store[.pet] = Pet(name: "Rex", age: 1)
        try store.removeValue(for: .count)
        try store.transaction { $0[.title] = "same" }
        #expect(log.counts == before)
    }

    /// Writes through one key to two stores in turn, and through two keys of the same name, each
    /// reach the slot their store keeps for that name, and the entry its engine keeps: a key's
    /// number is its name's in every store, and the hint a key carries of where the last engine to
    /// write it keeps its entry is checked before it is used, never trusted.
    @Test(arguments: BackendKind.allCases)
    func writesThroughAKeyTwoStoresShareAndThroughTwinKeysReachTheirOwnSlots(kind: BackendKind) throws {
        let (first, second) = (try StoreFixture(kind), try StoreFixture(kind))
        let key = PreferenceKey<Int>("shared", default: 0)
        let twin = PreferenceKey<Int>("shared", default: 0)
        let other = PreferenceKey<Int>("other", default: 0)
        for round in 1...50 {
            try first.store.setValue(round, for: other)
            try first.store.setValue(round, for: key)
            try second.store.setValue(-round, for: key)
            #expect(first.store[twin] == round && second.store[twin] == -round)
            try first.store.setValue(round + 1_000, for: twin)
            #expect(first.store[key] == round + 1_000 && second.store[key] == -round)
            #expect(first.store[other] == round)
        }
        if kind == .file {
            #expect(try first.reopened()[key] == 1_050)
            #expect(try second.reopened()[key] == -50)
        }
    }

    /// A write compares the value with memory before catching up, so a value memory holds is
    /// written all the same when another store has committed since: skipping it would leave the
    /// other store's value in place.
    @Test func writingTheValueMemoryHoldsWritesItWhenAnotherStoreChangedItSince() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 1
        other[.count] = 2
        store[.count] = 1
        #expect(store[.count] == 1)
        #expect(other[.count] == 1)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 1)
    }

    /// A log that outgrows the address space its mapping first took (1 MiB) is mapped again,
    /// larger, and keeps every record: read back by the store that wrote it, by another store on
    /// the same file, and after reopening.
    @Test func aLogGrownPastItsFirstMappingKeepsEveryRecord() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL, compactionMinimumBytes: 1 << 26)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        let keys = (0..<100).map { PreferenceKey<String>("key\($0)", default: "") }
        let padding = String(repeating: "x", count: 200)
        for round in 0..<6_000 {
            try store.setValue("\(round) \(padding)", for: keys[round % keys.count])
        }
        let log = try FileManager().attributesOfItem(atPath: directory.logURL.path)[.size] as? Int ?? 0
        #expect(log > 1 << 20, "the log never outgrew its first mapping")
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        for (index, key) in keys.enumerated() {
            let expected = "\(5_900 + index) \(padding)"
            #expect(store[key] == expected)
            #expect(other[key] == expected)
            #expect(reopened[key] == expected)
        }
        #expect(store.errorChannel.takeBacklog().isEmpty)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }
}
