import Foundation
import Testing

@testable import Preferences

/// Reads that find memory behind another process's commits catch up without waiting for that
/// process, and never run an observer's code.
@Suite(.tags(.childProcesses))
struct ReadsNeverWaitTests {
    private let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))

    @Test func readsGoOnWhileAnotherProcessHoldsTheLockInALongTransaction() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 0)
        // The holder commits 1, then holds the lock for a minute in a transaction, until killed.
        let holder = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["hold", directory.storeURL.path, "60"])
        defer { holder.killAbruptly() }
        holder.waitFor("holding")

        // The first read must catch up with the commit made before the hold, and none may wait
        // for the transaction: had one waited, the holder would have let go and ended.
        var values: Set<Int> = []
        for _ in 0..<1_000 {
            values.insert(store[counter])
        }
        #expect(values == [1])
        #expect(holder.isRunning, "a read waited for the holder's transaction")
    }

    @Test func aChangeAReadFindsReachesObserversOnAnotherThread() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        // The thread object's identity, not `pthread_t`: a pointer on Darwin, and not `Sendable`.
        let readingThread = ObjectIdentifier(Thread.current)
        let deliveries = Locked<[Bool]>([])
        let observation = store.observe(counter) { _, _ in
            deliveries.withLock { $0.append(ObjectIdentifier(Thread.current) == readingThread) }
        }
        for value in 1...20 {
            try other.setValue(value, for: counter)
            #expect(store[counter] == value)
        }
        let deadline = Date().addingTimeInterval(5)
        while deliveries.withLock({ $0.count }) < 20 && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(deliveries.withLock { $0.count } == 20)
        #expect(!deliveries.withLock { $0.contains(true) }, "an observer ran inside a read")
        observation.cancel()
    }
}
