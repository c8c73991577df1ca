import Foundation
import Testing

@testable import Preferences

/// A write the file system refuses throws, names the operation and path, and changes nothing:
/// not the files, not the store's memory, and no temporary file is left behind.
struct FileFailureTests {
    @Test(arguments: [
        (FileSystem.Operation.read, EIO),
        (.truncate, EIO),
        (.write, ENOSPC),
        (.fsync, EIO),
    ])
    func aFailedAppendThrowsAndChangesNothing(operation: FileSystem.Operation, errorNumber: Int32) throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        var fileSystem = log.fileSystem
        // Reading the log's size and cutting a torn tail off it are steps of the `pwrite` engine,
        // Apple's, before each append; the Linux engine looks at its mapping of the log instead.
        fileSystem.sharesMemory = operation != .read && operation != .truncate
        let store = try PreferencesStore(
            fileURL: directory.storeURL,
            durability: .synchronous,
            fileSystem: fileSystem
        )
        store[.count] = 1
        if operation == .truncate {
            // Leave a torn record for the next append to cut off.
            let handle = try FileHandle(forWritingTo: directory.logURL)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data([1, 2, 3]))
            try handle.close()
        }
        let before = try directory.storeBytes()

        log.fail(operation, with: errorNumber)
        let error = #expect(throws: PreferencesError.self) {
            try store.setValue(2, for: .count)
        }
        #expect(error?.code == .fileOperationFailed)
        #expect(error?.description.contains(systemErrorDescription(errorNumber)) == true)
        #expect(error?.filePath == directory.logURL.path)
        #expect(store[.count] == 1)
        if operation != .truncate {
            #expect(try directory.storeBytes() == before)
        }
        #expect(try directory.fileNames() == ["preferences.store.lock", "preferences.store.log"])

        log.fail(operation, with: nil)
        try store.setValue(3, for: .count)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 3)
    }

    @Test(arguments: [
        (FileSystem.Operation.open, ENOSPC),
        (.write, ENOSPC),
        (.fsync, EIO),
        (.rename, EROFS),
    ])
    func aFailedLogCreationThrowsAndLeavesNoFileBehind(operation: FileSystem.Operation, errorNumber: Int32) throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        log.fail(operation, with: errorNumber)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(2, for: .count) }
        #expect(error?.code == .fileOperationFailed)
        #expect(error?.description.contains(operation.rawValue) == true)
        #expect(store[.count] == 0)
        #expect(try directory.fileNames() == ["preferences.store.lock"])
    }

    /// A write catches up with other stores' commits before it appends; when the append then fails,
    /// what it caught up with still reaches memory. (The engine has taken it in, so no later read
    /// would bring it.)
    @Test func aWriteThatFailsAfterCatchingUpStillBringsMemoryUpToDate() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 1
        other[.title] = "from the other store"

        log.fail(.write, with: ENOSPC)
        #expect(throws: PreferencesError.self) {
            try store.setValue(2, for: .count)
        }
        #expect(store[.title] == "from the other store")
        #expect(store[.count] == 1)

        log.fail(.write, with: nil)
        try store.setValue(3, for: .count)
        #expect(other[.count] == 3)
        #expect(other[.title] == "from the other store")
    }

    /// A commit another store made under a lock file since deleted, which this store's commit
    /// reads in from the log just before its own append fails, still reaches this store's memory:
    /// the engine has taken it in, and no later catch-up would bring it again.
    @Test func aCommitReadInFromTheLogBeforeAnAppendFailsStillReachesMemory() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.count] = 1
        #expect(throws: PreferencesError.self) {
            try store.transaction { preferences in
                // Holding the old lock file, while another store commits under a new one.
                #expect(unlink(directory.lockURL.path) == 0)
                try PreferencesStore(fileURL: directory.storeURL).setValue("from the other store", for: .title)
                log.fail(.write, with: ENOSPC)
                preferences[.count] = 2
            }
        }
        #expect(store[.title] == "from the other store")
        #expect(store[.count] == 1)

        log.fail(.write, with: nil)
        try store.setValue(3, for: .count)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[.title] == "from the other store")
        #expect(reopened[.count] == 3)
    }

    @Test func aFolderSyncThatFailsAfterTheRenameKeepsTheWriteAndReportsIt() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        log.fail(.fsyncDirectory, with: EIO)
        // The new log is in place once renamed, so the write stands rather than leave memory behind.
        try store.setValue(2, for: .count)
        #expect(store[.count] == 2)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 2)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.fileOperationFailed])
        #expect(reported.first?.description.contains("fsync the directory") == true)
    }

    @Test func aCompactionThatCannotSucceedIsReportedOnceAndRetriedOnlyWhenTheLogHasDoubled() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(
            fileURL: directory.storeURL,
            fileSystem: log.fileSystem,
            compactionMinimumBytes: 256
        )
        store[.title] = "first"
        log.fail(.rename, with: ENOSPC, where: { $0.hasSuffix("preferences.store") })
        for index in 0..<200 {
            try store.setValue("value \(index)", for: .title)
        }
        // One cause, one report; and attempts spaced out as the log doubles, not one per write.
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.count == 1)
        #expect(reported.first?.code == .fileOperationFailed)
        #expect(reported.first?.description.contains("rename") == true)
        let attempts = log.count(of: .rename)
        #expect(attempts >= 2 && attempts <= 10, "\(attempts) compactions attempted in 200 writes")
        #expect(!FileManager().fileExists(atPath: directory.storeURL.path))
        #expect(try directory.fileNames().allSatisfy { !$0.contains(".tmp-") }, "a temporary snapshot was left")
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.title] == "value 199")

        log.fail(.rename, with: nil)
        var written = 0
        while !FileManager().fileExists(atPath: directory.storeURL.path) && written < 400 {
            try store.setValue("after \(written)", for: .title)
            written += 1
        }
        #expect(FileManager().fileExists(atPath: directory.storeURL.path), "no compaction after the cause went away")
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.title] == "after \(written - 1)")
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func theSubscriptReportsAFailedWriteAndKeepsTheOldValue() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.title] = "kept"
        log.fail(.write, with: ENOSPC)
        store[.title] = "lost"
        #expect(store[.title] == "kept")
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.fileOperationFailed])
        #expect(reported.first?.description.contains("No space left on device") == true)
    }

    @Test func aFailedTransactionWritesNoneOfItsValues() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.flag] = true
        log.fail(.write, with: EIO)
        #expect(throws: PreferencesError.self) {
            try store.transaction { preferences in
                preferences[.count] = 1
                preferences[.title] = "a"
            }
        }
        #expect(store.storedKeys() == [StoredKey("flag")])
        #expect(try PreferencesStore(fileURL: directory.storeURL).storedKeys() == [StoredKey("flag")])
    }

    @Test func aMissingFolderIsCreatedWhenTheStoreOpens() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("a/b/c")
        let store = try PreferencesStore(fileURL: folder.appendingPathComponent("preferences.store"))
        #expect(try FileManager().contentsOfDirectory(atPath: folder.path) == ["preferences.store.lock"])
        store[.flag] = true
        #expect(try PreferencesStore(fileURL: folder.appendingPathComponent("preferences.store"))[.flag] == true)
    }

    @Test func aStoreWhoseFolderCannotBeCreatedOpensReadOnlyAndSaysWhy() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        log.fail(.createDirectory, with: EACCES)
        let url = directory.url.appendingPathComponent("settings/preferences.store")
        let store = try PreferencesStore(fileURL: url, fileSystem: log.fileSystem)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.fileOperationFailed])
        #expect(reported.first?.filePath == directory.url.appendingPathComponent("settings").path)
        #expect(store[.flag] == false)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(true, for: .flag) }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.description.contains("read-only") == true)
    }

    @Test func aStoreUnderAFileInsteadOfAFolderCannotBeOpened() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.url.appendingPathComponent("blocker")
        try Data("a file where a folder should be".utf8).write(to: blocker)
        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore(fileURL: blocker.appendingPathComponent("preferences.store"))
        }
        #expect(error?.description.contains("Not a directory") == true)
    }

    @Test func aStoreWhoseFileCouldNotBeOpenedRefusesWritesAndSaysWhy() throws {
        let reason = PreferencesError(
            .fileOperationFailed(path: "/x/preferences.store", operation: "read", errorNumber: EACCES)
        )
        let store = PreferencesStore(
            backend: InMemoryBackend(location: "/x/preferences.store", refusal: reason),
            entries: StoredEntries(),
            appNamespace: "app",
            fileURL: URL(fileURLWithPath: "/x/preferences.store"),
            problems: [reason]
        )
        #expect(store[.count] == 0)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(1, for: .count) }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.description.contains("Permission denied") == true)
        #expect(store.errorChannel.takeBacklog() == [reason])
    }
}
