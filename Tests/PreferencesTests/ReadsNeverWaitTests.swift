import Foundation
import Testing

@testable import Preferences

/// Reads that find memory behind another process's commits catch up without waiting for that
/// process, and never run an observer's code.
struct ReadsNeverWaitTests {
    private let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))

    @Test func readsGoOnWhileAnotherProcessHoldsTheLockInALongTransaction() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[counter] == 0)
        let holder = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["hold", directory.storeURL.path, "3"])
        holder.waitFor("holding")

        // The holder committed 1 before it took the lock for its transaction: the first read must
        // catch up with that commit, and none may wait for the transaction.
        let started = ContinuousClock.now
        var reads = 0
        var values: Set<Int> = []
        while ContinuousClock.now - started < .milliseconds(500) {
            values.insert(store[counter])
            reads += 1
        }
        #expect(values == [1])
        #expect(reads > 1_000, "only \(reads) reads in half a second")
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
