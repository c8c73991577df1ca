import Foundation
import Testing

@testable import Preferences

/// `PreferencesStore.current`: the store wrappers given none use, which a test or a preview binds,
/// resolved each time a wrapper reads it.
struct CurrentStoreTests {
    @Test(.inMemoryPreferences) func aWrapperGivenNoStoreUsesTheStoreCurrentWhenItIsRead() {
        // Made under the trait's store, so that a wrapper that kept its first store would write
        // there, not to the standard store.
        let count = Preference(.count)
        let first = PreferencesStore.inMemory()
        let second = PreferencesStore.inMemory()
        PreferencesStore.withCurrent(first) {
            #expect(count.store === first)
            count.wrappedValue = 3
        }
        PreferencesStore.withCurrent(second) {
            #expect(count.wrappedValue == 0)
        }
        #expect(first[.count] == 3)
        #expect(second[.count] == 0)
    }

    @Test func aWrapperGivenAStoreKeepsIt() {
        let own = PreferencesStore.inMemory()
        let count = Preference(.count, store: own)
        PreferencesStore.withCurrent(.inMemory()) {
            count.wrappedValue = 5
        }
        #expect(own[.count] == 5)
    }

    @Test func theBindingHoldsInTheTasksItStartsButNotInDetachedOnes() async {
        let store = PreferencesStore.inMemory()
        await PreferencesStore.withCurrent(store) {
            let child = await Task { PreferencesStore.bound }.value
            #expect(child === store)
            let detached = await Task.detached { PreferencesStore.bound }.value
            #expect(detached == nil)
        }
        #expect(PreferencesStore.bound == nil)
    }

    @Test(.inMemoryPreferences) func aTraitGivesTheTestAnInMemoryStoreOfItsOwn() throws {
        let current = try #require(PreferencesStore.bound)
        #expect(current.fileURL == nil)
        #expect(!current[.flag], "another test's store")
        let flag = Preference(.flag)
        flag.wrappedValue = true
        #expect(current[.flag])
    }

    @Test func resetRemovesTheStoredValue() throws {
        let store = PreferencesStore.inMemory()
        let count = Preference(.count, store: store)
        count.wrappedValue = 7
        count.reset()
        #expect(!store.contains(.count))
        #expect(count.wrappedValue == 0)
    }

    /// A reset a managed setting refuses reaches the error stream, as a refused write does.
    @Test func aResetThatCannotBeWrittenIsReported() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 12}"#.utf8).write(to: settings)
        let store = try PreferencesStore(
            fileURL: folder.url.appendingPathComponent("p.store"), overrides: [.managed(fileURL: settings)])
        Preference(.count, store: store).reset()
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.valueForced])
    }
}

/// The trait on a suite: each test gets a store of its own.
@Suite(.inMemoryPreferences)
struct CurrentStoreSuiteTests {
    @Test(arguments: 1...3)
    func eachTestCaseHasAStoreOfItsOwn(value: Int) throws {
        let store = try #require(PreferencesStore.bound)
        #expect(store[.count] == 0, "a store another test case wrote")
        store[.count] = value
    }
}
