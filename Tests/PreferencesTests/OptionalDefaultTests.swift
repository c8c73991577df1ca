import Foundation
import Testing

@testable import Preferences

/// An optional key declared with a default other than `nil`.
struct OptionalDefaultTests {
    @Test func anOptionalIntWithADefaultIsStoredAsAnIntAndNilRemovesIt() throws {
        let key = PreferenceKey<Int?>("limit", default: 5)
        let plain = PreferenceKey<Int?>("limit")
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[key] == 5)
        store[key] = 9
        #expect(store.storedValue(at: StoredKey("limit")) == .signed(9))
        #expect(store[plain] == 9)
        store[key] = nil
        #expect(store.storedValue(at: StoredKey("limit")) == nil, "nil was stored rather than removing the value")
        #expect(store[key] == 5)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[plain] == nil)
    }

    /// An optional of the library's scalars is decoded where it lies, under the store's lock, as
    /// the scalar is: a stored value of another kind must still be reported, not read.
    @Test func anOptionalIntOverAStoredStringReadsItsDefaultAndReportsTheMismatch() throws {
        let key = PreferenceKey<Int?>("limit", default: 5)
        let store = PreferencesStore.inMemory()
        try store.writeStoredValues([(StoredKey("limit"), .string("ten"))])
        #expect(store[key] == 5)
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.typeMismatch])
        #expect(throws: PreferencesError.self) { try store.value(for: key) }
        #expect(store.storedValue(at: StoredKey("limit")) == .string("ten"))
    }

    @Test func anOptionalCodableOrRawValueWithADefaultIsStoredAsTheNonOptionalIsAndNeverAsNull() throws {
        let pet = PreferenceKey<Pet?>("pet", default: Pet(name: "Rex", age: 3))
        let theme = PreferenceKey<Theme?>("theme", default: .dark)
        let store = PreferencesStore.inMemory()
        #expect(store[pet] == Pet(name: "Rex", age: 3))
        #expect(store[theme] == .dark)
        store[theme] = .light
        #expect(store.storedValue(at: StoredKey("theme")) == .string("light"))
        store[pet] = nil
        store[theme] = nil
        #expect(store.storedValue(at: StoredKey("pet")) == nil)
        #expect(store.storedValue(at: StoredKey("theme")) == nil)
    }
}
