import Foundation
import Testing

@testable import Preferences

/// A write the file system refuses throws, names the operation and path, and changes nothing:
/// not the file, not the store's memory, and no temporary file is left behind.
struct FileFailureTests {
    @Test(arguments: [
        (FileSystem.Operation.open, ENOSPC),
        (.write, ENOSPC),
        (.fsync, EIO),
        (.rename, EROFS),
    ])
    func aFailedWriteThrowsAndChangesNothing(operation: FileSystem.Operation, errorNumber: Int32) throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.count] = 1
        let before = try Data(contentsOf: directory.storeURL)

        log.fail(operation, with: errorNumber)
        let error = #expect(throws: PreferencesError.self) {
            try store.setValue(2, for: .count)
        }
        #expect(error?.code == .fileOperationFailed)
        #expect(error?.description.contains(operation.rawValue) == true)
        #expect(error?.description.contains(systemErrorDescription(errorNumber)) == true)
        #expect(error?.filePath?.hasPrefix(directory.storeURL.path) == true)

        #expect(store[.count] == 1)
        #expect(try Data(contentsOf: directory.storeURL) == before)
        #expect(try directory.fileNames() == ["preferences.store"])

        log.fail(operation, with: nil)
        try store.setValue(3, for: .count)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 3)
    }

    @Test func aFolderSyncThatFailsAfterTheRenameKeepsTheWriteAndReportsIt() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.count] = 1
        log.fail(.fsyncDirectory, with: EIO)
        // The new file is in place once renamed, so memory follows it rather than lag behind the disk.
        try store.setValue(2, for: .count)
        #expect(store[.count] == 2)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 2)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.fileOperationFailed])
        #expect(reported.first?.description.contains("fsync the directory") == true)
    }

    @Test func theSubscriptReportsAFailedWriteAndKeepsTheOldValue() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        store[.title] = "kept"
        log.fail(.fsync, with: ENOSPC)
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
        log.fail(.rename, with: EXDEV)
        #expect(throws: PreferencesError.self) {
            try store.transaction { preferences in
                preferences[.count] = 1
                preferences[.title] = "a"
            }
        }
        #expect(store.storedKeys().isEmpty)
        #expect(!FileManager().fileExists(atPath: directory.storeURL.path))
    }

    @Test func aMissingFolderIsCreatedOnTheFirstWrite() throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("a/b/c/preferences.store")
        let store = try PreferencesStore(fileURL: url)
        #expect(!FileManager().fileExists(atPath: url.path))
        store[.flag] = true
        #expect(try PreferencesStore(fileURL: url)[.flag] == true)
    }

    @Test func aFolderThatCannotBeCreatedFailsTheWriteThatNeedsIt() throws {
        let directory = try TemporaryDirectory()
        let log = FileOperationLog()
        let url = directory.url.appendingPathComponent("settings/preferences.store")
        let store = try PreferencesStore(fileURL: url, fileSystem: log.fileSystem)
        log.fail(.createDirectory, with: EACCES)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(true, for: .flag) }
        #expect(error?.code == .fileOperationFailed)
        #expect(error?.filePath == directory.url.appendingPathComponent("settings").path)
        #expect(store[.flag] == false)
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
            .fileOperationFailed(path: "/x/preferences.store", operation: "read", errorNumber: EACCES))
        let store = PreferencesStore(
            backend: UnavailableBackend(location: "/x/preferences.store", reason: reason),
            entries: [:],
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
