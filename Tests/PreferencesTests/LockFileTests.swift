import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Another program shortening, deleting or replacing the lock file while stores use it.
struct LockFileTests {
    private let counter = PreferenceKey<Int>("counter", default: -1)

    @Test func aLockFileShortenedByAnotherProgramKillsNoReaderAndNoWriter() throws {
        let directory = try TemporaryDirectory()
        let reader = try PreferencesStore(fileURL: directory.storeURL)
        let writer = try PreferencesStore(fileURL: directory.storeURL)
        try writer.setValue(1, for: counter)
        #expect(reader[counter] == 1)

        // Every read compares the mapped commit count: without the guard this read ends the
        // process with SIGBUS.
        #expect(truncate(directory.lockURL.path, 0) == 0)
        #expect(reader[counter] == 1)
        try writer.setValue(2, for: counter)
        #expect(reader[counter] == 2)

        #expect(truncate(directory.lockURL.path, 0) == 0)
        try writer.setValue(3, for: counter)
        #expect(reader[counter] == 3)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[counter] == 3)
        #expect(try FileManager().attributesOfItem(atPath: directory.lockURL.path)[.size] as? Int == 4096)
    }

    @Test func aStoreSeesOtherWritesAfterItsLockFileWasShortenedWhileItWasIdle() throws {
        let directory = try TemporaryDirectory()
        let reader = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reader[counter] == -1)
        #expect(truncate(directory.lockURL.path, 0) == 0)
        let child = try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "child", "3"])
        let (status, errors) = child.wait()
        #expect(status == 0, "\(errors)")
        #expect(reader[PreferenceKey<Int>("child-2", default: -1, in: .custom("harness"))] == 2)
    }

    @Test func writersKeepLockingOneFileWhenTheLockFileIsDeletedOrReplaced() throws {
        let directory = try TemporaryDirectory()
        let first = try PreferencesStore(fileURL: directory.storeURL)
        try first.setValue(1, for: counter)
        try FileManager().removeItem(at: directory.lockURL)
        // Opened now, this store creates a new lock file; the first still holds the deleted one.
        let second = try PreferencesStore(fileURL: directory.storeURL)
        try second.update(counter) { $0 += 1 }
        try first.update(counter) { $0 += 1 }
        #expect(second[counter] == 3)

        let replacement = directory.url.appendingPathComponent("replacement")
        try Data(count: 4096).write(to: replacement)
        #expect(rename(replacement.path, directory.lockURL.path) == 0)
        try first.update(counter) { $0 += 1 }
        try second.update(counter) { $0 += 1 }
        #expect(first[counter] == 5)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[counter] == 5)
    }

    /// Each deletion comes once the writers have moved to the lock file made after the last one.
    /// (Deleting it again while a writer still holds an older one, or opening the store exactly
    /// while a deleted lock file is held, lets two writers lock different files: no check after
    /// locking can see a lock held on a file nobody can find any more.)
    @Test func twoWriterProcessesLoseNothingWhileTheLockFileIsDeletedAgainAndAgain() throws {
        let directory = try TemporaryDirectory()
        _ = try PreferencesStore(fileURL: directory.storeURL)
        let children = try (0..<2).map { index in
            try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "p\(index)", "2000"])
        }
        var deletions = 0
        while children.contains(where: { $0.process.isRunning }) {
            if unlink(directory.lockURL.path) == 0 {
                deletions += 1
            }
            usleep(20_000)
        }
        for child in children {
            let (status, errors) = child.wait()
            #expect(status == 0, "\(errors)")
        }
        #expect(deletions > 0, "the lock file was never deleted while the writers ran")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.storedKeys(in: .custom("harness")).count == 4_000)
    }
}
