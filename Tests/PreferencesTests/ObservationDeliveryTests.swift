import Dispatch
import Foundation
import Testing

@testable import Preferences

/// Where and how changes reach observers: a slow stream consumer, a value that does not decode,
/// and the main actor.
struct ObservationDeliveryTests {
    @Test func aSlowConsumerOfAKeysValuesGetsTheNewestValueNotABacklog() async throws {
        let store = PreferencesStore.inMemory()
        var values = store.changes(for: .count).makeAsyncIterator()
        for value in 1...100 {
            store[.count] = value
        }
        #expect(await values.next() == 100)
        store[.count] = 101
        #expect(await values.next() == 101)
    }

    @Test func anObserverGivenAValueThatDoesNotDecodeGetsTheDefaultAndTheErrorIsReported() throws {
        let store = PreferencesStore.inMemory()
        let received = Locked<[Int]>([])
        let observation = store.observe(.count) { value, _ in received.withLock { $0.append(value) } }
        store[.count] = 4
        try store.writeStoredValues([(StoredKey("count"), .string("four"))])
        #expect(received.withLock { $0 } == [4, 0])
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.typeMismatch])
        #expect(reported.first?.key == StoredKey("count"))
        observation.cancel()
    }

    @MainActor
    @Test(.timeLimit(.minutes(1)))
    func aMainActorObserverRunsOnTheMainQueueInCommitOrder() async throws {
        // The main queue, not the main thread: where the process called `dispatchMain()`, as an
        // async entry point does on Linux, the main queue runs on other threads.
        let marker = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: marker, value: true)
        let store = PreferencesStore.inMemory()
        var received: [Int] = []
        var allOnMain = true
        let observation = store.observeOnMainActor(.count) { value, _ in
            allOnMain = allOnMain && DispatchQueue.getSpecific(key: marker) == true
            received.append(value)
        }
        store[.count] = 1
        await Task.detached {
            for value in 2...50 {
                store[.count] = value
            }
        }.value
        store[.count] = 51
        let deadline = ContinuousClock.now + .seconds(10)
        while received.count < 51 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(received == Array(1...51))
        #expect(allOnMain)
        observation.cancel()
    }
}
