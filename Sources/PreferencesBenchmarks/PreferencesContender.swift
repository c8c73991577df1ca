import Foundation
import Preferences

/// This package's store, with keys declared once per index, as an app declares them once.
final class PreferencesContender: Contender {
    let name: String
    let store: PreferencesStore
    var isPreferences: Bool { true }

    private let ints: [PreferenceKey<Int>]
    private let strings: [PreferenceKey<String>]
    private let pets: [PreferenceKey<BenchmarkPet>]
    private let themes: [PreferenceKey<BenchmarkTheme>]

    init(name: String, store: PreferencesStore, count: Int) {
        self.name = name
        self.store = store
        ints = (0..<count).map { PreferenceKey<Int>("int\($0)", default: 0) }
        strings = (0..<count).map { PreferenceKey<String>("string\($0)", default: "") }
        pets = (0..<count).map { PreferenceKey<BenchmarkPet>("pet\($0)", default: .sample(-1)) }
        themes = (0..<count).map { PreferenceKey<BenchmarkTheme>("theme\($0)", default: .system) }
    }

    func write(_ value: Int, at index: Int) throws { try store.setValue(value, for: ints[index]) }
    func readInt(at index: Int) -> Int { store[ints[index]] }
    func write(_ value: String, stringAt index: Int) throws { try store.setValue(value, for: strings[index]) }
    func readString(at index: Int) -> String { store[strings[index]] }
    func write(_ value: BenchmarkPet, codableAt index: Int) throws { try store.setValue(value, for: pets[index]) }
    func readCodable(at index: Int) -> BenchmarkPet { store[pets[index]] }
    func write(_ value: BenchmarkTheme, enumAt index: Int) throws { try store.setValue(value, for: themes[index]) }
    func readEnum(at index: Int) -> BenchmarkTheme { store[themes[index]] }
    func increment(at index: Int) throws { try store.update(ints[index]) { $0 += 1 } }

    func writeBatch(_ values: [Int]) throws {
        try store.transaction { preferences in
            for (index, value) in values.enumerated() {
                preferences[ints[index]] = value
            }
        }
    }
}

/// Foundation's `UserDefaults`, on a fresh suite: with `synchronize()` after each write, so that
/// the value reaches the disk as Preferences' does, or without it, labelled so.
final class UserDefaultsContender: Contender {
    let name: String
    let defaults: UserDefaults
    let suiteName: String
    private let synchronizes: Bool

    init(suiteName: String, synchronizes: Bool) {
        self.suiteName = suiteName
        defaults = UserDefaults(suiteName: suiteName)!
        self.synchronizes = synchronizes
        name = synchronizes ? "UserDefaults, set + synchronize()" : "UserDefaults, set (not on disk)"
    }

    private func saved() {
        if synchronizes {
            defaults.synchronize()
        }
    }

    func write(_ value: Int, at index: Int) throws {
        defaults.set(value, forKey: "int\(index)")
        saved()
    }

    func readInt(at index: Int) -> Int { defaults.integer(forKey: "int\(index)") }

    func write(_ value: String, stringAt index: Int) throws {
        defaults.set(value, forKey: "string\(index)")
        saved()
    }

    func readString(at index: Int) -> String { defaults.string(forKey: "string\(index)") ?? "" }

    func write(_ value: BenchmarkPet, codableAt index: Int) throws {
        defaults.set(try JSONEncoder().encode(value), forKey: "pet\(index)")
        saved()
    }

    func readCodable(at index: Int) -> BenchmarkPet {
        defaults.data(forKey: "pet\(index)").flatMap { try? JSONDecoder().decode(BenchmarkPet.self, from: $0) }
            ?? .sample(-1)
    }

    func write(_ value: BenchmarkTheme, enumAt index: Int) throws {
        defaults.set(value.rawValue, forKey: "theme\(index)")
        saved()
    }

    func readEnum(at index: Int) -> BenchmarkTheme {
        defaults.string(forKey: "theme\(index)").flatMap(BenchmarkTheme.init(rawValue:)) ?? .system
    }

    func increment(at index: Int) throws {
        defaults.set(defaults.integer(forKey: "int\(index)") + 1, forKey: "int\(index)")
        saved()
    }

    func writeBatch(_ values: [Int]) throws {
        for (index, value) in values.enumerated() {
            defaults.set(value, forKey: "int\(index)")
        }
        saved()
    }
}

/// The store a developer would write by hand: a `[String: Data]` of JSON-encoded values, written
/// to one file atomically on every change, decoded again on every read.
final class JSONFileContender: Contender {
    let name = "hand-written JSON file"
    let url: URL
    private var values: [String: Data] = [:]

    init(url: URL) throws {
        self.url = url
        if let data = try? Data(contentsOf: url) {
            values = try JSONDecoder().decode([String: Data].self, from: data)
        }
    }

    private func set<Value: Encodable>(_ value: Value, forKey key: String) throws {
        values[key] = try JSONEncoder().encode(value)
        try save()
    }

    private func get<Value: Decodable>(_ type: Value.Type, forKey key: String) -> Value? {
        values[key].flatMap { try? JSONDecoder().decode(Value.self, from: $0) }
    }

    /// Stores `count` values of every kind, and saves once.
    func fill(count: Int) throws {
        let encoder = JSONEncoder()
        for index in 0..<count {
            values["int\(index)"] = try encoder.encode(index)
            values["string\(index)"] = try encoder.encode(benchmarkString(index))
            values["pet\(index)"] = try encoder.encode(BenchmarkPet.sample(index))
            values["theme\(index)"] = try encoder.encode(BenchmarkTheme.dark)
        }
        try save()
    }

    func save() throws {
        try JSONEncoder().encode(values).write(to: url, options: .atomic)
    }

    func write(_ value: Int, at index: Int) throws { try set(value, forKey: "int\(index)") }
    func readInt(at index: Int) -> Int { get(Int.self, forKey: "int\(index)") ?? 0 }
    func write(_ value: String, stringAt index: Int) throws { try set(value, forKey: "string\(index)") }
    func readString(at index: Int) -> String { get(String.self, forKey: "string\(index)") ?? "" }
    func write(_ value: BenchmarkPet, codableAt index: Int) throws { try set(value, forKey: "pet\(index)") }
    func readCodable(at index: Int) -> BenchmarkPet { get(BenchmarkPet.self, forKey: "pet\(index)") ?? .sample(-1) }
    func write(_ value: BenchmarkTheme, enumAt index: Int) throws { try set(value, forKey: "theme\(index)") }
    func readEnum(at index: Int) -> BenchmarkTheme { get(BenchmarkTheme.self, forKey: "theme\(index)") ?? .system }
    func increment(at index: Int) throws { try set(readInt(at: index) + 1, forKey: "int\(index)") }

    func writeBatch(_ values: [Int]) throws {
        for (index, value) in values.enumerated() {
            self.values["int\(index)"] = try JSONEncoder().encode(value)
        }
        try save()
    }
}
