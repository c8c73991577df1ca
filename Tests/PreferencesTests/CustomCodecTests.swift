import Foundation
import Testing

@testable import Preferences

/// A colour stored as its components: a type the library cannot store, given a codec.
private struct Colour: Sendable, Equatable {
    var red, green, blue: Double

    init(red: Double, green: Double, blue: Double) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }

    init(components: [Double]) throws {
        guard components.count == 3 else { throw ComponentsError(count: components.count) }
        (red, green, blue) = (components[0], components[1], components[2])
    }

    var components: [Double] { [red, green, blue] }
}

private struct ComponentsError: Error, CustomStringConvertible {
    let count: Int
    var description: String { "a colour has 3 components, not \(count)" }
}

private let installation = PreferenceKey<UUID>(
    "installation", default: UUID(uuidString: "00000000-0000-0000-0000-000000000000")!, codec: .uuidString)
private let accent = PreferenceKey<Colour>(
    "accent", default: Colour(red: 0, green: 0, blue: 1),
    codec: PreferenceCodec(encode: \.components, decode: Colour.init(components:)))
private let lastSession = PreferenceKey<UUID?>("lastSession", codec: .uuidString)
private let tags = PreferenceKey<Set<String>>("tags", default: [], codec: .sortedArray())

@Suite("Custom codecs")
struct CustomCodecTests {
    @Test("A key with a codec stores the native kind the codec gives, and reads it back after reopening")
    func storesTheCodecsKind() throws {
        let fixture = try StoreFixture(.file)
        let id = UUID()
        fixture.store[installation] = id
        fixture.store[accent] = Colour(red: 0.25, green: 0.5, blue: 1)
        #expect(fixture.store.storedValue(at: StoredKey("installation")) == .string(id.uuidString))
        #expect(
            fixture.store.storedValue(at: StoredKey("accent")) == .array([.double(0.25), .double(0.5), .double(1)]))
        let reopened = try fixture.reopened()
        #expect(reopened[installation] == id)
        #expect(reopened[accent] == Colour(red: 0.25, green: 0.5, blue: 1))
    }

    @Test("An optional key with a codec stores nothing for nil")
    func optionalKey() throws {
        let store = PreferencesStore.inMemory()
        #expect(store[lastSession] == nil)
        let id = UUID()
        store[lastSession] = id
        #expect(store[lastSession] == id)
        store[lastSession] = nil
        #expect(!store.contains(lastSession))
    }

    @Test("A stored value the codec cannot decode is reported, left untouched, and reads as the default")
    func undecodableValue() throws {
        let store = PreferencesStore.inMemory()
        try store.writeStoredValues([
            (StoredKey("installation"), .string("not a uuid")),
            (StoredKey("accent"), .array([.double(1)])),
        ])
        #expect(store[installation] == installation.defaultValue)
        #expect(store[accent] == accent.defaultValue)
        let reported = store.errorChannel.takeBacklog()
        try #require(reported.count == 2)
        #expect(reported.map(\.code) == [.decodingFailed, .decodingFailed])
        #expect(reported[0].description.contains("'not a uuid' is not a UUID"))
        #expect(reported[1].description.contains("a colour has 3 components, not 1"))
        #expect(throws: PreferencesError.self) { try store.value(for: installation) }
        #expect(store.storedValue(at: StoredKey("installation")) == .string("not a uuid"))
    }

    @Test("A value the codec cannot encode fails the write and writes nothing")
    func unencodableValue() throws {
        let refusing = PreferenceKey<Int>(
            "refusing", default: 0,
            codec: PreferenceCodec(
                encode: { (value: Int) throws -> String in throw ComponentsError(count: value) },
                decode: { Int($0) ?? 0 }))
        let store = PreferencesStore.inMemory()
        let error = #expect(throws: PreferencesError.self) { try store.setValue(4, for: refusing) }
        #expect(error?.code == .encodingFailed)
        #expect(error?.description.contains("a colour has 3 components, not 4") == true)
        #expect(!store.contains(refusing))
    }

    @Test("Override layers read the stored kind, then the codec decodes it")
    func overrides() throws {
        let id = UUID()
        let store = PreferencesStore.inMemory(
            overrides: [.launchArguments(["-installation", id.uuidString, "-accent", "[1, 0, 0]", "-tags", "[\"b\"]"])])
        #expect(store[installation] == id)
        #expect(store[accent] == Colour(red: 1, green: 0, blue: 0))
        #expect(store[tags] == ["b"])
        let wrong = PreferencesStore.inMemory(overrides: [.launchArguments(["-installation", "nope"])])
        #expect(wrong[installation] == installation.defaultValue)
        #expect(wrong.errorChannel.takeBacklog().map(\.code) == [.typeMismatch])
    }

    @Test("The schema shows the kind a codec stores")
    func schema() throws {
        let store = PreferencesStore.inMemory()
        store.register(installation, accent, tags)
        let declarations = Dictionary(uniqueKeysWithValues: store.declaredKeys().map { ($0.name, $0) })
        #expect(declarations["installation"]?.kinds == [.string])
        #expect(declarations["installation"]?.typeName == "UUID")
        #expect(declarations["accent"]?.kinds == [.array])
        #expect(declarations["tags"]?.defaultValue == .array([]))
    }

    @Test("Equal sets are stored alike, so writing an equal set writes nothing", arguments: [false, true])
    func equalSets(throughTheCodableStrategy: Bool) throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let codable = PreferenceKey<Set<String>>("codableTags", default: [])
        let key = throughTheCodableStrategy ? codable : tags
        let words = (0..<50).map { "word\($0)" }
        store[key] = Set(words)
        let stored = store.storedValue(at: StoredKey(key.name))
        let place = store.resolvedKey(for: StoredKey(key.name))
        func generation() -> UInt64? { store.state.withLock { $0.existingSlot(for: place)?.generation } }
        let writtenOnce = generation()
        // Built in another order, with another capacity: iterated in another order.
        var reordered = Set<String>(minimumCapacity: 500)
        for word in words.reversed() {
            reordered.insert(word)
        }
        store[key] = reordered
        #expect(store.storedValue(at: StoredKey(key.name)) == stored)
        #expect(generation() == writtenOnce, "an unchanged set was written again")
        let sorted = words.sorted()
        if throughTheCodableStrategy {
            let json = "[" + sorted.map { "\"\($0)\"" }.joined(separator: ",") + "]"
            #expect(stored == .encoded(Data(json.utf8)))
        } else {
            #expect(stored == .array(sorted.map(StoredValue.string)))
        }
        #expect(store[key] == Set(words))
    }
}
