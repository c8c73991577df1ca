import Foundation
import Testing

@testable import Preferences

/// How often a `Codable` type has been decoded, to prove the store's cache.
private let decodeCount = Locked(0)

private struct CountedSetting: Codable, Sendable, Equatable {
    var level: Int

    init(level: Int) {
        self.level = level
    }

    init(from decoder: any Decoder) throws {
        decodeCount.withLock { $0 += 1 }
        level = try decoder.singleValueContainer().decode(Int.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(level)
    }
}

struct StoreReadingTests {
    /// A key's slot is made once and found again, by an equal key made apart too.
    @Test func aKeysSlotIsMadeOnceAndFoundByEqualKeys() {
        var state = StoreState(loaded: StoredEntries(), seenCommitCount: 0, commitWatcher: nil)
        let slot = state.slot(for: ResolvedKey(namespace: "app", name: "first"))
        #expect(state.slot(for: ResolvedKey(namespace: "app", name: "first")) === slot)
        #expect(state.existingSlot(for: ResolvedKey(namespace: "app", name: "first")) === slot)
        #expect(state.slot(for: ResolvedKey(namespace: "other", name: "first")) !== slot)
        #expect(state.existingSlot(for: ResolvedKey(namespace: "app", name: "second")) == nil)
    }

    /// A slot found by a key object's serial is the one the store's table holds for the key,
    /// found first or second; a serial far past the store's slots, or none, finds it in the table.
    @Test func aSlotFoundBySerialIsTheOneTheTableHolds() {
        var state = StoreState(loaded: StoredEntries(), seenCommitCount: 0, commitWatcher: nil)
        let first = ResolvedKey(namespace: "app", name: "first")
        let slot = state.slot(for: first)
        for serial: UInt32 in [0, 7, 7, 0, 1_000_000, 1_000_000] {
            #expect(state.withSlot(for: first, serial: serial, tracking: false) { $0 } === slot)
        }
        let second = ResolvedKey(namespace: "app", name: "second")
        let secondSlot = state.withSlot(for: second, serial: 3, tracking: false) { $0 }
        #expect(secondSlot !== slot)
        #expect(state.slot(for: second) === secondSlot)
        #expect(state.withSlot(for: second, serial: 3, tracking: false) { $0 } === secondSlot)
        #expect(state.withSlot(for: first, serial: 7, tracking: false) { $0 } === slot)
    }

    /// Two key objects of one name, with serials of their own, read and write one value.
    @Test func keyObjectsOfOneNameShareTheirValue() throws {
        let store = PreferencesStore.inMemory()
        let one = PreferenceKey<Int>("shared-name", default: 0)
        let other = PreferenceKey<Int>("shared-name", default: 0)
        #expect(one.serial != other.serial && one.serial != 0)
        #expect(store[one] == 0 && store[other] == 0)
        store[one] = 5
        #expect(store[other] == 5)
        store[other] = 6
        #expect(store[one] == 6)
    }

    @Test func aDefaultIsReadWhenNothingIsStoredAndAbsenceIsVisible() throws {
        let store = PreferencesStore.inMemory()
        #expect(store[.title] == "untitled")
        #expect(try store.value(for: .title) == nil)
        #expect(!store.contains(.title))
    }

    @Test func aCodableValueIsDecodedOnceAndThenServedFromTheCache() throws {
        let directory = try TemporaryDirectory()
        let key = PreferenceKey<CountedSetting>("counted", default: CountedSetting(level: 0))
        try PreferencesStore(fileURL: directory.storeURL).setValue(CountedSetting(level: 7), for: key)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let before = decodeCount.withLock { $0 }
        for _ in 0..<100 {
            #expect(store[key] == CountedSetting(level: 7))
        }
        #expect(decodeCount.withLock { $0 } == before + 1)
        store[key] = CountedSetting(level: 8)
        #expect(store[key] == CountedSetting(level: 8))
        #expect(store[key] == CountedSetting(level: 8))
        #expect(decodeCount.withLock { $0 } == before + 2)
    }

    @Test func errorsReportedBeforeAnyoneListensReachTheFirstStream() async throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<String>("k", default: "")] = "text"
        _ = store[PreferenceKey<Bool>("k", default: false)]
        var errors = store.errors.makeAsyncIterator()
        let conflict = await errors.next()
        let mismatch = await errors.next()
        #expect(conflict?.code == .conflictingValueTypes)
        #expect(mismatch?.code == .typeMismatch)
        #expect(mismatch?.key == StoredKey("k"))
    }

    @Test func everyStreamReceivesErrorsReportedWhileItListens() async throws {
        let store = PreferencesStore.inMemory()
        let first = store.errors
        let second = store.errors
        store[.measurement] = Measurement(value: .nan)
        var firstIterator = first.makeAsyncIterator()
        var secondIterator = second.makeAsyncIterator()
        #expect(await firstIterator.next()?.code == .encodingFailed)
        #expect(await secondIterator.next()?.code == .encodingFailed)
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func errorsDescribeWhatWentWrongAndWhere() {
        let mismatch = PreferencesError(.typeMismatch(key: StoredKey("count"), stored: "String", expected: "Int"))
        #expect(
            mismatch.description
                == "Type mismatch for key 'app:count': a String is stored, but the key's type is Int. "
                + "The stored value was left untouched."
        )
        let failure = PreferencesError(.fileOperationFailed(path: "/p/s.store", operation: "fsync", errorNumber: 28))
        #expect(failure.description == "Could not fsync '/p/s.store': No space left on device (errno 28).")
        #expect(failure.filePath == "/p/s.store")
        #expect(failure.key == nil)
    }
}
