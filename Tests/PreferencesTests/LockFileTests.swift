import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Another program shortening, deleting or replacing the lock file.
struct LockFileTests {
    private let counter = PreferenceKey<Int>("counter", default: -1)

    /// A lock file shortened while no store has it open (to nothing, or inside its page) is
    /// lengthened and set up anew by the next store, and the store's values are all there.
    @Test(arguments: [0, 100])
    func aLockFileShortenedWhileNoStoreHasItOpenIsSetUpAnew(length: Int) throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try PreferencesStore(fileURL: directory.storeURL)
            try store.setValue(1, for: counter)
        }
        #expect(truncate(directory.lockURL.path, off_t(length)) == 0)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 1)
        try reopened.setValue(2, for: counter)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[counter] == 2)
        #expect(try FileManager().attributesOfItem(atPath: directory.lockURL.path)[.size] as? Int == 4096)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    /// A store copied while a writer holds its lock (as a backup, a restore or `cp -a` copies it)
    /// opens and writes: the copied mutex is held by a thread of no process, and an opener that
    /// finds nobody else has the copy open sets it up anew rather than wait for it for ever.
    @Test(.tags(.childProcesses)) func aStoreCopiedWhileAWriterHoldsTheLockOpensAndWrites() throws {
        let original = try TemporaryDirectory()
        let holder = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["hold", original.storeURL.path, "60"])
        defer { holder.killAbruptly() }
        holder.waitFor("holding")
        let copy = try TemporaryDirectory()
        for (from, to) in [
            (original.storeURL, copy.storeURL), (original.logURL, copy.logURL), (original.lockURL, copy.lockURL),
        ] where FileManager().fileExists(atPath: from.path) {
            try FileManager().copyItem(at: from, to: to)
        }
        let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))
        let wrote = try onOwnThread { () throws(PreferencesError) in
            do {
                let store = try PreferencesStore(fileURL: copy.storeURL)
                #expect(store[counter] == 1)
                try store.setValue(7, for: counter)
            } catch {
                Issue.record("the copy could not be written: \(error)")
            }
        }
        #expect(wrote, "the copy's writer waited for the copied lock")
        #expect(holder.isRunning, "the holder let go before the copy was written")
    }

    /// A page set up by a process that locks the file instead gets a mutex later.
    ///
    /// Once a process that locks the file (Apple's, whose page has no mutex) is done, the first
    /// process that locks with a mutex sets one up, and keeps the commit on record. Locking the
    /// zeros where the mutex would be would lock nothing.
    @Test(.enabled(if: FileSystem.canShareMemory, "the mutex is the Linux leaf"))
    func aPageSetUpWithoutAMutexGetsOneAndKeepsItsCommits() throws {
        let directory = try TemporaryDirectory()
        let path = directory.lockURL.path
        var fileLocking = FileSystem()
        fileLocking.sharesMemory = false
        let withoutMutex = try LockFile(path: path, fileSystem: fileLocking)
        try withoutMutex.lock(exclusive: true)
        let acknowledged = LockFile.Acknowledged(generation: 3, sequence: 7, committedEnd: 512)
        let count = withoutMutex.publish(acknowledged)
        withoutMutex.unlock()

        let first = try LockFile(path: path, fileSystem: FileSystem())
        let second = try LockFile(path: path, fileSystem: FileSystem())
        let locked = try onOwnThread { () throws(PreferencesError) in
            try first.lockAndUnlock()
        }
        #expect(locked)
        #expect(first.acknowledged == acknowledged)
        #expect(first.commitCount == count)
        // Now a mutex that keeps others out: held here, the other lock file cannot take it.
        try first.lock(exclusive: true)
        #expect(try !second.lockIfFree(exclusive: true), "two lock files held the lock at once")
        first.unlock()
        #expect(try second.lockIfFree(exclusive: true))
        second.unlock()
    }

    /// A store that only reads learns of a lock file deleted under it from the first writer that
    /// moves to the new one, and reads what is committed under that one.
    ///
    /// The writer moves at the commit where its check of the file's name falls: every 32nd lock
    /// (``LockFile/locksBetweenNameChecks``), opening's counted. The writes made before the
    /// deletion set which commit that is: with 29, 30 or 31 of them, the fourth, third or second
    /// after it; with fewer, none of the four, and the reader just reads along on the deleted
    /// file's page. Until the reader's catch-up under the lock has followed, its reads return what
    /// it last knew (see the durability article), so each value is waited for, for up to five
    /// seconds: one read right after the fourth commit would fail whenever the move comes with it.
    @Test(arguments: [29, 30, 31])
    func aReaderFollowsWritersToTheLockFileMadeAfterTheOldOneWasDeleted(writesBefore: Int) throws {
        let directory = try TemporaryDirectory()
        let reader = try PreferencesStore(fileURL: directory.storeURL)
        let writer = try PreferencesStore(fileURL: directory.storeURL)
        for index in 0..<writesBefore {
            try writer.setValue(100 + index, for: counter)
        }
        try writer.setValue(1, for: counter)
        #expect(reader[counter] == 1)
        #expect(unlink(directory.lockURL.path) == 0)
        func waitUntilTheReaderSees(_ value: Int) {
            let deadline = Date().addingTimeInterval(5)
            while reader[counter] != value && Date() < deadline {
                usleep(1_000)
            }
        }
        try writer.setValue(2, for: counter)
        try writer.setValue(3, for: counter)
        waitUntilTheReaderSees(3)
        #expect(reader[counter] == 3)
        try writer.setValue(4, for: counter)
        waitUntilTheReaderSees(4)
        #expect(reader[counter] == 4)
        #expect(FileManager().fileExists(atPath: directory.lockURL.path), "nobody moved to a new lock file")
        #expect(reader.errorChannel.takeBacklog().isEmpty)
    }

    /// A writer whose store's folder was deleted, lock file and all, cannot move to a new lock file:
    /// its write fails saying why, and nothing unlocks a lock it no longer holds.
    @Test func aWriteThatCannotMoveToANewLockFileThrows() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(0, for: counter)
        try FileManager().removeItem(at: directory.url)
        // The lock stamp confirms the deleted lock file for up to 31 locks; the next checks its name.
        var failure: PreferencesError?
        for value in 1...(LockFile.locksBetweenNameChecks + 2) where failure == nil {
            do {
                try store.setValue(value, for: counter)
            } catch let error as PreferencesError {
                failure = error
            }
        }
        let error = try #require(failure, "every write went on into the deleted files")
        #expect(error.filePath == directory.lockURL.path, "\(error)")
    }

    /// A store opened after the lock file was deleted, which only reads, sees what a store still
    /// holding the deleted file commits afterwards: opening stamped the log with the new page, so
    /// the writer's next lock moves it there rather than committing where the reader never looks.
    @Test func aStoreOpenedAfterTheLockFileWasDeletedSeesTheCommitsOfOneStillHoldingIt() throws {
        let directory = try TemporaryDirectory()
        let writer = try PreferencesStore(fileURL: directory.storeURL)
        try writer.setValue(1, for: counter)
        #expect(unlink(directory.lockURL.path) == 0)
        let reader = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reader[counter] == 1)
        for value in 2...4 {
            try writer.setValue(value, for: counter)
            #expect(reader[counter] == value)
        }
        #expect(writer.errorChannel.takeBacklog().isEmpty)
        #expect(reader.errorChannel.takeBacklog().isEmpty)
    }

    /// Each commit leaves the log stamped with the incarnation of the lock page it was made under,
    /// which a writer only stamps once it confirmed its lock file still had a name.
    @Test(.enabled(if: FileSystem.canShareMemory, "the stamp serves the mutex; `flock` checks the name on every lock"))
    func aCommitLeavesTheLogStampedWithItsLockPage() throws {
        let directory = try TemporaryDirectory()
        func stamps() throws -> (log: UInt64, page: UInt64) {
            let log = try Data(contentsOf: directory.logURL)
            let page = try Data(contentsOf: directory.lockURL)
            func word(_ data: Data, at offset: Int) -> UInt64 {
                data[offset..<(offset + 8)].enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * $1.offset) }
            }
            return (word(log, at: LogFile.lockStampOffset), word(page, at: 56))
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(1, for: counter)
        var (log, page) = try stamps()
        #expect(log == page && page != 0)
        // A new log, from a compaction, starts stamped; and a new lock file gets stamped.
        try store.compact()
        (log, page) = try stamps()
        #expect(log == page)
        #expect(unlink(directory.lockURL.path) == 0)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        try other.setValue(2, for: counter)
        let moved = try stamps()
        #expect(moved.log == moved.page && moved.page != page)
        try store.setValue(3, for: counter)
        #expect(try stamps() == moved, "the writer on the deleted file stamped the log with its old page")
        #expect(other[counter] == 3)
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

    /// A writer killed while recording a commit in the lock page leaves some of its words new and
    /// some old: opening reads that as no acknowledged commit, not as commits missing from the log.
    ///
    /// The page is left as a compaction's record killed after its first word would leave it: the
    /// generation of the compaction, with the sequence and end of the commit before it.
    @Test func aCommitHalfRecordedInTheLockPageIsNotReportedAsDamage() throws {
        let directory = try TemporaryDirectory()
        do {
            let store = try PreferencesStore(fileURL: directory.storeURL)
            for value in 1...5 {
                try store.setValue(value, for: counter)
            }
            try store.compact()
        }
        let page = try FileHandle(forUpdating: directory.lockURL)
        for (offset, word) in [(24, UInt64(5)), (32, UInt64(300))] {
            try page.seek(toOffset: UInt64(offset))
            try page.write(contentsOf: withUnsafeBytes(of: word.littleEndian) { Data($0) })
        }
        try page.close()
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[counter] == 5)
        #expect(reopened.errorChannel.takeBacklog().isEmpty, "a half-recorded commit was reported as damage")
        #expect(!(try directory.fileNames().contains { $0.contains(".damaged-") }))
    }

    /// A record another writer appended while this one held a lock file since deleted is adopted by
    /// this one's commit, never cut off as a dead writer's leftovers.
    ///
    /// The first store takes its lock before the file is deleted; the second, opened afterwards,
    /// locks a new file of its own and commits at the log's end while the first still holds the
    /// old one. The first store's commit must look past its log's end once more before it appends.
    @Test func aRecordAppendedUnderANewLockFileIsAdoptedByAWriterHoldingTheOldOne() throws {
        let directory = try TemporaryDirectory()
        let first = try PreferencesStore(fileURL: directory.storeURL)
        try first.setValue(1, for: counter)
        let other = PreferenceKey<Int>("other", default: -1)
        var second: PreferencesStore?
        try first.transaction { preferences in
            #expect(unlink(directory.lockURL.path) == 0)
            second = try PreferencesStore(fileURL: directory.storeURL)
            try second?.setValue(7, for: other)
            preferences[counter] = 2
        }
        #expect(first[other] == 7)
        #expect(first[counter] == 2)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[other] == 7, "the second writer's acknowledged commit was lost")
        #expect(reopened[counter] == 2)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    /// A writer started after the lock file was deleted under another locks the same file as it.
    ///
    /// The first writer checks its lock file by `fstat` every few locks, finds it deleted, and
    /// makes a new one; the second locks that one. Without the check the two would lock different
    /// files. What no check can see, a lock held on a file nobody can find any more, is kept out of
    /// the test: the second writer starts once the first has moved on, as the durability article
    /// says it must.
    @Test(.tags(.childProcesses)) func aWriterStartedAfterTheLockFileWasDeletedLocksTheSameFileAsTheOneAlreadyWriting()
        throws
    {
        let directory = try TemporaryDirectory()
        _ = try PreferencesStore(fileURL: directory.storeURL)
        func hasWritten(_ prefix: String) -> Bool {
            let log = (try? Data(contentsOf: directory.logURL)) ?? Data()
            return log.range(of: Data("\(prefix)-".utf8)) != nil
        }
        func waitUntil(_ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(5)
            while !condition() && Date() < deadline {
                usleep(1_000)
            }
        }
        let first = try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "p0", "6000"])
        waitUntil { hasWritten("p0") }
        #expect(unlink(directory.lockURL.path) == 0)
        // Within a few of the first writer's locks, it finds the path empty and makes the new file.
        waitUntil { FileManager().fileExists(atPath: directory.lockURL.path) }
        #expect(FileManager().fileExists(atPath: directory.lockURL.path), "the writer still locks the deleted file")
        let second = try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "p1", "3000"])
        waitUntil { hasWritten("p1") }
        // Deleted again while both write: they go on locking the deleted file together until one of
        // them checks by `fstat` and moves, leaving the old page abandoned, which sends the other
        // after it.
        #expect(unlink(directory.lockURL.path) == 0)
        for child in [first, second] {
            let (status, errors) = child.wait()
            #expect(status == 0, "\(errors)")
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.storedKeys(in: .custom("harness")).count == 9_000)
    }

    /// Runs `body` on a thread of its own, and returns whether it finished within five seconds; a
    /// thread stuck waiting for a lock is left behind.
    private func onOwnThread(_ body: @escaping @Sendable () throws(PreferencesError) -> Void) throws -> Bool {
        try finished(startOnOwnThread(body))
    }

    /// Starts `body` on a thread of its own; what it returns or throws is set once it finishes.
    private func startOnOwnThread(
        _ body: @escaping @Sendable () throws(PreferencesError) -> Void
    ) -> Locked<Result<Void, PreferencesError>?> {
        let outcome = Locked<Result<Void, PreferencesError>?>(nil)
        Thread {
            let result = Result<Void, PreferencesError> { () throws(PreferencesError) in try body() }
            outcome.withLock { $0 = result }
        }.start()
        return outcome
    }

    /// Whether a thread from ``startOnOwnThread(_:)`` finished within five seconds; rethrows what it threw.
    private func finished(_ outcome: Locked<Result<Void, PreferencesError>?>) throws -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let result = outcome.withLock({ $0 }) {
                try result.get()
                return true
            }
            usleep(1_000)
        }
        return false
    }
}

extension LockFile {
    /// Takes the exclusive lock and lets it go at once: whether a lock can be had.
    fileprivate func lockAndUnlock() throws(PreferencesError) {
        try lock(exclusive: true)
        unlock()
    }
}
