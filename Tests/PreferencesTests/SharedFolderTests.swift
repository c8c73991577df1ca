import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store in a folder every user can write (world-writable and sticky, as `/tmp` is), where another
/// user may have made the store's lock file first, or a link in its place.
struct SharedFolderTests {
    private let counter = PreferenceKey<Int>("counter", default: -1)

    /// A temporary folder made world-writable and sticky, with a store that holds 1.
    private func sharedFolderWithAStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        try #require(chmod(directory.url.path, 0o1777) == 0)
        try PreferencesStore(fileURL: directory.storeURL).setValue(1, for: counter)
        return directory
    }

    /// Giving a file to another user takes a privileged process: the tests run as root in CI.
    @Test(.enabled(if: geteuid() == 0, "giving a file to another user needs root"))
    func aLockFileOfAnotherUserIsRefusedWithTheReasonAndValuesStillRead() throws {
        let directory = try sharedFolderWithAStore()
        #expect(chown(directory.lockURL.path, 4242, 4242) == 0)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 1)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(2, for: counter) }
        #expect(error?.code == .storeUnavailable)
        #expect("\(error.map { "\($0)" } ?? "")".contains("belongs to user 4242"))
        #expect(store.errorChannel.takeBacklog().contains { "\($0)".contains("belongs to user 4242") })
    }

    @Test func aLockFileThatIsALinkIsRefusedWithTheReason() throws {
        let directory = try sharedFolderWithAStore()
        let elsewhere = try TemporaryDirectory()
        let target = elsewhere.url.appendingPathComponent("planted.lock")
        try FileManager().moveItem(at: directory.lockURL, to: target)
        try FileManager().createSymbolicLink(atPath: directory.lockURL.path, withDestinationPath: target.path)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 1)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(2, for: counter) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("symbolic link"))
    }

    /// The common case: this user's own store in such a folder opens and writes again and again.
    @Test func aStoreOfThisUsersInASharedFolderOpensAndWrites() throws {
        let directory = try sharedFolderWithAStore()
        for value in 2...4 {
            let store = try PreferencesStore(fileURL: directory.storeURL)
            #expect(store[counter] == value - 1)
            try store.setValue(value, for: counter)
            #expect(store.errorChannel.takeBacklog().isEmpty)
        }
    }

    /// A hard link put where the lock file goes, to a file of this user's elsewhere, is refused: the
    /// store would write its lock page over that file.
    @Test func aLockFileThatIsAHardLinkIsRefusedAndItsTargetLeftAlone() throws {
        let directory = try sharedFolderWithAStore()
        let elsewhere = try TemporaryDirectory()
        let target = elsewhere.url.appendingPathComponent("notes.txt")
        try Data("mine".utf8).write(to: target)
        try FileManager().removeItem(at: directory.lockURL)
        try #require(link(target.path, directory.lockURL.path) == 0)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 1)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(2, for: counter) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("not a plain file of one name"))
        #expect(try Data(contentsOf: target) == Data("mine".utf8))
    }

    /// Outside such a folder, the lock file of another user is used as before: the store's owner
    /// may run a tool as root, whose lock file the owner then uses.
    @Test(.enabled(if: geteuid() == 0, "giving a file to another user needs root"))
    func aLockFileOfAnotherUserInAPrivateFolderIsUsed() throws {
        let directory = try TemporaryDirectory()
        try PreferencesStore(fileURL: directory.storeURL).setValue(1, for: counter)
        #expect(chown(directory.lockURL.path, 4242, 4242) == 0)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(2, for: counter)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[counter] == 2)
    }
}
