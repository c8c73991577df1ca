import Foundation
import Testing

@testable import Preferences

#if canImport(Observation)
    import Observation
#endif

/// The first element of a stream, or `nil` if none arrives within `seconds`.
private func firstElement<Element: Sendable>(of stream: AsyncStream<Element>, within seconds: Double) async -> Element?
{
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

struct ObservationTests {
    @Test(arguments: BackendKind.allCases)
    func aKeysStreamStartsWithItsValueThenGivesEachChangeInOrder(on kind: BackendKind) async throws {
        let fixture = try StoreFixture(kind)
        let store = fixture.store
        store[.count] = 1
        var values = store.changes(for: .count).makeAsyncIterator()
        var received = [await values.next()]
        store[.count] = 2
        received.append(await values.next())
        store[.count] = 2  // the same value: no change
        store[.title] = "another key"
        try store.update(.count) { $0 += 1 }
        received.append(await values.next())
        try store.removeValue(for: .count)
        received.append(await values.next())
        #expect(received == [1, 2, 3, 0])
    }

    /// A store whose memory is behind another store's commits writes the value it holds all the
    /// same (it cannot tell it is stored); when the commits it then catches up with stored that
    /// value already, its own write is no change, and its observers hear only the other store's.
    ///
    /// The store's watcher often catches up before the write, which then writes nothing: the
    /// rounds make a write that catches up itself all but certain.
    @Test func aWriteOfTheValueAnotherStoreJustStoredIsNoChangeForObservers() async throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 0
        var changes = store.changes(forAnyOf: .count).makeAsyncIterator()
        for round in 0..<50 {
            let held = 2 * round
            other[.count] = held + 1
            other[.count] = held
            store[.count] = held
            try store.transaction(writeIdentifier: "round \(round)") { $0[.count] = held + 2 }
            var origins: [ChangeOrigin] = []
            while let change = await changes.next(), change.writeIdentifier != "round \(round)" {
                origins.append(change.origin)
            }
            #expect(origins == [.elsewhere, .elsewhere], "round \(round)")
        }
        #expect(store[.count] == 100)
    }

    @Test func aStreamWithoutTheCurrentValueGivesOnlyChanges() async throws {
        let store = PreferencesStore.inMemory()
        store[.title] = "before"
        var values = store.changes(for: .title, initial: false).makeAsyncIterator()
        store[.title] = "after"
        #expect(await values.next() == "after")
    }

    @Test func aTransactionIsOneChangeNamingEveryKeyItChanged() async throws {
        let store = PreferencesStore.inMemory()
        var changes = store.changes(forAnyOf: .count, .title, .flag).makeAsyncIterator()
        try store.transaction(writeIdentifier: "sync-7") { preferences in
            preferences[.count] = 5
            preferences[.title] = "t"
            preferences[.ratio] = 0.5  // not watched
        }
        let change = try #require(await changes.next())
        #expect(change.keys == [StoredKey("count"), StoredKey("title")])
        #expect(change.origin == .thisStore)
        #expect(change.writeIdentifier == "sync-7")
    }

    @Test func aNamespaceStreamSeesOnlyItsNamespace() async throws {
        let store = PreferencesStore.inMemory()
        var changes = store.changes(in: .custom("com.vendor.sdk")).makeAsyncIterator()
        store[.flag] = true
        store[.vendorFlag] = true
        let change = try #require(await changes.next())
        #expect(change.keys == [StoredKey("flag", in: .custom("com.vendor.sdk"))])
    }

    @Test func changesCarryTheirOrigin() async throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let other = try PreferencesStore(fileURL: directory.storeURL)
        var changes = store.changes(forAnyOf: .count, .title, .ratio).makeAsyncIterator()

        store[.count] = 1
        try other.transaction(writeIdentifier: "from-other") { $0[.title] = "elsewhere" }
        other[PreferenceKey<Int>("ratio", default: 0)] = 4
        try other.runMigrations(
            MigrateValue(from: PreferenceKey<Int>("ratio", default: 0), to: PreferenceKeys.ratio) { Double($0) }
        )
        _ = store[.title]  // a read catches up with the other store's commits

        let local = try #require(await changes.next())
        #expect(local.origin == .thisStore)
        let tagged = try #require(await changes.next())
        #expect(tagged.origin == .elsewhere)
        #expect(tagged.writeIdentifier == "from-other")
        #expect(tagged.keys == [StoredKey("title")])
        let written = try #require(await changes.next())
        #expect(written.origin == .elsewhere)
        let migrated = try #require(await changes.next())
        #expect(migrated.origin == .migration(id: "convert ratio in app from Int to ratio in app as Double"))
    }

    @Test func aCallbackRunsUntilItsObservationIsCancelled() throws {
        let store = PreferencesStore.inMemory()
        let seen = Locked<[String]>([])
        let observation = store.observe(.title) { title, change in
            seen.withLock { $0.append("\(title) \(change.origin)") }
        }
        store[.title] = "one"
        store[.title] = "two"
        observation.cancel()
        store[.title] = "three"
        #expect(seen.withLock { $0 } == ["one thisStore", "two thisStore"])
    }

    @Test func aCallbackEndsWhenItsObservationIsReleased() throws {
        let store = PreferencesStore.inMemory()
        let calls = Locked(0)
        do {
            let observation = store.observe(anyOf: .count) { _ in calls.withLock { $0 += 1 } }
            store[.count] = 1
            _ = observation
        }
        store[.count] = 2
        #expect(calls.withLock { $0 } == 1)
        #expect(!store.changeHub.hasObservers)
    }

    /// Nothing the store sets going keeps it: not its commit watcher, its managed settings watch,
    /// its observers once cancelled, nor a delivery it handed to another thread.
    @Test func aStoreNoOneHoldsIsReleased() throws {
        let directory = try TemporaryDirectory()
        weak var released: PreferencesStore?
        do {
            let store = try PreferencesStore(
                fileURL: directory.storeURL,
                overrides: [.managed(fileURL: directory.url.appendingPathComponent("managed.json"))])
            let other = try PreferencesStore(fileURL: directory.storeURL)
            let observation = store.observe(anyOf: .count) { _ in }
            store[.count] = 1
            other[.count] = 2
            #expect(store[.count] == 2)  // caught up by a read, which delivers on another thread
            observation.cancel()
            released = store
        }
        let deadline = Date().addingTimeInterval(5)
        while released != nil && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(released == nil)
    }

    @Test func aStreamThatIsDroppedLeavesNoObserverBehind() async throws {
        let store = PreferencesStore.inMemory()
        do {
            var values = store.changes(for: .count).makeAsyncIterator()
            _ = await values.next()
        }
        #expect(!store.changeHub.hasObservers)
    }

    @Test func anObserverThatWritesToTheStoreDoesNotDeadlock() throws {
        let store = PreferencesStore.inMemory()
        let observation = store.observe(.count) { count, _ in
            store[.title] = "count is \(count)"
        }
        store[.count] = 3
        #expect(store[.title] == "count is 3")
        _ = observation
    }

    @Test func changesFromManyThreadsArriveOncePerKeyInCommitOrder() async throws {
        let store = PreferencesStore.inMemory()
        let keys = (0..<4).map { PreferenceKey<Int>("counter\($0)", default: 0) }
        let received = Locked<[Int: [Int]]>([:])
        let observations = keys.enumerated().map { index, key in
            store.observe(key) { value, _ in received.withLock { $0[index, default: []].append(value) } }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for value in 1...250 {
                store[keys[thread]] = value
                _ = store[keys[(thread + 1) % 4]]
            }
        }
        for index in 0..<4 {
            #expect(received.withLock { $0[index] } == Array(1...250))
        }
        _ = observations
    }

    @Test(.tags(.childProcesses)) func anotherProcesssWriteReachesAnObserverWithoutAnyRead() async throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let key = PreferenceKey<Int>("child-0", default: -1, in: .custom("harness"))
        let values = store.changes(for: key, initial: false)
        let child = try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "child", "1"])
        let (status, errors) = child.wait()
        #expect(status == 0, "\(errors)")
        // Delivered by the store's own watch on the shared commit count; the test reads nothing.
        #expect(await firstElement(of: values, within: 5) == 0)
    }

    #if canImport(Observation)
        /// How many times the Observation framework says that what `read` read changed: one
        /// tracking scope, as a view's body makes.
        private func trackingCount(of read: () -> Void) -> Locked<Int> {
            let fired = Locked(0)
            withObservationTracking(read) {
                fired.withLock { $0 += 1 }
            }
            return fired
        }

        @Test func observationTrackingFiresForTheKeyReadAndNoOther() throws {
            let store = PreferencesStore.inMemory()
            let fired = trackingCount { _ = store[.flag] }
            store[.count] = 1
            store[.title] = "unrelated"
            #expect(fired.withLock { $0 } == 0)
            store[.flag] = true
            #expect(fired.withLock { $0 } == 1)
        }

        @Test func oneCommitOfSeveralTrackedKeysFiresEachTrackingAndReachesAnObserver() throws {
            let store = PreferencesStore.inMemory()
            let reads: [() -> Void] = [{ _ = store[.flag] }, { _ = store[.count] }, { _ = store[.title] }]
            let fired = Locked([0, 0, 0])
            // A tracking scope per key, each read through the subscript, so that every key of the
            // commit below has a key path to announce: the first and the rest of a commit's paths.
            for (index, read) in reads.enumerated() {
                withObservationTracking(read) {
                    fired.withLock { $0[index] += 1 }
                }
            }
            let delivered = Locked<[PreferencesChange]>([])
            let observation = store.observe(anyOf: .count) { change in delivered.withLock { $0.append(change) } }
            try store.transaction { preferences in
                preferences[.flag] = true
                preferences[.count] = 2
                preferences[.title] = "changed"
            }
            #expect(fired.withLock { $0 } == [1, 1, 1])
            #expect(delivered.withLock { $0.map(\.keys) } == [[StoredKey("count", in: .app)]])
            observation.cancel()
        }

        /// A write of one key made inside a transaction's body is announced once the transaction
        /// ends, never while the transaction still holds the store's write lock.
        @Test func aWriteInsideATransactionIsAnnouncedOnlyOnceTheTransactionEnds() throws {
            let store = PreferencesStore.inMemory()
            let fired = trackingCount { _ = store[.flag] }
            try store.transaction { _ in
                store[.flag] = true
                #expect(fired.withLock { $0 } == 0, "announced while the transaction held the write lock")
            }
            #expect(fired.withLock { $0 } == 1)
        }

        /// A tracking handler may write to the store as the framework calls it: the write is made,
        /// the key it writes is announced too, and nothing waits for a lock the announcement holds.
        @Test func aTrackingHandlerThatWritesToTheStoreIsAnnouncedToo() throws {
            let store = PreferencesStore.inMemory()
            let fired = Locked<[String]>([])
            withObservationTracking {
                _ = store[.count]
            } onChange: {
                fired.withLock { $0.append("count") }
                store[.title] = "written by the handler"
            }
            withObservationTracking {
                _ = store[.title]
            } onChange: {
                fired.withLock { $0.append("title") }
            }
            store[.count] = 1
            #expect(fired.withLock { $0 } == ["count", "title"])
            #expect(store[.title] == "written by the handler")
            #expect(store[.count] == 1)
        }

        /// Writers on several threads, each to a key a tracking scope read: every scope fires once,
        /// whichever thread announces which key.
        @Test func trackingScopesFireOnceEachWhenSeveralThreadsWrite() async throws {
            let store = PreferencesStore.inMemory()
            let keys = (0..<8).map { PreferenceKey<Int>("tracked\($0)", default: 0) }
            let fired = Locked([Int](repeating: 0, count: keys.count))
            for (index, key) in keys.enumerated() {
                withObservationTracking {
                    _ = store[key]
                } onChange: {
                    fired.withLock { $0[index] += 1 }
                }
            }
            await withTaskGroup(of: Void.self) { group in
                for key in keys {
                    group.addTask {
                        for value in 1...50 {
                            store[key] = value
                        }
                    }
                }
            }
            #expect(fired.withLock { $0 } == [Int](repeating: 1, count: keys.count))
            #expect(keys.allSatisfy { store[$0] == 50 })
        }

        /// A key read outside any tracking scope is announced once a scope tracks it, and again for
        /// a later scope once the first one fired: a write skips the announcement only for keys
        /// never read through the subscript.
        @Test(arguments: BackendKind.allCases)
        func aKeyReadBeforeAnyScopeTrackedItIsAnnouncedOnceOneDoes(on kind: BackendKind) throws {
            let fixture = try StoreFixture(kind)
            let store = fixture.store
            _ = store[.count]
            store[.count] = 1
            let first = trackingCount { _ = store[.count] }
            store[.count] = 2
            #expect(first.withLock { $0 } == 1)
            let second = trackingCount { _ = store[.count] }
            store[.count] = 3
            #expect(first.withLock { $0 } == 1)
            #expect(second.withLock { $0 } == 1)
        }

        /// Writes racing a tracking scope do not keep it from hearing of the next write.
        ///
        /// Not that it hears of a write made while its scope runs: the framework installs a
        /// tracker once the scope has returned, and one made in between reaches it only if a later
        /// write follows (see ``StoreState/track(_:)``).
        @Test func aScopeTrackingAKeyWhileAnotherThreadWritesItHearsOfTheNextWrite() async throws {
            let store = PreferencesStore.inMemory()
            for round in 0..<200 {
                let key = PreferenceKey<Int>("raced\(round)", default: 0)
                let scopeReturned = DispatchSemaphore(value: 0)
                let writer = Task.detached {
                    for value in 1...20 {
                        store[key] = value
                    }
                    scopeReturned.wait()
                    store[key] = 21
                }
                let fired = Locked(false)
                _ = withObservationTracking {
                    store[key]
                } onChange: {
                    fired.withLock { $0 = true }
                }
                scopeReturned.signal()
                await writer.value
                #expect(fired.withLock { $0 }, "round \(round): never told of the write after the scope")
            }
        }

        @Test(.tags(.childProcesses)) func observationTrackingSeesAnotherProcesssChangeWithNoReadAndNoObserver() throws
        {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let key = PreferenceKey<Int>("child-2", default: -1, in: .custom("harness"))
            let fired = Locked(false)
            withObservationTracking {
                _ = store[key]
            } onChange: {
                fired.withLock { $0 = true }
            }
            let child = try ChildProcess.start(
                "PreferencesHarness", ["distinct", directory.storeURL.path, "child", "3"])
            let (status, errors) = child.wait()
            #expect(status == 0, "\(errors)")
            let deadline = Date().addingTimeInterval(5)
            while !fired.withLock({ $0 }) && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            #expect(fired.withLock { $0 }, "a view reading the key would not redraw")
        }

        @Test func observationTrackingSeesAChangeMadeByAnotherStore() throws {
            let directory = try TemporaryDirectory()
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let other = try PreferencesStore(fileURL: directory.storeURL)
            let fired = Locked(false)
            withObservationTracking {
                _ = store[.count]
            } onChange: {
                fired.withLock { $0 = true }
            }
            other[.count] = 9
            #expect(store[.count] == 9)  // catches up; the change is announced after the read returns
            let deadline = Date().addingTimeInterval(5)
            while !fired.withLock({ $0 }) && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            #expect(fired.withLock { $0 })
        }
    #endif

    final class ReaderSettings {
        @Preference(.flag, store: PreferencesStore.inMemory()) var largeText: Bool
        @Preference(.theme, store: PreferencesStore.inMemory()) var theme: Theme
    }

    @Test func aPreferencePropertyReadsAndWritesItsStore() async throws {
        let settings = ReaderSettings()
        #expect(settings.largeText == false)
        settings.largeText = true
        #expect(settings.$largeText.store[.flag] == true)
        #expect(settings.$largeText.key === PreferenceKeys.flag)
        var themes = settings.$theme.changes.makeAsyncIterator()
        #expect(await themes.next() == .system)
        settings.theme = .dark
        #expect(await themes.next() == .dark)
    }
}
