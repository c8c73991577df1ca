import Foundation
import Testing

@testable import Preferences

#if canImport(Observation)
    import Observation
#endif

/// The watch on other processes' commits runs only while something may observe the store: its
/// thread parks when nothing does, and ends with the store.
struct CommitWatcherTests {
    /// Waits up to five seconds for `condition`, then records an issue if it never held.
    private func waitUntil(
        _ description: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            guard Date() < deadline else {
                Issue.record("never \(description)", sourceLocation: sourceLocation)
                return
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    @Test func aStoreNobodyObservesDoesNotWatch() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 1
        _ = try store.value(for: .count)
        let watcher = try #require(store.commitWatcher)
        #expect(!watcher.isNeeded)
        #expect(!watcher.isWatching)
    }

    /// Observers watch until the last is cancelled, and ending one twice (cancelled, then
    /// released) counts once; the thread parks at the next commit it wakes for.
    @Test func anObserverWatchesUntilItIsCancelledAndTheThreadThenParks() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        let watcher = try #require(store.commitWatcher)
        var first: PreferencesObservation? = store.observe(.count) { _, _ in }
        let second = store.observe(anyOf: .flag) { _ in }
        #expect(watcher.isNeeded)
        waitUntil("started watching") { watcher.isWatching }
        first?.cancel()
        first = nil
        #expect(watcher.isNeeded)
        second.cancel()
        #expect(!watcher.isNeeded)
        other[.count] = 5
        waitUntil("parked after the next commit") { !watcher.isWatching }
        let third = store.observe(.count) { _, _ in }
        waitUntil("woke from its park") { watcher.isWatching }
        third.cancel()
    }

    /// Released, the store's watcher thread ends, and lets go of the lock file.
    @Test func theWatcherThreadEndsWithItsStore() throws {
        let directory = try TemporaryDirectory()
        weak var lockFile: LockFile?
        do {
            let store = try PreferencesStore(fileURL: directory.storeURL)
            lockFile = (store.backend as? FileEngine)?.lockFile
            let observation = store.observe(.count) { _, _ in }
            let watcher = try #require(store.commitWatcher)
            waitUntil("started watching") { watcher.isWatching }
            observation.cancel()
        }
        waitUntil("let go of the lock file") { lockFile == nil }
    }

    /// A store whose last reference its own observer drops, on the watcher thread that delivers
    /// the change, still ends that thread and lets go of the lock file, without waiting for itself:
    /// that wait woke every other process's watcher a thousand times.
    @Test(
        .enabled(if: ChildProcess.canCountWakeUps, "wake-ups are counted through Linux's /proc"),
        .tags(.childProcesses))
    func aStoreReleasedOnItsOwnWatcherThreadLetsGoAndWakesNobody() throws {
        let directory = try TemporaryDirectory()
        let other = try PreferencesStore(fileURL: directory.storeURL)
        let neighbour = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["observe", directory.storeURL.path])
        neighbour.waitFor("ready")
        neighbour.waitUntilIdle()
        let before = neighbour.voluntaryContextSwitches
        weak var lockFile: LockFile?
        let held = Locked<(store: PreferencesStore?, observation: PreferencesObservation?)>((nil, nil))
        do {
            let store = try PreferencesStore(fileURL: directory.storeURL)
            lockFile = (store.backend as? FileEngine)?.lockFile
            let observation = store.observe(.count) { _, _ in
                let last = held.withLock { held in
                    defer { held = (nil, nil) }
                    return held
                }
                _ = last
            }
            held.withLock { $0 = (store, observation) }
            let watcher = try #require(store.commitWatcher)
            waitUntil("started watching") { watcher.isWatching }
        }
        other[.count] = 1
        waitUntil("let go of the lock file") { lockFile == nil }
        // The commit wakes the neighbour's watcher once or twice.
        let wakeUps = neighbour.voluntaryContextSwitches - before
        #expect(wakeUps <= (ChildProcess.isUnderThreadSanitizer ? 60 : 20), "\(wakeUps) wake-ups of another process")
    }

    #if canImport(Observation)
        /// A subscript read may be tracked (the framework does not say), so it starts the watch;
        /// two changes later, every tracking of the key has been told of one, and the watch stops.
        @Test func aKeyReadThroughTheSubscriptIsWatchedForItsNextTwoChanges() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let other = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            let fired = Locked(0)
            withObservationTracking {
                _ = store[.count]
            } onChange: {
                fired.withLock { $0 += 1 }
            }
            #expect(watcher.isNeeded)
            other[.flag] = true
            // A change of another key, caught up with, ends nothing.
            waitUntil("caught up with the other key") { (try? store.value(for: .flag)) == true }
            #expect(watcher.isNeeded)
            other[.count] = 5
            waitUntil("told the tracking of the other store's change") { fired.withLock { $0 } == 1 }
            #expect(watcher.isNeeded)
            other[.count] = 6
            waitUntil("stopped watching after the second change") { !watcher.isNeeded }
            #expect(store[.count] == 6)
            #expect(watcher.isNeeded)
        }

        /// A tracker installed after its key's watch ended hears of the next change.
        ///
        /// A tracker is installed only once its scope has run: commits caught up with meanwhile can
        /// end the key's watch before the tracker exists. The next commit from elsewhere is still
        /// caught up with and announced, and reaches it.
        @Test func aTrackerInstalledAfterItsKeysWatchEndedHearsOfTheNextChange() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let other = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            let fired = Locked(false)
            withObservationTracking {
                _ = store[.count]
                // Each of this store's writes catches up first: two changes of the key, each
                // announced to no tracker yet, end its watch.
                other[.count] = 1
                store[.flag] = true
                other[.count] = 2
                store[.flag] = false
                #expect(!watcher.isNeeded)
            } onChange: {
                fired.withLock { $0 = true }
            }
            #expect(!fired.withLock { $0 })
            other[.count] = 7
            waitUntil("told the late tracker of the next change") { fired.withLock { $0 } }
        }

        /// The watch, once stopped, waits for a commit from elsewhere before it parks: woken by
        /// this store's own commit (another process's watcher asleep makes every commit wake all
        /// sleepers), it has nothing to announce, and watches on.
        @Test(.tags(.childProcesses))
        func aStoppedWatchIsNotEndedByTheStoresOwnCommit() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let other = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            let neighbour = try ChildProcess.startCollectingOutput(
                "PreferencesHarness", ["observe", directory.storeURL.path])
            neighbour.waitFor("ready")
            _ = store[.count]
            waitUntil("started watching") { watcher.isWatching }
            store[.count] = 1
            store[.count] = 2
            #expect(!watcher.isNeeded)
            store[.flag] = true
            Thread.sleep(forTimeInterval: 0.2)
            #expect(watcher.isWatching, "parked on its own commit, with nothing from elsewhere announced")
            other[.flag] = false
            waitUntil("parked after a commit from elsewhere") { !watcher.isWatching }
        }

        /// A key read again before its second change keeps the watch: a view that redraws after
        /// each change keeps it for as long as it shows the key.
        @Test func aKeyReadAgainAfterEachChangeKeepsTheWatch() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            for value in 1...5 {
                _ = store[.count]
                store[.count] = value
                #expect(watcher.isNeeded)
            }
            store[.count] = 6
            #expect(!watcher.isNeeded)
        }

        /// Every write of a key once read through the subscript is announced, however long ago the
        /// read: a tracker installed after its scope read the key hears of the next change.
        @Test func everyChangeOfAKeyOnceReadThroughTheSubscriptIsAnnounced() throws {
            let store = PreferencesStore.inMemory()
            _ = store[.count]
            for value in 1...4 {
                store[.count] = value
            }
            let fired = Locked(false)
            withObservationTracking {
                // Tracked as a subscript read tracks it, without the read: the store does not
                // learn of this tracking.
                store.trackAccess(\PreferencesStore.[observing: ObservedKey(key: store.resolvedKey(for: .count))])
            } onChange: {
                fired.withLock { $0 = true }
            }
            store[.count] = 9
            #expect(fired.withLock { $0 })
        }

        @Test func anObserverKeepsTheWatchAfterTheTrackedKeysChanged() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            let observation = store.observe(.theme) { _, _ in }
            _ = store[.count]
            store[.count] = 1
            store[.count] = 2
            #expect(watcher.isNeeded)
            observation.cancel()
            #expect(!watcher.isNeeded)
        }
    #endif
}
