import Foundation
import Testing

@testable import Preferences

private let zoom = PreferenceKey<Int>("zoom", default: 100).constrained(to: .range(50...200))
private let nickname = PreferenceKey<String>("nickname", default: "").constrained(to: .maximumLength(5))
private let step = PreferenceKey<Int>("step", default: 5)
    .constrained(to: .range(0...))
    .constrained(to: .predicate("a multiple of 5") { $0 % 5 == 0 })
private let limit = PreferenceKey<Int?>("limit").constrained(to: .range(...10))
private let shade = PreferenceKey<Theme>("shade", default: .light).constrained(to: .oneOf([.light, .dark]))
private let tags = PreferenceKey<[String]>("tags", default: []).constrained(to: .maximumCount(2))

@Suite("Rules for values")
struct RuleTests {
    @Test("A write that breaks a rule throws invalidValue, names key, value and rule, and writes nothing")
    func refusedWrites() throws {
        let store = PreferencesStore.inMemory()
        let error = #expect(throws: PreferencesError.self) { try store.setValue(500, for: zoom) }
        #expect(error?.code == .invalidValue)
        #expect(error?.key == StoredKey("zoom"))
        #expect(
            error?.description == "Key 'app:zoom' must be between 50 and 200, so 500 was refused. Nothing was written.")
        #expect(throws: PreferencesError.self) { try store.setValue("too long", for: nickname) }
        #expect(throws: PreferencesError.self) { try store.setValue(7, for: step) }
        #expect(throws: PreferencesError.self) { try store.setValue(-5, for: step) }
        #expect(throws: PreferencesError.self) { try store.setValue(11, for: limit) }
        #expect(throws: PreferencesError.self) { try store.setValue(.system, for: shade) }
        #expect(throws: PreferencesError.self) { try store.setValue(["a", "b", "c"], for: tags) }
        #expect(throws: PreferencesError.self) { try store.update(zoom) { $0 = 10 } }
        #expect(throws: PreferencesError.self) {
            try store.transaction { preferences in
                preferences[.count] = 1
                try preferences.setValue(201, for: zoom)
            }
        }
        store[zoom] = 300
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.invalidValue])
        #expect(store.storedKeys().isEmpty, "a refused value, or the rest of its transaction, was written")

        // Values that keep every rule, bounds included, are written.
        try store.setValue(50, for: zoom)
        try store.setValue(200, for: zoom)
        try store.setValue("short", for: nickname)
        try store.setValue(15, for: step)
        try store.setValue(nil, for: limit)
        try store.setValue(-3, for: limit)
        try store.setValue(.dark, for: shade)
        try store.setValue(["a", "b"], for: tags)
        #expect(store[zoom] == 200)
        #expect(store[limit] == -3)
        #expect(store[shade] == .dark)
    }

    @Test("A launch argument or managed setting that breaks a rule is reported and skipped")
    func overrides() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        try Data(#"{"shade": "system"}"#.utf8).write(to: settings)
        try PreferencesStore(fileURL: folder.storeURL).setValue(.dark, for: shade)
        let store = try PreferencesStore(
            fileURL: folder.storeURL,
            overrides: [.launchArguments(["-zoom", "500", "-nickname", "Ada"]), .managed(fileURL: settings)])
        #expect(store[zoom] == 100)
        #expect(store.source(of: zoom) == .default)
        #expect(store[nickname] == "Ada")
        // The administrator's value breaks the rule: the key stays forced, at its stored value.
        #expect(store[shade] == .dark)
        #expect(store.isForced(shade))
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.invalidValue, .invalidValue])
        #expect(
            reported.first?.description
                == "Key 'app:zoom' must be between 50 and 200, but the launch argument '-zoom' holds 500. It was skipped."
        )
        #expect(reported.last?.description.contains("managed settings file") == true)
    }

    @Test("A stored value that breaks a rule is reported once, left untouched, and reads as the default")
    func storedValues() throws {
        let store = PreferencesStore.inMemory()
        try store.writeStoredValues([(StoredKey("zoom"), .signed(20))])
        #expect(store[zoom] == 100)
        #expect(store[zoom] == 100)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.invalidValue])
        #expect(reported.first?.description.contains("but 20 is stored") == true)
        #expect(reported.first?.description.contains("left untouched") == true)
        let error = #expect(throws: PreferencesError.self) { try store.value(for: zoom) }
        #expect(error?.code == .invalidValue)
        #expect(store.storedValue(at: StoredKey("zoom")) == .signed(20))
        // The same name without the rule reads it.
        #expect(store[PreferenceKey<Int>("zoom", default: 0)] == 20)
    }

    @Test("Imports refuse or skip a value that breaks a rule, saying which")
    func imports() throws {
        let store = PreferencesStore.inMemory()
        store.register(zoom)
        let export = Data(#"[{"key": "app:zoom", "type": "int", "value": "500"}]"#.utf8)
        let error = #expect(throws: PreferencesError.self) { try store.import(export) }
        #expect(error?.code == .importFailed)
        #expect(error?.description.contains("the entry holds 500, but the key must be between 50 and 200") == true)

        let suite = try TemporarySuite()
        suite.defaults.set(500, forKey: "zoom")
        #expect(suite.defaults.synchronize())
        let applied = try store.runMigrations(ImportFromUserDefaults(.suite(suite.name), keys: [.key(zoom)]))
        #expect(applied.first?.result.description.contains("'zoom' holds 500, but the key must be between") == true)
        #expect(!store.contains(zoom))
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.invalidValue])
    }

    @Test("The schema records each rule in words and in stored values a tool can check")
    func schema() throws {
        let store = PreferencesStore.inMemory()
        store.register(zoom, step, limit, shade, tags)
        let declarations = Dictionary(uniqueKeysWithValues: store.declaredKeys().map { ($0.name, $0) })
        let zoomRule = try #require(declarations["zoom"]?.rules.first)
        #expect(zoomRule.description == "between 50 and 200")
        #expect(zoomRule.check == .range(lower: .signed(50), upper: .signed(200)))
        #expect(zoomRule.admits(.signed(50)) == true)
        #expect(zoomRule.admits(.unsigned(201)) == false)
        #expect(zoomRule.admits(.double(49.5)) == false)
        #expect(zoomRule.admits(.string("60")) == nil)
        #expect(declarations["step"]?.rules.map(\.check) == [.range(lower: .signed(0), upper: nil), .predicate])
        #expect(declarations["step"]?.rules.last?.admits(.signed(7)) == nil)
        #expect(declarations["limit"]?.rules.first?.check == .range(lower: nil, upper: .signed(10)))
        #expect(declarations["shade"]?.rules.first?.check == .allowed([.string("light"), .string("dark")]))
        #expect(declarations["tags"]?.rules.first?.admits(.array([.string("a")])) == true)
        // Read back as a tool reads it, from the stored schema.
        let entry = try #require(declarations["zoom"]?.schemaValue)
        #expect(KeyDeclaration(schemaValue: entry)?.rules == [zoomRule])
    }

    @Test func aDefaultThatBreaksItsRuleStopsTheProgramNamingKeyAndRule() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PreferenceKey<Int>("volume", default: 5).constrained(to: .range(10...20))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("The default of key 'volume' must be between 10 and 20, but is 5"))
    }

    @Test("A key without the rule reading first leaves nothing decoded that the key with it would take")
    func cachesAreKeptApartByRule() throws {
        let plainTags = PreferenceKey<[String]>("tags", default: [])
        let plainZoom = PreferenceKey<Int>("zoom", default: 0)
        let folder = try TemporaryDirectory()
        try PreferencesStore(fileURL: folder.storeURL).setValue(["a", "b", "c"], for: plainTags)
        let store = try PreferencesStore(fileURL: folder.storeURL, overrides: [.launchArguments(["-zoom", "500"])])
        #expect(store[plainTags] == ["a", "b", "c"])
        #expect(store[plainZoom] == 500)
        #expect(store[tags] == [])
        #expect(store[zoom] == 100)
        #expect(Set(store.errorChannel.takeBacklog().map(\.key)) == [StoredKey("tags"), StoredKey("zoom")])
    }

    @Test("A rule's test may read the store: it runs outside the store's lock")
    func predicateReadsTheStore() throws {
        let store = PreferencesStore.inMemory()
        let ceiling = PreferenceKey<Int>("ceiling", default: 10)
        let level = PreferenceKey<Int>("level", default: 0)
            .constrained(to: .predicate("at most the ceiling") { $0 <= store[ceiling] })
        try store.setValue(8, for: level)
        #expect(store[level] == 8)
        store[ceiling] = 5
        #expect(throws: PreferencesError.self) { try store.setValue(7, for: level) }
        // Written past the rule: the read tests it, reading the ceiling, and skips it.
        try store.writeStoredValues([(StoredKey("level"), .signed(9))])
        #expect(store[level] == 0)
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.invalidValue])
    }

    @Test("On an optional key, nil keeps every rule, whichever way the rule was written")
    func optionalKeys() throws {
        let shades = PreferenceKey<Theme?>("shades").constrained(to: .oneOf([.light, .dark]))
        let even = PreferenceKey<Int?>("even").constrained(to: .predicate("even") { $0 % 2 == 0 })
        let store = PreferencesStore.inMemory()
        #expect(store[shades] == nil)
        try store.setValue(.dark, for: shades)
        try store.setValue(nil, for: shades)
        #expect(throws: PreferencesError.self) { try store.setValue(.system, for: shades) }
        try store.setValue(4, for: even)
        #expect(throws: PreferencesError.self) { try store.setValue(3, for: even) }
        try store.setValue(nil, for: even)
        #expect(store.storedKeys().isEmpty)
    }

    @Test("accepts(_:) tells beforehand what a write would refuse")
    func accepts() {
        #expect(zoom.accepts(150))
        #expect(!zoom.accepts(201))
        #expect(!nickname.accepts("far too long"))
        #expect(limit.accepts(nil))
        #expect(PreferenceKey<Int>("free", default: 0).accepts(.max))
    }

    @Test("Half-open ranges leave their upper bound out, in the app and in the schema")
    func halfOpenRanges() throws {
        let digit = PreferenceKey<Int>("digit", default: 0).constrained(to: .range(0..<10))
        let negative = PreferenceKey<Double>("negative", default: -1).constrained(to: .range(..<0))
        let store = PreferencesStore.inMemory()
        try store.setValue(9, for: digit)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(10, for: digit) }
        #expect(error?.description.contains("must be at least 0 and below 10, so 10 was refused") == true)
        #expect(throws: PreferencesError.self) { try store.setValue(-1, for: digit) }
        #expect(throws: PreferencesError.self) { try store.setValue(0.0, for: negative) }
        try store.setValue(-0.5, for: negative)
        #expect(store[digit] == 9)

        store.register(digit, negative)
        let declarations = Dictionary(uniqueKeysWithValues: store.declaredKeys().map { ($0.name, $0) })
        let digitRule = try #require(declarations["digit"]?.rules.first)
        #expect(digitRule.check == .rangeBelow(lower: .signed(0), limit: .signed(10)))
        #expect(digitRule.admits(.signed(9)) == true)
        #expect(digitRule.admits(.signed(10)) == false)
        #expect(digitRule.admits(.signed(-1)) == false)
        #expect(declarations["negative"]?.rules.first?.admits(.double(0)) == false)
        #expect(declarations["negative"]?.rules.first?.description == "below 0.0")
        #expect(KeyDeclaration(schemaValue: try #require(declarations["digit"]?.schemaValue))?.rules == [digitRule])
    }
}
