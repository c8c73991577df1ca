import Dispatch
import Foundation
import Testing

@testable import Preferences

/// Readers and writers on many threads at once: no lost update, no torn value, no deadlock.
///
/// Run under `swift test --sanitize=thread` too.
struct ConcurrencyTests {
    /// Two stores written at once, from two tasks, through the same key objects, keep their own values.
    ///
    /// Both find their slots by the keys' numbers, the same in every store; file stores' engines
    /// also read and replace, as they go, the one hint each key carries of where the last engine
    /// to write it keeps its entry.
    @Test(arguments: BackendKind.allCases)
    func twoStoresWrittenAtOnceThroughTheSameKeysKeepTheirOwnValues(kind: BackendKind) async throws {
        let fixtures = [try StoreFixture(kind), try StoreFixture(kind)]
        let stores = fixtures.map(\.store)
        let keys = (0..<50).map { PreferenceKey<Int>("key\($0)", default: 0) }
        await withTaskGroup(of: Void.self) { group in
            for (offset, store) in stores.enumerated() {
                group.addTask {
                    for round in 0..<200 {
                        for key in keys {
                            store[key] = round * 10 + offset
                        }
                    }
                }
            }
        }
        for (offset, store) in stores.enumerated() {
            #expect(keys.allSatisfy { store[$0] == 1_990 + offset })
        }
        if kind == .file {
            for (offset, fixture) in fixtures.enumerated() {
                let reopened = try fixture.reopened()
                #expect(keys.allSatisfy { reopened[$0] == 1_990 + offset })
            }
        }
    }

    @Test(arguments: [(BackendKind.memory, 8, 250), (.file, 4, 40)])
    func concurrentUpdatesLoseNothing(on kind: BackendKind, threads: Int, increments: Int) throws {
        let fixture = try StoreFixture(kind)
        let store = fixture.store
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments {
                do {
                    try store.update(.count) { $0 += 1 }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(store[.count] == threads * increments)
        #expect(try fixture.reopened()[.count] == threads * increments)
    }

    @Test func readersSeeOnlyValuesThatWereWrittenWhileWritersWrite() throws {
        let store = PreferencesStore.inMemory()
        let pets = (0..<50).map { Pet(name: "pet\($0)", age: $0) }
        let valid = Set(pets)
        let unexpected = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 6) { thread in
            for round in 0..<500 {
                if thread < 2 {
                    store[.pet] = pets[(round + thread) % pets.count]
                    store[.title] = "title\(round)"
                } else {
                    if let pet = store[.pet], !valid.contains(pet) {
                        unexpected.withLock { $0 += 1 }
                    }
                    let title = store[.title]
                    if title != "untitled" && !title.hasPrefix("title") {
                        unexpected.withLock { $0 += 1 }
                    }
                    _ = store.storedKeys()
                    _ = store.contains(.pet)
                }
            }
        }
        #expect(unexpected.withLock { $0 } == 0)
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    /// No callback of the app's runs under the lock file's lock, which iOS ends a suspended app for.
    ///
    /// Another store on the same file, as another process would, commits from inside an observer's
    /// callback. The write that calls it back runs on a thread of its own, so that were the
    /// callback under the lock, that thread would wait for ever and this test would time out.
    @Test func observersRunWithoutTheLockFilesLock() async throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        let committed = Locked(false)
        let observation = store.observe(.count) { value, _ in
            guard value == 1, (try? other.setValue("from a callback", for: .title)) != nil else { return }
            committed.withLock { $0 = true }
        }
        defer { observation.cancel() }
        Thread.detachNewThread {
            try? store.setValue(1, for: .count)
        }
        try await waitUntil { committed.withLock { $0 } }
        #expect(store[.title] == "from a callback")
    }

    @Test func transactionsOnManyThreadsStayAtomic() throws {
        let store = PreferencesStore.inMemory()
        let left = PreferenceKey<Int>("left", default: 0)
        let right = PreferenceKey<Int>("right", default: 0)
        let torn = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 6) { thread in
            for _ in 0..<300 {
                if thread.isMultiple(of: 2) {
                    try? store.transaction { preferences in
                        preferences[left] += 1
                        preferences[right] -= 1
                    }
                } else {
                    try? store.transaction { preferences in
                        if preferences[left] + preferences[right] != 0 {
                            torn.withLock { $0 += 1 }
                        }
                    }
                }
            }
        }
        #expect(torn.withLock { $0 } == 0)
        #expect(store[left] == 900)
        #expect(store[right] == -900)
    }

    @Test func errorsReportedFromManyThreadsAllArrive() async throws {
        let store = PreferencesStore.inMemory()
        let stream = store.errors
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<10 {
                store[PreferenceKey<Measurement>("m\(thread)-\(round)", default: Measurement(value: 0))] =
                    Measurement(value: .nan)
            }
        }
        var received = 0
        for await error in stream {
            #expect(error.code == .encodingFailed)
            received += 1
            if received == 40 { break }
        }
        #expect(received == 40)
    }
}
