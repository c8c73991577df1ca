import Foundation
import Testing

@testable import Preferences

/// A value as sindresorhus/Defaults' `CodableBridge` writes it: the JSON of a one-element array
/// holding the value, without the brackets, so that a string or URL encodes at the top level.
private func defaultsText<Value: Encodable>(_ value: Value) throws -> String {
    let array = String(decoding: try JSONEncoder().encode([value]), as: UTF8.self)
    return String(array.dropFirst().dropLast())
}

/// A `Codable` type with a date, encoded as `JSONEncoder` encodes dates by default.
private struct Visit: Codable, Sendable, Equatable {
    var place: String
    var at: Date
}

/// A `Codable` enum with a string raw value, which Defaults stores through its `CodableBridge`.
private enum Mode: String, Codable, Sendable {
    case fast, careful
}

/// A `Codable` enum with an integer raw value: Defaults keeps the number's JSON text, `"2"`.
private enum Priority: Int, Codable, Sendable {
    case low = 0
    case high = 2
}

@Suite("Importing what other libraries wrote")
struct PeerImportTests {
    @Test("Values as sindresorhus/Defaults stores them import into keys of the same types")
    func defaultsLibrary() throws {
        let suite = try TemporarySuite()
        let defaults = suite.defaults
        let pet = Pet(name: "Rex", age: 3)
        let visit = Visit(place: "Oslo", at: Date(timeIntervalSinceReferenceDate: 785_000_000.25))
        let home = URL(string: "https://example.com/a?b=1#c")!
        // Native types stay native in Defaults.
        defaults.set(42, forKey: "count")
        defaults.set(["swift", "linux"], forKey: "tags")
        defaults.set(Level.high.rawValue, forKey: "level")  // RawRepresentable only: its raw value
        // Everything else goes through its CodableBridge: JSON text in a string.
        defaults.set(try defaultsText(pet), forKey: "pet")
        defaults.set(try defaultsText(visit), forKey: "visit")
        defaults.set(try defaultsText(home), forKey: "home")
        defaults.set(try defaultsText(Mode.careful), forKey: "mode")
        defaults.set(try [pet, Pet(name: "Ada", age: 5)].map(defaultsText), forKey: "pets")
        defaults.set(try ["home": home].mapValues(defaultsText), forKey: "links")
        defaults.set(try [home].map(defaultsText), forKey: "history")
        defaults.set(try ["a": pet].mapValues(defaultsText), forKey: "petsByName")
        defaults.set(try [Mode.fast, .careful].map(defaultsText), forKey: "modes")  // a Set, as an array
        defaults.set(try defaultsText(Priority.high), forKey: "priority")
        defaults.set(try defaultsText(Priority.low), forKey: "lastPriority")
        #expect(defaults.string(forKey: "priority") == "2")
        #expect(defaults.string(forKey: "mode") == "\"careful\"")
        #expect(defaults.string(forKey: "home") == #""https:\/\/example.com\/a?b=1#c""#)
        #expect(defaults.synchronize())

        let visitKey = PreferenceKey<Visit?>("visit")
        let homeKey = PreferenceKey<URL?>("home")
        let modeKey = PreferenceKey<Mode>("mode", default: .fast)
        let petsKey = PreferenceKey<[Pet]>("pets", default: [])
        let linksKey = PreferenceKey<[String: URL]>("links", default: [:])
        let historyKey = PreferenceKey<[URL]>("history", default: [])
        let petsByNameKey = PreferenceKey<[String: Pet]>("petsByName", default: [:])
        let modesKey = PreferenceKey<Set<Mode>>("modes", default: [])
        let tagsKey = PreferenceKey<[String]>("tags", default: [])
        let priorityKey = PreferenceKey<Priority>("priority", default: .low)
        let lastPriorityKey = PreferenceKey<Priority?>("lastPriority")
        let store = PreferencesStore.inMemory()
        let applied = try store.runMigrations(
            ImportFromUserDefaults(
                .suite(suite.name),
                keys: [
                    .key(.count), .key(tagsKey), .key(.level), .key(.pet), .key(visitKey), .key(homeKey),
                    .key(modeKey), .key(petsKey), .key(linksKey), .key(historyKey), .key(petsByNameKey),
                    .key(modesKey), .key(priorityKey), .key(lastPriorityKey),
                ]))
        #expect(store.errorChannel.takeBacklog().isEmpty)
        #expect(applied.first?.result.description == "imported 14 of 14 keys")
        #expect(store[.count] == 42)
        #expect(store[tagsKey] == ["swift", "linux"])
        #expect(store[.level] == .high)
        #expect(store[.pet] == pet)
        #expect(store[visitKey] == visit)
        #expect(store[homeKey] == home)
        #expect(store[modeKey] == .careful)
        #expect(store[petsKey] == [pet, Pet(name: "Ada", age: 5)])
        #expect(store[linksKey] == ["home": home])
        #expect(store[historyKey] == [home])
        #expect(store[petsByNameKey] == ["a": pet])
        #expect(store[modesKey] == [.fast, .careful])
        #expect(store[priorityKey] == .high)
        #expect(store[lastPriorityKey] == .low)
        #expect(store.storedValue(at: StoredKey("priority")) == .signed(2))
        // Stored as this library stores each type, not as Defaults did.
        #expect(store.storedValue(at: StoredKey("home")) == .url(home.absoluteString))
        #expect(store.storedValue(at: StoredKey("mode")) == .string("careful"))
    }

    @Test("A string that is someone's text stays text: only keys that cannot read text read JSON in it")
    func textStaysText() throws {
        let suite = try TemporarySuite()
        suite.defaults.set("\"quoted\"", forKey: "title")
        suite.defaults.set("42", forKey: "count")
        #expect(suite.defaults.synchronize())
        let store = PreferencesStore.inMemory()
        try store.runMigrations(ImportFromUserDefaults(.suite(suite.name), keys: [.key(.title), .key(.count)]))
        #expect(store[.title] == "\"quoted\"")
        // A number in a string is not a number: reported, not coerced.
        #expect(!store.contains(.count))
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.typeMismatch])
    }

    @Test("A file as swift-sharing's fileStorage writes it imports once, and is left alone")
    func fileStorage() throws {
        let folder = try TemporaryDirectory()
        let file = folder.url.appendingPathComponent("visit.json")
        let visit = Visit(place: "Oslo", at: Date(timeIntervalSinceReferenceDate: 785_000_000.25))
        // fileStorage's default encoder: JSONEncoder with its default strategies.
        let bytes = try JSONEncoder().encode(visit)
        try bytes.write(to: file)
        let visitKey = PreferenceKey<Visit?>("visit")
        let store = try PreferencesStore(fileURL: folder.storeURL)
        let applied = try store.runMigrations(ImportFromFile(file, into: visitKey))
        #expect(applied.map(\.id) == ["import file visit.json into visit in app"])
        #expect(applied.first?.result.description == "imported 'visit.json'")
        #expect(store[visitKey] == visit)
        #expect(try Data(contentsOf: file) == bytes, "the import changed its source")

        // Exactly once: the ledger keeps a later file out, even of a key the app has since cleared.
        store[visitKey] = nil
        try JSONEncoder().encode(Visit(place: "stale", at: visit.at)).write(to: file)
        #expect(try store.runMigrations(ImportFromFile(file, into: visitKey)).isEmpty)
        #expect(try PreferencesStore(fileURL: folder.storeURL)[visitKey] == nil)

        // A key that holds a value is not imported into, by a migration never run before.
        store[visitKey] = Visit(place: "Bergen", at: visit.at)
        let again = try store.runMigrations(ImportFromFile(file, into: visitKey, id: "import visit again"))
        #expect(again.first?.result.description == "the store already holds a newer value; the file was left alone")
        #expect(store[visitKey]?.place == "Bergen")
    }

    @Test("A property-list file, a file of a direct type, and a missing file import as each should")
    func otherFiles() throws {
        let folder = try TemporaryDirectory()
        let plist = folder.url.appendingPathComponent("pet.plist")
        try PropertyListEncoder().encode(Pet(name: "Rex", age: 3)).write(to: plist)
        let tagsFile = folder.url.appendingPathComponent("tags.json")
        try Data(#"["a","b"]"#.utf8).write(to: tagsFile)
        let tags = PreferenceKey<[String]>("tags", default: [])
        let store = PreferencesStore.inMemory()
        let applied = try store.runMigrations(
            ImportFromFile(plist, into: .pet), ImportFromFile(tagsFile, into: tags),
            ImportFromFile(folder.url.appendingPathComponent("absent.json"), into: .count))
        #expect(store[.pet] == Pet(name: "Rex", age: 3))
        #expect(store[tags] == ["a", "b"])
        #expect(!store.contains(.count))
        #expect(applied.count == 3)
        #expect(applied.last?.result.description.hasPrefix("no file at") == true)
    }

    @Test("A file that does not decode, or breaks a rule, is reported and left out, and later migrations run")
    func undecodableFile() throws {
        let folder = try TemporaryDirectory()
        let file = folder.url.appendingPathComponent("pet.json")
        try Data(#"{"name": 3}"#.utf8).write(to: file)
        let zoomFile = folder.url.appendingPathComponent("zoom.json")
        try Data("500".utf8).write(to: zoomFile)
        let zoom = PreferenceKey<Int>("zoom", default: 100).constrained(to: .range(50...200))
        let store = PreferencesStore.inMemory()
        let applied = try store.runMigrations(
            ImportFromFile(file, into: .pet), ImportFromFile(zoomFile, into: zoom),
            MigrateName(from: PreferenceKey<Int>("old", default: 0), to: .count))
        #expect(applied.count == 3, "a file that does not decode kept later migrations from running")
        #expect(applied[0].result.description.hasPrefix("skipped 'pet.json': it does not decode as Optional<Pet>"))
        #expect(!store.contains(.pet))
        #expect(!store.contains(zoom))
        let reported = store.errorChannel.takeBacklog()
        try #require(reported.count == 2)
        #expect(reported.map(\.code) == [.decodingFailed, .invalidValue])
        #expect(reported[0].key == StoredKey("pet"))
        #expect(reported[0].description.contains("the file '\(file.path)' does not decode as Optional<Pet>"))
        #expect(reported[0].description.contains("recorded as applied without it"))
        #expect(reported[1].description.contains("holds 500, but the key must be between 50 and 200"))
    }

    @Test("A file that cannot be read fails the import, which runs again once it can")
    func unreadableFile() throws {
        let folder = try TemporaryDirectory()
        // A folder where the file should be: it exists, and reading it fails.
        let file = folder.url.appendingPathComponent("pet.json")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        let store = PreferencesStore.inMemory()
        let error = #expect(throws: PreferencesError.self) { try store.runMigrations(ImportFromFile(file, into: .pet)) }
        #expect(error?.code == .migrationFailed)
        #expect(error?.description.contains("the file '\(file.path)' cannot be read") == true)
        #expect(store.appliedMigrations.isEmpty)

        try FileManager.default.removeItem(at: file)
        try JSONEncoder().encode(Pet(name: "Rex", age: 3)).write(to: file)
        #expect(try store.runMigrations(ImportFromFile(file, into: .pet)).count == 1)
        #expect(store[.pet] == Pet(name: "Rex", age: 3))
    }

    @Test("A file written with other strategies imports with the decoder given")
    func customDecoder() throws {
        let folder = try TemporaryDirectory()
        let file = folder.url.appendingPathComponent("visit.json")
        let visit = Visit(place: "Oslo", at: Date(timeIntervalSince1970: 1_700_000_000))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode(visit).write(to: file)
        let visitKey = PreferenceKey<Visit?>("visit")
        let store = PreferencesStore.inMemory()
        try store.runMigrations(
            ImportFromFile(file, into: visitKey) { data in
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .iso8601
                return try decoder.decode(Visit?.self, from: data)
            })
        #expect(store[visitKey] == visit)
    }
}
