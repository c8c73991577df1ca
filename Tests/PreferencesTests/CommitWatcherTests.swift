import Foundation
import Testing

@testable import Preferences

#if canImport(Observation)
    import Observation
#endif

/// The watch on other processes' commits runs only while something may observe the store, and
/// stops when nothing does.
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
        #expect(!watcher.isRunning)
    }

    @Test func anObserverWatchesUntilItIsCancelled() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let watcher = try #require(store.commitWatcher)
        let first = store.observe(.count) { _, _ in }
        let second = store.observe(anyOf: .flag) { _ in }
        #expect(watcher.isRunning)
        first.cancel()
        #expect(watcher.isRunning)
        second.cancel()
        #expect(!watcher.isRunning)
    }

    #if canImport(Observation)
        /// A subscript read may be tracked (the framework does not say), so it starts the watch; the
        /// next change of the key ends any tracking of it, announced, and the watch with it.
        @Test func aKeyReadThroughTheSubscriptIsWatchedUntilItsNextChange() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let other = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            let fired = Locked(false)
            withObservationTracking {
                _ = store[.count]
            } onChange: {
                fired.withLock { $0 = true }
            }
            #expect(watcher.isRunning)
            other[.flag] = true
            // A change of another key, caught up with, ends nothing: the tracking still holds.
            waitUntil("caught up with the other key") { (try? store.value(for: .flag)) == true }
            #expect(watcher.isRunning)
            other[.count] = 5
            waitUntil("told the tracking of the other store's change") { fired.withLock { $0 } }
            waitUntil("stopped watching once the change was announced") { !watcher.isRunning }

            _ = store[.count]
            #expect(watcher.isRunning)
            store[.count] = 6
            #expect(!watcher.isRunning)
        }

        /// Two keys read, one changed: the other may still be tracked, so the watch goes on.
        @Test func theWatchGoesOnWhileAnyReadKeyHasNotChanged() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            _ = store[.count]
            _ = store[.flag]
            store[.count] = 1
            #expect(watcher.isRunning)
            store[.flag] = true
            #expect(!watcher.isRunning)
        }

        @Test func anObserverKeepsTheWatchAfterTheTrackedKeysChanged() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let watcher = try #require(store.commitWatcher)
            let observation = store.observe(.theme) { _, _ in }
            _ = store[.count]
            store[.count] = 1
            #expect(watcher.isRunning)
            observation.cancel()
            #expect(!watcher.isRunning)
        }
    #endif
}
