import Foundation
import Testing

@testable import Preferences

/// Every supported kind of value, written and read back, from memory and from a reopened file.
struct ValueRoundTripTests {
    /// Writes `value` under a fresh key, then checks both the same store and a reopened one.
    private func roundTrip<Value: Equatable & Sendable>(
        _ value: Value,
        key: PreferenceKey<Value>,
        on kind: BackendKind,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.setValue(value, for: key)
        #expect(fixture.store[key] == value, sourceLocation: sourceLocation)
        let reopened = try fixture.reopened()
        #expect(try reopened.value(for: key) == value, sourceLocation: sourceLocation)
        #expect(reopened.errorChannel.takeBacklog().isEmpty, sourceLocation: sourceLocation)
    }

    @Test(arguments: BackendKind.allCases)
    func scalars(on kind: BackendKind) throws {
        try roundTrip(true, key: PreferenceKey<Bool>("bool", default: false), on: kind)
        try roundTrip(Int.min, key: PreferenceKey<Int>("int", default: 0), on: kind)
        try roundTrip(Int8.min, key: PreferenceKey<Int8>("int8", default: 0), on: kind)
        try roundTrip(Int16.max, key: PreferenceKey<Int16>("int16", default: 0), on: kind)
        try roundTrip(Int32.min, key: PreferenceKey<Int32>("int32", default: 0), on: kind)
        try roundTrip(Int64.max, key: PreferenceKey<Int64>("int64", default: 0), on: kind)
        try roundTrip(UInt.max, key: PreferenceKey<UInt>("uint", default: 0), on: kind)
        try roundTrip(UInt8.max, key: PreferenceKey<UInt8>("uint8", default: 0), on: kind)
        try roundTrip(UInt16.max, key: PreferenceKey<UInt16>("uint16", default: 0), on: kind)
        try roundTrip(UInt32.max, key: PreferenceKey<UInt32>("uint32", default: 0), on: kind)
        try roundTrip(UInt64.max, key: PreferenceKey<UInt64>("uint64", default: 0), on: kind)
        try roundTrip(-0.0, key: PreferenceKey<Double>("negativeZero", default: 0), on: kind)
        try roundTrip(Double.pi, key: PreferenceKey<Double>("double", default: 0), on: kind)
        try roundTrip(Double.infinity, key: PreferenceKey<Double>("infinity", default: 0), on: kind)
        try roundTrip(Float.leastNonzeroMagnitude, key: PreferenceKey<Float>("float", default: 0), on: kind)
        try roundTrip("héllo, 世界 👋", key: PreferenceKey<String>("string", default: ""), on: kind)
        try roundTrip(Data([0, 1, 2, 255]), key: PreferenceKey<Data>("data", default: Data()), on: kind)
        try roundTrip(
            Date(timeIntervalSinceReferenceDate: 784_111_777.123_456_7),
            key: PreferenceKey<Date>("date", default: .distantPast),
            on: kind
        )
    }

    @Test(arguments: BackendKind.allCases)
    func negativeZeroIsNotTakenForTheZeroAlreadyStored(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let key = PreferenceKey<Double>("zero", default: 1)
        fixture.store[key] = 0.0
        fixture.store[key] = -0.0
        #expect(try fixture.reopened()[key].sign == .minus)
    }

    @Test(
        arguments: BackendKind.allCases,
        [
            "https://example.com/a?b=1#c",
            "https://user:pass@example.com:8443/path%20with%20space/?q=a&q=b#frag",
            "file:///tmp/some%20folder/file.txt",
            "mailto:someone@example.com",
            "custom-scheme://host/path?x=%2F",
        ])
    func urlsRoundTripExactly(on kind: BackendKind, string: String) throws {
        let url = try #require(URL(string: string))
        let fixture = try StoreFixture(kind)
        let key = PreferenceKey<URL?>("url")
        fixture.store[key] = url
        let read = try #require(try fixture.reopened().value(for: key))
        #expect(read == url)
        #expect(read.absoluteString == string)
    }

    @Test(arguments: BackendKind.allCases)
    func collections(on kind: BackendKind) throws {
        try roundTrip([1, 2, 3], key: PreferenceKey<[Int]>("ints", default: []), on: kind)
        try roundTrip([[1], [], [2, 3]], key: PreferenceKey<[[Int]]>("nested", default: []), on: kind)
        try roundTrip(["a": "x", "b": ""], key: PreferenceKey<[String: String]>("strings", default: [:]), on: kind)
        try roundTrip(
            ["recent": [URL(string: "https://a.example/?q=1")!]],
            key: PreferenceKey<[String: [URL]]>("urls", default: [:]),
            on: kind
        )
        try roundTrip([Date(timeIntervalSince1970: 0)], key: PreferenceKey<[Date]>("dates", default: []), on: kind)
    }

    @Test(arguments: BackendKind.allCases)
    func rawRepresentableAndCodableValues(on kind: BackendKind) throws {
        try roundTrip(Theme.dark, key: PreferenceKey<Theme>("theme", default: .system), on: kind)
        try roundTrip(Level.high, key: PreferenceKey<Level>("level", default: .low), on: kind)
        try roundTrip(
            Pet(name: "Rex", age: 3), key: PreferenceKey<Pet>("pet", default: Pet(name: "", age: 0)), on: kind)
        try roundTrip([Pet(name: "A", age: 1)], key: PreferenceKey<[Pet]>("pets", default: []), on: kind)
    }

    @Test func rawRepresentableValuesAreStoredAsTheirRawValue() throws {
        let store = PreferencesStore.inMemory()
        store[.theme] = .dark
        store[.level] = .high
        #expect(try store.value(for: PreferenceKey<String>("theme", default: "")) == "dark")
        #expect(try store.value(for: PreferenceKey<Int>("level", default: 0)) == 2)
    }

    @Test(arguments: BackendKind.allCases)
    func assigningNilToAnOptionalKeyRemovesTheEntry(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let store = fixture.store
        store[.pet] = Pet(name: "Rex", age: 3)
        store[.nickname] = "rex"
        #expect(store.contains(.pet))
        store[.pet] = nil
        try store.setValue(nil, for: .nickname)
        #expect(!store.contains(.pet))
        #expect(!store.contains(.nickname))
        #expect(try store.value(for: .pet) == nil)
        #expect(try fixture.reopened().storedKeys().isEmpty)
    }

    @Test func anOptionalKeysValueIsNotDoublyOptional() throws {
        let store = PreferencesStore.inMemory()
        store[.nickname] = "rex"
        let nickname: String? = try store.value(for: .nickname)
        #expect(nickname == "rex")
    }

    @Test(arguments: BackendKind.allCases)
    func aCodableValueIsEncodedWithSortedKeysSoAnEqualValueIsNoChange(on kind: BackendKind) throws {
        let store = PreferencesStore.inMemory()
        store[.pet] = Pet(name: "Rex", age: 3)
        let stored = try #require(store.state.withLock { $0.existingSlot(for: store.resolvedKey(for: .pet))?.stored })
        guard case .encoded(let data) = stored else {
            Issue.record("a Codable value was stored as \(stored.kindDescription)")
            return
        }
        #expect(String(decoding: data, as: UTF8.self) == #"{"age":3,"name":"Rex"}"#)
    }
}
