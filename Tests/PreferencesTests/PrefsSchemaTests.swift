import Foundation
import Testing

@testable import Preferences

/// `prefs` commands that read the schema an app stored with `register`.
@Suite(.tags(.childProcesses))
struct PrefsSchemaTests {
    private func prefs(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        try ChildProcess.run("prefs", arguments)
    }

    /// A store whose app declared three keys and stored one of them.
    private func declaredStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store.register(
            PreferenceKey<Int>("count", default: 7).described("How many times it ran."), .theme, .vendorFlag, .pet,
            PreferenceKey<Date>("firstSeen") { .now })
        store[.title] = "stored"
        store[.theme] = .dark
        return directory
    }

    @Test func readShowsUnsetDeclaredKeysWithTheirDefaults() throws {
        let directory = try declaredStore()
        let all = try prefs(["read", directory.storeURL.path])
        #expect(all.status == 0, "\(all.errors)")
        let lines = all.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(
            lines.map { $0.first.map(String.init) } == ["app:count", "app:theme", "app:title", "com.vendor.sdk:flag"])
        #expect(all.output.contains("app:count") && all.output.contains("7  (default, not stored)"))
        #expect(!all.output.contains("dark  (default"))
        let one = try prefs(["read", directory.storeURL.path, "app:count"])
        #expect(one.status == 0)
        #expect(one.output == "7\n")
        let json = try prefs(["read", directory.storeURL.path, "app:count", "--json"])
        #expect(json.output.contains(#""default" : true"#))
        // An optional key with no default has nothing to show.
        #expect(try prefs(["read", directory.storeURL.path, "app:pet"]).status == 1)
    }

    @Test func writeChecksTheDeclaredType() throws {
        let directory = try declaredStore()
        let refused = try prefs(["write", directory.storeURL.path, "app:count", "lots", "--type", "string"])
        #expect(refused.status == 4)
        #expect(refused.errors.contains("declared as Int"))
        // With no --type, a declared key's value is read as its declared type.
        let written = try prefs(["write", directory.storeURL.path, "app:count", "12"])
        #expect(written.status == 0, "\(written.errors)")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[PreferenceKey<Int>("count", default: 7)] == 12)
        let notInt = try prefs(["write", directory.storeURL.path, "app:count", "twelve"])
        #expect(notInt.status == 2)
    }

    @Test func writeReadsCollectionsAndCodableValuesOfDeclaredKeysWithNoEntry() throws {
        let directory = try TemporaryDirectory()
        let tags = PreferenceKey<[String]>("tags", default: [])
        try PreferencesStore(fileURL: directory.storeURL).register(tags, .pet)
        let array = try prefs(["write", directory.storeURL.path, "app:tags", #"["x","y"]"#])
        #expect(array.status == 0, "\(array.errors)")
        // A Codable key is written as the JSON it is stored as, not as base64.
        let codable = try prefs(["write", directory.storeURL.path, "app:pet", #"{"name":"Rex","age":3}"#])
        #expect(codable.status == 0, "\(codable.errors)")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[tags] == ["x", "y"])
        #expect(store[.pet] == Pet(name: "Rex", age: 3))
    }

    @Test func schemaPrintsJSONAndAManagedConfigurationSkeleton() throws {
        let directory = try declaredStore()
        let json = try prefs(["schema", directory.storeURL.path])
        #expect(json.status == 0, "\(json.errors)")
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(
            entries.compactMap { $0["key"] as? String } == [
                "app:count", "app:firstSeen", "app:pet", "app:theme", "com.vendor.sdk:flag",
            ])
        #expect(entries[0]["type"] as? String == "Int")
        #expect(entries[0]["reads"] as? [String] == ["int"])
        #expect(entries[0]["summary"] as? String == "How many times it ran.")
        #expect((entries[0]["default"] as? [String: Any])?["value"] as? String == "7")

        let plist = try prefs(["schema", directory.storeURL.path, "--format", "plist"])
        #expect(plist.status == 0, "\(plist.errors)")
        let skeleton = try #require(
            try PropertyListSerialization.propertyList(from: Data(plist.output.utf8), format: nil) as? [String: Any])
        #expect(skeleton["count"] as? Int == 7)
        #expect(skeleton["theme"] as? String == "system")
        #expect(skeleton["com.vendor.sdk:flag"] as? Bool == false)
        // No value can stand for a key with no fixed default, and each key in the file is forced,
        // so those keys are left out and named in a comment.
        #expect(skeleton["pet"] == nil)
        #expect(skeleton["firstSeen"] == nil)
        #expect(skeleton.count == 3)
        #expect(plist.output.contains("<!-- Every key left in this file is forced"))
        #expect(plist.output.contains("Left out, having no fixed default: firstSeen (Date), pet (Optional<Pet>)."))

        // The skeleton, saved as managed settings, reads back as each key's type.
        let settings = directory.url.appendingPathComponent("managed.plist")
        try Data(plist.output.utf8).write(to: settings)
        let managed = try PreferencesStore(fileURL: directory.storeURL, overrides: [.managed(fileURL: settings)])
        #expect(managed[PreferenceKey<Int>("count", default: 0)] == 7)
        #expect(managed[.theme] == .system)
        #expect(managed.source(of: .vendorFlag) == .managed)

        let none = try TemporaryDirectory()
        try PreferencesStore(fileURL: none.storeURL).setValue(1, for: .count)
        #expect(try prefs(["schema", none.storeURL.path]).status == 1)
    }

    @Test func writeReadsItemsOfDeclaredCollectionsAsTheirDeclaredKinds() throws {
        let directory = try TemporaryDirectory()
        let weights = PreferenceKey<[Double]>("weights", default: [])
        let visits = PreferenceKey<[String: Date]>("visits", default: [:])
        try PreferencesStore(fileURL: directory.storeURL).register(weights, visits)
        #expect(try prefs(["write", directory.storeURL.path, "app:weights", "[1, 2.5]"]).status == 0)
        let when = "2026-11-21T09:30:00Z"
        #expect(try prefs(["write", directory.storeURL.path, "app:visits", #"{"oslo": "\#(when)"}"#]).status == 0)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[weights] == [1, 2.5])
        #expect(store[visits] == ["oslo": Date(timeIntervalSince1970: 1_795_253_400)])
        #expect(store.errorChannel.takeBacklog().isEmpty)

        let refused = try prefs(["write", directory.storeURL.path, "app:weights", #"["heavy"]"#])
        #expect(refused.status == 4)
        #expect(refused.errors.contains("declared as Array<Double>, whose items are not a string"), "\(refused.errors)")
    }

    @Test func schemaShowsRulesAndWriteRefusesWhatBreaksThem() throws {
        let directory = try TemporaryDirectory()
        let zoom = PreferenceKey<Int>("zoom", default: 100).constrained(to: .range(50...200))
        let step = PreferenceKey<Int>("step", default: 5).constrained(to: .predicate("a multiple of 5") { $0 % 5 == 0 })
        let shade = PreferenceKey<Theme>("shade", default: .light).constrained(to: .oneOf([.light, .dark]))
        let level = PreferenceKey<Level>("level", default: .low).constrained(to: .oneOf([.low, .high]))
        let nickname = PreferenceKey<String?>("nickname").constrained(to: .maximumLength(8))
        try PreferencesStore(fileURL: directory.storeURL).register(zoom, step, shade, level, nickname)

        let json = try prefs(["schema", directory.storeURL.path])
        let entries = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        let zoomRules = try #require(entries.first { $0["key"] as? String == "app:zoom" }?["rules"] as? [[String: Any]])
        #expect(zoomRules.first?["rule"] as? String == "between 50 and 200")
        #expect((zoomRules.first?["minimum"] as? [String: Any])?["value"] as? String == "50")
        let plist = try prefs(["schema", directory.storeURL.path, "--format", "plist"])
        #expect(
            plist.output.contains("<!-- zoom must be between 50 and 200. -->\n\t<key>zoom</key>"), "\(plist.output)")
        #expect(plist.output.contains("<!-- shade must be one of light, dark. -->"))
        // Allowed values as an administrator writes them: an enum's raw values, not its cases' names.
        #expect(plist.output.contains("<!-- level must be one of \(Level.low.rawValue), \(Level.high.rawValue). -->"))
        // A key left out keeps its rule in the comment that names it.
        #expect(plist.output.contains("nickname (Optional<String>, at most 8 characters)"))
        #expect(try PropertyListSerialization.propertyList(from: Data(plist.output.utf8), format: nil) is [String: Any])

        let refused = try prefs(["write", directory.storeURL.path, "app:zoom", "500"])
        #expect(refused.status == 4)
        #expect(refused.errors.contains("'app:zoom' must be between 50 and 200 (a rule of the app's); 500 is not."))
        #expect(try prefs(["write", directory.storeURL.path, "app:shade", "system"]).status == 4)
        #expect(try prefs(["write", directory.storeURL.path, "app:zoom", "150"]).status == 0)
        // A rule only the app's code can check is not checked here; the app skips what breaks it.
        #expect(try prefs(["write", directory.storeURL.path, "app:step", "7"]).status == 0)
        #expect(try prefs(["write", directory.storeURL.path, "app:zoom", "500", "--force"]).status == 0)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[zoom] == 100)
        #expect(store[step] == 5)
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.invalidValue, .invalidValue])
    }
}
