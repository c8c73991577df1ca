import Foundation
import Testing

@testable import Preferences

/// A read of the wrong type is detected, reported and never coerced; the stored data stays.
struct TypeMismatchTests {
    /// Stores `value` under `name`, then reads it through `key`: the read must be a mismatch.
    private func expectMismatch<Stored: Sendable, Read: Equatable & Sendable>(
        storing value: Stored,
        as storedKey: PreferenceKey<Stored>,
        readingAs key: PreferenceKey<Read>,
        stored: String,
        on kind: BackendKind,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let fixture = try StoreFixture(kind)
        try fixture.store.setValue(value, for: storedKey)
        let store = try fixture.reopened()
        let error = #expect(throws: PreferencesError.self, sourceLocation: sourceLocation) {
            try store.value(for: key)
        }
        #expect(
            error
                == PreferencesError(
                    .typeMismatch(key: StoredKey(key.name), stored: stored, expected: typeName(Read.self))),
            sourceLocation: sourceLocation
        )
        #expect(store[key] == key.defaultValue, sourceLocation: sourceLocation)
        // An in-memory store is its own reopened copy, where the two key types also count as a conflict.
        let reported = store.errorChannel.takeBacklog().map(\.code).filter { $0 != .conflictingValueTypes }
        #expect(reported == [.typeMismatch], sourceLocation: sourceLocation)
    }

    @Test(arguments: BackendKind.allCases)
    func differentKindsAreMismatchesNotCoercions(on kind: BackendKind) throws {
        try expectMismatch(
            storing: "abc", as: PreferenceKey<String>("k", default: ""),
            readingAs: PreferenceKey<Bool>("k", default: true), stored: "String", on: kind
        )
        try expectMismatch(
            storing: 1, as: PreferenceKey<Int>("k", default: 0),
            readingAs: PreferenceKey<Bool>("k", default: false), stored: "signed integer", on: kind
        )
        try expectMismatch(
            storing: 4.7, as: PreferenceKey<Double>("k", default: 0),
            readingAs: PreferenceKey<Int>("k", default: -1), stored: "Double", on: kind
        )
        try expectMismatch(
            storing: 4, as: PreferenceKey<Int>("k", default: 0),
            readingAs: PreferenceKey<Double>("k", default: -1), stored: "signed integer", on: kind
        )
        try expectMismatch(
            storing: 7, as: PreferenceKey<Int>("k", default: 0),
            readingAs: PreferenceKey<Pet?>("k"), stored: "signed integer", on: kind
        )
        try expectMismatch(
            storing: Pet(name: "a", age: 1), as: PreferenceKey<Pet>("k", default: Pet(name: "", age: 0)),
            readingAs: PreferenceKey<String>("k", default: "d"), stored: "encoded Codable value", on: kind
        )
        try expectMismatch(
            storing: "https://example.com", as: PreferenceKey<String>("k", default: ""),
            readingAs: PreferenceKey<URL?>("k"), stored: "String", on: kind
        )
        try expectMismatch(
            storing: [1, 2], as: PreferenceKey<[Int]>("k", default: []),
            readingAs: PreferenceKey<[String]>("k", default: []), stored: "array", on: kind
        )
    }

    @Test(arguments: BackendKind.allCases)
    func anIntegerThatDoesNotFitTheKeysTypeIsAMismatch(on kind: BackendKind) throws {
        try expectMismatch(
            storing: 300, as: PreferenceKey<Int>("k", default: 0),
            readingAs: PreferenceKey<UInt8>("k", default: 0), stored: "signed integer", on: kind
        )
        try expectMismatch(
            storing: -1, as: PreferenceKey<Int>("k", default: 0),
            readingAs: PreferenceKey<UInt>("k", default: 0), stored: "signed integer", on: kind
        )
        try expectMismatch(
            storing: UInt64.max, as: PreferenceKey<UInt64>("k", default: 0),
            readingAs: PreferenceKey<Int64>("k", default: 0), stored: "unsigned integer", on: kind
        )
        try expectMismatch(
            storing: 0.1, as: PreferenceKey<Double>("k", default: 0),
            readingAs: PreferenceKey<Float>("k", default: 0), stored: "Double", on: kind
        )
    }

    @Test func integersReadAcrossWidthsWhenTheyFit() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<UInt8>("k", default: 0)] = 200
        #expect(try store.value(for: PreferenceKey<Int64>("k", default: 0)) == 200)
        store[PreferenceKey<Float>("f", default: 0)] = 0.5
        #expect(try store.value(for: PreferenceKey<Double>("f", default: 0)) == 0.5)
    }

    @Test func aRawValueWithNoMatchingCaseFailsToDecode() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<String>("theme", default: "")] = "purple"
        let error = #expect(throws: PreferencesError.self) { try store.value(for: .theme) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.key == StoredKey("theme"))
        #expect(error?.description.contains("\"purple\" is not a raw value of Theme") == true)
        #expect(store[.theme] == .system)
    }

    @Test func encodedDataThatDoesNotDecodeFailsNamingTheCodingPath() throws {
        let store = PreferencesStore.inMemory()
        struct Other: Codable, Sendable { var name: Int }
        store[PreferenceKey<Other?>("pet")] = Other(name: 5)
        let error = #expect(throws: PreferencesError.self) { try store.value(for: .pet) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.description.contains("name") == true)
    }

    @Test func aMismatchLeavesTheStoredDataUntouched() throws {
        let fixture = try StoreFixture(.file)
        let asString = PreferenceKey<String>("k", default: "")
        fixture.store[asString] = "abc"
        let before = try fixture.directory.storeBytes()
        let asBool = PreferenceKey<Bool>("k", default: true)
        #expect(fixture.store[asBool] == true)
        #expect(try fixture.directory.storeBytes() == before)
        #expect(fixture.store[asString] == "abc")
    }

    @Test func aMismatchIsReportedOncePerStoredValueNotOnEveryRead() throws {
        let store = PreferencesStore.inMemory()
        let asString = PreferenceKey<String>("k", default: "")
        let asInt = PreferenceKey<Int>("k", default: 0)
        store[asString] = "abc"
        for _ in 0..<5 { _ = store[asInt] }
        store[asString] = "def"
        for _ in 0..<5 { _ = store[asInt] }
        let codes = store.errorChannel.takeBacklog().map(\.code)
        #expect(codes.filter { $0 == .typeMismatch }.count == 2)
    }

    @Test func oneKeyUsedWithTwoTypesIsReportedNamingBoth() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<Int>("shared", default: 0)] = 1
        _ = store[PreferenceKey<String>("shared", default: "")]
        _ = store[PreferenceKey<String>("shared", default: "")]
        let errors = store.errorChannel.takeBacklog().filter { $0.code == .conflictingValueTypes }
        #expect(
            errors == [
                PreferencesError(.conflictingValueTypes(key: StoredKey("shared"), first: "Int", second: "String"))
            ]
        )
        #expect(errors.first?.description.contains("Int and String") == true)
    }

    /// A write finds the conflict as a read does, through each way of writing: one key, through the
    /// subscript, or in a transaction.
    @Test(arguments: ["setValue", "subscript", "transaction"])
    func aWriteOfAnotherTypeIsReportedNamingBoth(writingThrough path: String) throws {
        let store = PreferencesStore.inMemory()
        _ = store[PreferenceKey<Int>("shared", default: 0)]
        let asString = PreferenceKey<String>("shared", default: "")
        switch path {
        case "setValue": try store.setValue("x", for: asString)
        case "subscript": store[asString] = "x"
        default: try store.transaction { $0[asString] = "x" }
        }
        try store.setValue("y", for: asString)
        let errors = store.errorChannel.takeBacklog().filter { $0.code == .conflictingValueTypes }
        #expect(
            errors == [
                PreferencesError(.conflictingValueTypes(key: StoredKey("shared"), first: "Int", second: "String"))
            ]
        )
        #expect(store[asString] == "y")
    }
}
