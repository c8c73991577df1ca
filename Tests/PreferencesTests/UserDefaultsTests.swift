import Foundation
import Testing

@testable import Preferences

/// A `UserDefaults` suite of its own for one test, removed afterwards.
final class TemporarySuite: @unchecked Sendable {
    // `@unchecked`: the defaults object is only used by the one test that owns this suite.
    let name = "PreferencesTests.\(UUID().uuidString)"
    let defaults: UserDefaults

    init() throws {
        defaults = try #require(UserDefaults(suiteName: name))
    }

    deinit {
        defaults.removePersistentDomain(forName: name)
        defaults.synchronize()
    }
}

struct ImportFromUserDefaultsTests {
    @Test func valuesWrittenByFoundationAreReadAsTheirKeysTypesSay() throws {
        let suite = try TemporarySuite()
        let defaults = suite.defaults
        defaults.set(1, forKey: "largeText")  // an Int 1, read as true for a Bool key
        defaults.set(42, forKey: "count")
        defaults.set(4.7, forKey: "ratio")
        defaults.set("dark", forKey: "theme")
        defaults.set("Ada", forKey: "title")
        defaults.set(try JSONEncoder().encode(Pet(name: "Rex", age: 3)), forKey: "pet")
        defaults.set(["swift", "linux"], forKey: "tags")
        defaults.set(Date(timeIntervalSince1970: 1_700_000_000), forKey: "seen")
        #expect(defaults.synchronize())

        let store = PreferencesStore.inMemory()
        let tags = PreferenceKey<[String]>("tags", default: [])
        let seen = PreferenceKey<Date?>("seen")
        let applied = try store.runMigrations(
            ImportFromUserDefaults(
                .suite(suite.name),
                keys: [
                    .key(.flag, from: "largeText"), .key(.count), .key(.ratio), .key(.theme), .key(.title), .key(.pet),
                    .key(tags), .key(seen), .key(.nickname),
                ]
            )
        )
        #expect(store[.flag] == true)
        #expect(store[.count] == 42)
        #expect(store[.ratio] == 4.7)
        #expect(store[.theme] == .dark)
        #expect(store[.title] == "Ada")
        #expect(store[.pet] == Pet(name: "Rex", age: 3))
        #expect(store[tags] == ["swift", "linux"])
        #expect(store[seen] == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(!store.contains(.nickname))
        #expect(applied.first?.result.description == "imported 8 of 9 keys")
        #expect(defaults.integer(forKey: "count") == 42, "the import deleted from its source")
    }

    @Test func aValueThatDoesNotFitIsSkippedAndReported() throws {
        let suite = try TemporarySuite()
        suite.defaults.set("seven", forKey: "count")
        suite.defaults.set(4.5, forKey: "ratio")
        suite.defaults.set(2, forKey: "flag")
        #expect(suite.defaults.synchronize())
        let store = PreferencesStore.inMemory()
        let applied = try store.runMigrations(
            ImportFromUserDefaults(.suite(suite.name), keys: [.key(.count), .key(.ratio), .key(.flag)])
        )
        #expect(store[.ratio] == 4.5)
        #expect(!store.contains(.count))
        #expect(!store.contains(.flag), "2 is no Bool")
        let result = try #require(applied.first?.result.description)
        #expect(result.contains("imported 1 of 3 keys"))
        #expect(result.contains("'count' holds a String, which does not read as Int"))
        // Each report says what the ledger says: applied, with the value left out.
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.typeMismatch, .typeMismatch])
        #expect(Set(reported.compactMap(\.key)) == [StoredKey("count"), StoredKey("flag")])
        #expect(store.appliedMigrations.count == 1)
        for report in reported {
            #expect(report.description.contains("was recorded as applied"), "\(report)")
            #expect(!report.description.contains("runs again"), "\(report)")
        }
    }

    @Test func aValueThatDoesNotFitFailsTheImportWhenAsked() throws {
        let suite = try TemporarySuite()
        suite.defaults.set(3, forKey: "count")
        suite.defaults.set("not a bool", forKey: "flag")
        #expect(suite.defaults.synchronize())
        let store = PreferencesStore.inMemory()
        let error = #expect(throws: PreferencesError.self) {
            try store.runMigrations(
                ImportFromUserDefaults(.suite(suite.name), keys: [.key(.count), .key(.flag)], ifValueDoesNotFit: .fail)
            )
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.key == StoredKey("flag"))
        #expect(store.storedKeys().isEmpty)
        #expect(store.appliedMigrations.isEmpty)
    }

    @Test func registeredDefaultsAreNotImportedAsIfTheUserHadChosenThem() throws {
        let suite = try TemporarySuite()
        let registered = PreferenceKey<Int>("registeredOnly-\(UUID().uuidString)", default: 0)
        suite.defaults.register(defaults: [registered.name: 5])
        suite.defaults.set(7, forKey: "count")
        #expect(suite.defaults.synchronize())
        #expect(suite.defaults.integer(forKey: registered.name) == 5)
        let store = PreferencesStore.inMemory()
        try store.runMigrations(
            ImportFromUserDefaults(.suite(suite.name), keys: [.key(.count), .key(registered)])
        )
        #expect(store[.count] == 7)
        #expect(!store.contains(registered))
    }

    @Test func aRerunNeverOverwritesANewerValue() throws {
        let suite = try TemporarySuite()
        suite.defaults.set("stale", forKey: "title")
        suite.defaults.set(5, forKey: "count")
        #expect(suite.defaults.synchronize())
        let directory = try TemporaryDirectory()
        let first = try PreferencesStore(fileURL: directory.storeURL)
        first[.count] = 9  // already in the store: newer than the suite's
        try first.runMigrations(ImportFromUserDefaults(.suite(suite.name), keys: [.key(.title), .key(.count)]))
        #expect(first[.count] == 9)
        #expect(first[.title] == "stale")
        first[.title] = "fresh"

        let next = try PreferencesStore(fileURL: directory.storeURL)
        #expect(try next.runMigrations(ImportFromUserDefaults(.suite(suite.name), keys: [.key(.title)])).isEmpty)
        #expect(next[.title] == "fresh")
    }

    @Test(
        .enabled(if: hasPython, "writes its property lists with python3's plistlib"), .tags(.childProcesses),
        arguments: ["FMT_BINARY", "FMT_XML"]
    )
    func aPropertyListWrittenByAnotherToolImports(format: String) throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("exported.plist")
        let script = """
            import plistlib, datetime, sys
            value = {"largeText": True, "count": 12, "ratio": 0.25, "theme": "light", "tags": ["a", "b"],
                     "seen": datetime.datetime(2024, 5, 1, 12, 30, 15, 250000), "blob": b"\\x00\\x01",
                     "nested": {"depth": 2}}
            with open(sys.argv[1], "wb") as f:
                plistlib.dump(value, f, fmt=plistlib.\(format))
            """
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", script, file.path]
        try python.run()
        python.waitUntilExit()
        try #require(python.terminationStatus == 0, "python3 could not write the property list")

        let store = PreferencesStore.inMemory()
        let seen = PreferenceKey<Date?>("seen")
        let blob = PreferenceKey<Data>("blob", default: Data())
        let nested = PreferenceKey<[String: Int]>("nested", default: [:])
        let tags = PreferenceKey<[String]>("tags", default: [])
        try store.runMigrations(
            ImportFromUserDefaults(
                .propertyListFile(file),
                keys: [
                    .key(.flag, from: "largeText"), .key(.count), .key(.ratio), .key(.theme), .key(seen), .key(blob),
                    .key(nested), .key(tags),
                ]
            )
        )
        #expect(store[.flag] == true)
        #expect(store[.count] == 12)
        #expect(store[.ratio] == 0.25)
        #expect(store[.theme] == .light)
        #expect(store[blob] == Data([0, 1]))
        #expect(store[nested] == ["depth": 2])
        #expect(store[tags] == ["a", "b"])
        let date = try #require(store[seen])
        let expected = try #require(
            Calendar(identifier: .gregorian).date(
                from: DateComponents(timeZone: .gmt, year: 2024, month: 5, day: 1, hour: 12, minute: 30, second: 15)
            )
        )
        // XML property lists keep whole seconds; binary ones keep the fraction.
        #expect(abs(date.timeIntervalSince(expected) - (format == "FMT_XML" ? 0 : 0.25)) < 0.001)
    }

    @Test func anUnreadablePropertyListFailsTheMigrationNamingTheFile() throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("broken.plist")
        try Data("not a property list".utf8).write(to: file)
        let store = PreferencesStore.inMemory()
        let error = #expect(throws: PreferencesError.self) {
            try store.runMigrations(ImportFromUserDefaults(.propertyListFile(file), keys: [.key(.count)]))
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.description.contains(file.path) == true)
    }
}

struct UserDefaultsBackendTests {
    @Test func valuesOfEveryKindRoundTripThroughASuite() throws {
        let suite = try TemporarySuite()
        let url = PreferenceKey<URL?>("url")
        let date = PreferenceKey<Date?>("date")
        let big = PreferenceKey<UInt64>("big", default: 0)
        let small = PreferenceKey<Float>("small", default: 0)
        let store = PreferencesStore(userDefaultsSuite: suite.name)
        store[.flag] = true
        store[.count] = -3
        store[.ratio] = 0.1
        store[.theme] = .dark
        store[.pet] = Pet(name: "Rex", age: 3)
        store[url] = URL(string: "https://example.com/a?b=1#c")
        store[date] = Date(timeIntervalSinceReferenceDate: 123.456_789)
        store[big] = UInt64.max
        store[small] = 0.5
        store[.globalFlag] = true

        let reopened = PreferencesStore(userDefaultsSuite: suite.name)
        #expect(reopened[.flag] == true)
        #expect(reopened[.count] == -3)
        #expect(reopened[.ratio] == 0.1)
        #expect(reopened[.theme] == .dark)
        #expect(reopened[.pet] == Pet(name: "Rex", age: 3))
        #expect(reopened[url]?.absoluteString == "https://example.com/a?b=1#c")
        #expect(reopened[date] == Date(timeIntervalSinceReferenceDate: 123.456_789))
        #expect(reopened[big] == UInt64.max)
        #expect(reopened[small] == 0.5)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    @Test func numbersAPropertyListCannotHoldExactlyRoundTripThroughASuiteAndItsFile() throws {
        let suite = try TemporarySuite()
        let zero = PreferenceKey<Double>("zero", default: 1)
        let payload = PreferenceKey<Double>("payload", default: 0)
        let infinite = PreferenceKey<Double>("infinite", default: 0)
        let floatNaN = PreferenceKey<Float>("floatNaN", default: 0)
        let store = PreferencesStore(userDefaultsSuite: suite.name)
        store[zero] = -0.0
        store[payload] = Double(nan: 0x5A5, signaling: false)
        store[infinite] = -.infinity
        store[floatNaN] = Float(nan: 3, signaling: false)

        let reopened = PreferencesStore(userDefaultsSuite: suite.name)
        #expect(reopened[zero].bitPattern == (-0.0 as Double).bitPattern)
        #expect(reopened[payload].bitPattern == Double(nan: 0x5A5, signaling: false).bitPattern)
        #expect(reopened[infinite] == -.infinity)
        #expect(reopened[floatNaN].bitPattern == Float(nan: 3, signaling: false).bitPattern)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)

        // What the suite writes to its file is a property list that holds the bits exactly.
        let object = try #require(suite.defaults.object(forKey: "app:zero"))
        let file = try PropertyListSerialization.data(fromPropertyList: ["v": object], format: .xml, options: 0)
        let read = try #require(try PropertyListSerialization.propertyList(from: file, format: nil) as? [String: Any])
        #expect(PropertyListValue.candidates(for: read["v"] as Any).first == .double(-0.0))
    }

    @Test func aWriteThroughUserDefaultsReachesTheStoreAndItsObserversWhenUserDefaultsSaysSo() throws {
        let suite = try TemporarySuite()
        let store = PreferencesStore(userDefaultsSuite: suite.name)
        store[.title] = "from the store"
        let received = Locked<[(String, ChangeOrigin)]>([])
        let observation = store.observe(.title) { value, change in
            received.withLock { $0.append((value, change.origin)) }
        }
        // What `@AppStorage` or other code does: its own UserDefaults object, then a save.
        let other = try #require(UserDefaults(suiteName: suite.name))
        other.set("from UserDefaults", forKey: "app:title")
        // Apple platforms post this for every change; Foundation on Linux posts nothing, so the
        // test posts it as they would.
        #if !canImport(Darwin)
            NotificationCenter.default.post(name: UserDefaults.didChangeNotification, object: other)
        #endif
        #expect(store[.title] == "from UserDefaults")
        let deadline = Date().addingTimeInterval(5)
        while received.withLock({ $0.isEmpty }) && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        let first = try #require(received.withLock { $0.first })
        #expect(first.0 == "from UserDefaults")
        #expect(first.1 == .elsewhere)
        #expect(received.withLock { $0.count } == 1, "the store's own write was delivered as a change from elsewhere")
        observation.cancel()
    }

    @Test func globalKeysAreThePlainNamesUserDefaultsReads() throws {
        let suite = try TemporarySuite()
        let store = PreferencesStore(userDefaultsSuite: suite.name)
        store[.globalFlag] = true
        store[.count] = 7
        let defaults = try #require(UserDefaults(suiteName: suite.name))
        #expect(defaults.bool(forKey: "flag") == true)
        #expect(defaults.integer(forKey: "app:count") == 7)
        defaults.set("from elsewhere", forKey: "title")
        defaults.synchronize()
        #expect(
            PreferencesStore(userDefaultsSuite: suite.name)[PreferenceKey<String>("title", default: "", in: .global)]
                == "from elsewhere")
    }

    @Test func aWrongTypeInASuiteIsStillAMismatch() throws {
        let suite = try TemporarySuite()
        suite.defaults.set("abc", forKey: "flag")
        suite.defaults.synchronize()
        let store = PreferencesStore(userDefaultsSuite: suite.name)
        let error = #expect(throws: PreferencesError.self) { try store.value(for: .globalFlag) }
        #expect(error?.code == .typeMismatch)
        #expect(suite.defaults.string(forKey: "flag") == "abc")
    }

    @Test func migrationsRunOnceOnASuiteToo() throws {
        let suite = try TemporarySuite()
        suite.defaults.set(4, forKey: "rating")
        suite.defaults.synchronize()
        let migration = MigrateValue(
            from: PreferenceKey<Int>("rating", default: 0, in: .global),
            to: PreferenceKey<Double>("rating", default: 0, in: .global)
        ) { Double($0) + 0.5 }
        try PreferencesStore(userDefaultsSuite: suite.name).runMigrations(migration)
        let next = PreferencesStore(userDefaultsSuite: suite.name)
        #expect(try next.runMigrations(migration).isEmpty)
        #expect(next[PreferenceKey<Double>("rating", default: 0, in: .global)] == 4.5)
        #expect(next.storedKeys() == [StoredKey("rating", in: .global)])
    }
}

/// Whether `python3` can be run, for the test that has another tool write a property list.
private let hasPython: Bool = {
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    probe.arguments = ["python3", "-c", "import plistlib"]
    probe.standardOutput = FileHandle.nullDevice
    probe.standardError = FileHandle.nullDevice
    guard (try? probe.run()) != nil else { return false }
    probe.waitUntilExit()
    return probe.terminationStatus == 0
}()
