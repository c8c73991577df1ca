import Foundation
import Testing

@testable import Preferences

@Suite("Declared keys, defaults and reset")
struct DeclaredKeysTests {
    @Test("A computed default is computed once per store, and only when needed")
    func computedDefault() throws {
        let calls = Locked(0)
        let since = PreferenceKey<Date>("since") {
            calls.withLock { $0 += 1 }
            return Date(timeIntervalSinceReferenceDate: Double(calls.withLock { $0 }) * 1_000)
        }
        #expect(calls.withLock { $0 } == 1)  // the key's own defaultValue
        let first = PreferencesStore.inMemory()
        let value = first[since]
        #expect(first[since] == value)
        #expect(first.defaultValue(for: since) == value)
        #expect(first.source(of: since) == .default)
        #expect(calls.withLock { $0 } == 2)
        let second = PreferencesStore.inMemory()
        #expect(second[since] != value)
        #expect(calls.withLock { $0 } == 3)
        // Nothing was stored: the default is the store's, not data.
        #expect(!first.contains(since))
        let stored = Date(timeIntervalSinceReferenceDate: 5)
        first[since] = stored
        #expect(first[since] == stored)
        #expect(first.source(of: since) == .stored)
    }

    @Test("resetAll puts declared keys back to their defaults in one commit, and keeps the rest unless asked")
    func resetAll() throws {
        let fixture = try StoreFixture(.file)
        let store = fixture.store
        store.register(.count, .flag, .theme)
        let old = PreferenceKey<Int>("retired", default: 0)
        try store.transaction { preferences in
            preferences[.count] = 4
            preferences[.flag] = true
            preferences[.theme] = .dark
            preferences[old] = 9
            preferences[.vendorFlag] = true
        }
        let commits = Locked(0)
        let observation = store.observe(anyOf: .count, .flag, .theme) { _ in commits.withLock { $0 += 1 } }
        defer { observation.cancel() }
        try store.resetAll()
        #expect(store[.count] == 0)
        #expect(store[.flag] == false)
        #expect(store[.theme] == .system)
        #expect(store[old] == 9)
        #expect(store[.vendorFlag] == true)
        #expect(commits.withLock { $0 } == 1)

        try store.resetAll(removingUndeclaredKeys: true)
        #expect(!store.contains(old))
        #expect(!store.contains(.vendorFlag))
        let reopened = try fixture.reopened()
        #expect(reopened.storedKeys().isEmpty)
        // The ledger and the schema of declared keys stay.
        #expect(reopened.storedValue(at: store.resolvedKey(for: .count).schemaKeyForTests) != nil)
    }

    @Test("reset, removeAll and removeAll(in:) leave forced keys and reserved namespaces")
    func removals() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        try Data(#"{"title": "locked"}"#.utf8).write(to: settings)
        let store = PreferencesStore.inMemory()
        store.register(.count)
        try store.runMigrations(
            MigrateName(from: PreferenceKey<Int>("a", default: 0), to: PreferenceKey("b", default: 0)))
        try store.setValue(3, for: .count)
        try store.reset(.count)
        #expect(!store.contains(.count))
        try store.setValue(3, for: .count)
        try store.setValue(true, for: .vendorFlag)
        try store.removeAll()
        #expect(store.storedKeys().isEmpty)
        #expect(store.appliedMigrations.count == 1)

        // A value stored before an administrator forced the key stays: the app cannot change it.
        let fixture = try StoreFixture(.file)
        try fixture.store.setValue("mine", for: .title)
        try fixture.store.setValue(1, for: .count)
        let managed = try PreferencesStore(
            fileURL: fixture.directory.storeURL, overrides: [.managed(fileURL: settings)])
        try managed.removeAll()
        #expect(managed.storedKeys() == [StoredKey("title")])
        #expect(managed[.title] == "locked")
        try managed.removeAll(in: .app)
        try managed.resetAll(removingUndeclaredKeys: true)
        #expect(managed.storedKeys() == [StoredKey("title")])
    }

    @Test("export and import round-trip every stored value with its type")
    func exportImport() throws {
        let source = PreferencesStore.inMemory()
        try source.transaction { preferences in
            preferences[.count] = -3
            preferences[.ratio] = -0.0
            preferences[.title] = "naïve"
            preferences[.theme] = .dark
            preferences[.pet] = Pet(name: "Rex", age: 3)
            preferences[.vendorFlag] = true
            preferences[PreferenceKey<[String: [Int]]>("nested", default: [:])] = ["a": [1, 2]]
            preferences[PreferenceKey<Date>("when", default: .distantPast)] = Date(
                timeIntervalSinceReferenceDate: 0.125)
        }
        let exported = source.export()
        let target = PreferencesStore.inMemory()
        try target.import(exported)
        #expect(target.storedEntries().map(\.key) == source.storedEntries().map(\.key))
        for (key, value) in source.storedEntries() {
            #expect(target.storedValue(at: key) == value, "\(key)")
        }
        #expect(target[.ratio].sign == .minus)
        #expect(target[.pet] == Pet(name: "Rex", age: 3))
    }

    @Test("import refuses a value of another type than a declared key's, and data that is not an export")
    func importRefusals() throws {
        let store = PreferencesStore.inMemory()
        store.register(.count)
        let wrong = Data(
            #"[{"key": "app:count", "type": "string", "value": "five"}, {"key": "app:flag", "type": "bool", "value": true}]"#
                .utf8)
        do {
            try store.import(wrong)
            Issue.record("import must refuse a string for an Int key")
        } catch let error as PreferencesError {
            #expect(error.code == .importFailed)
            #expect(error.key == StoredKey("count"))
            #expect(
                error.description
                    == "Could not import key 'app:count': the entry holds a String, which does not read as its "
                    + "declared type, Int. Nothing was imported.")
        }
        #expect(!store.contains(.flag))
        #expect(throws: PreferencesError.self) { try store.import(Data("{}".utf8)) }
        #expect(throws: PreferencesError.self) {
            try store.import(Data(#"[{"key": "count", "type": "int", "value": "1"}]"#.utf8))
        }
        #expect(throws: PreferencesError.self) {
            try store.import(Data(#"[{"key": "app:count", "type": "int", "value": "x"}]"#.utf8))
        }
    }

    @Test("The schema is stored with the data: types, kinds, defaults and summaries")
    func schema() throws {
        let fixture = try StoreFixture(.file)
        let described = PreferenceKey<Int>("count", default: 7).described("How many times it ran.")
        fixture.store.register(described, .theme, .pet)
        let reopened = try fixture.reopened()
        let declarations = reopened.declaredKeys()
        #expect(declarations.map(\.name) == ["count", "pet", "theme"])
        let count = try #require(declarations.first)
        #expect(count.typeName == "Int")
        #expect(count.kinds == [.signed, .unsigned])
        #expect(count.defaultValue == .signed(7))
        #expect(count.summary == "How many times it ran.")
        #expect(declarations[1].typeName == "Optional<Pet>")
        #expect(declarations[1].defaultValue == nil)
        #expect(declarations[2].kinds == [.string])
        #expect(declarations[2].defaultValue == .string("system"))
    }
}

extension ResolvedKey {
    fileprivate var schemaKeyForTests: ResolvedKey {
        ResolvedKey(namespace: KeyDeclaration.schemaNamespace, name: "\(namespace):\(name)")
    }
}
