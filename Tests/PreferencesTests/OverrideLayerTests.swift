import Foundation
import Testing

@testable import Preferences

#if canImport(Observation)
    import Observation
#endif

@Suite("Override layers")
struct OverrideLayerTests {
    @Test("Launch arguments override what is stored, read as each key's type")
    func launchArguments() throws {
        let store = PreferencesStore.inMemory(
            overrides: [
                .launchArguments([
                    "-count", "5", "-flag", "YES", "-title", "42", "-com.vendor.sdk:flag", "true",
                    "--count", "7", "-ratio", "0.25", "-theme", "dark",
                ])
            ])
        try store.setValue(3, for: .count)
        #expect(store[.count] == 5)
        #expect(store.source(of: .count) == .launchArgument)
        #expect(store[.flag] == true)
        #expect(store[.globalFlag] == true)  // a plain name stands for the global key too
        #expect(store[.title] == "42")  // text that reads as a number is still a string for a String key
        #expect(store[.vendorFlag] == true)
        #expect(store[.ratio] == 0.25)
        #expect(store[.theme] == .dark)
        #expect(!store.isForced(.count))
        // A write is stored, and the override still wins for this run.
        store[.count] = 9
        #expect(store[.count] == 5)
        #expect(store.storedValue(at: store.resolvedKey(for: .count)) == .signed(9))
        #expect(store.source(of: .level) == .default)
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test("An override wins over a stored value that does not read as the key's type, silently")
    func overrideOverUnreadableStoredValue() throws {
        let store = PreferencesStore.inMemory(overrides: [.launchArguments(["-count", "5"])])
        try store.setValue("many", for: PreferenceKey<String>("count", default: ""))
        #expect(store[.count] == 5)
        #expect(try store.value(for: .count) == 5)
        #expect(store.source(of: .count) == .launchArgument)
        #expect(!store.errorChannel.takeBacklog().contains { $0.code == .typeMismatch })

        // With no override that reads, the stored value is what fails.
        let plain = PreferencesStore.inMemory(overrides: [.launchArguments(["-count", "several"])])
        try plain.setValue("many", for: PreferenceKey<String>("count", default: ""))
        #expect(plain[.count] == PreferenceKeys.count.defaultValue)
        #expect(throws: PreferencesError.self) { try plain.value(for: .count) }
    }

    @Test("A launch argument of the wrong type is reported once and skipped, never coerced")
    func wrongType() throws {
        let store = PreferencesStore.inMemory(overrides: [.launchArguments(["-count", "many", "-flag", "2"])])
        try store.setValue(3, for: .count)
        #expect(store[.count] == 3)
        #expect(store[.count] == 3)
        #expect(store.source(of: .count) == .stored)
        #expect(store[.flag] == false)
        #expect(store.source(of: .flag) == .default)
        let errors = store.errorChannel.takeBacklog()
        #expect(errors.map(\.code) == [.typeMismatch, .typeMismatch])
        #expect(errors.first?.key == StoredKey("count"))
        #expect(errors.first?.description.contains("launch argument '-count'") == true)
        #expect(errors.first?.description.contains("'many'") == true)
    }

    @Test("When a name is given twice the last wins, and arrays and Codable values read as JSON")
    func repeatedAndStructured() {
        let recent = PreferenceKey<[String]>("recent", default: [])
        let store = PreferencesStore.inMemory(
            overrides: [
                .launchArguments([
                    "-count", "1", "-count", "2", "-recent", #"["a","b"]"#, "-pet", #"{"name":"Rex","age":3}"#,
                ])
            ])
        #expect(store[.count] == 2)
        #expect(store[recent] == ["a", "b"])
        #expect(store[.pet] == Pet(name: "Rex", age: 3))
    }

    @Test("Launch arguments pair from the start: a flag with no value takes the next name as its value")
    func argumentsPairFromTheStart() {
        let store = PreferencesStore.inMemory(overrides: [.launchArguments(["-title", "-count", "5", "-flag", "YES"])])
        #expect(store[.title] == "-count")
        #expect(store.source(of: .count) == .default)
        #expect(store[.flag] == true)
    }

    @Test("Environment variables with the prefix override what is stored; launch arguments beat them")
    func environment() throws {
        let store = PreferencesStore.inMemory(
            overrides: [
                .environment(
                    prefix: "MYAPP_", variables: ["MYAPP_count": "8", "MYAPP_title": "env", "OTHER_flag": "YES"]),
                .launchArguments(["-title", "argument"]),
            ])
        try store.setValue(1, for: .count)
        #expect(store[.count] == 8)
        #expect(store.source(of: .count) == .environment)
        #expect(store[.title] == "argument")
        #expect(store.source(of: .title) == .launchArgument)
        #expect(store[.flag] == false)
    }

    @Test("A managed setting is forced: every write path refuses it and nothing changes")
    func forcedWrites() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 12, "com.vendor.sdk:flag": true}"#.utf8).write(to: settings)
        let fixture = try StoreFixture(.file)
        let store = try PreferencesStore(fileURL: fixture.directory.storeURL, overrides: [.managed(fileURL: settings)])
        try store.setValue(true, for: .flag)
        #expect(store[.count] == 12)
        #expect(store.source(of: .count) == .managed)
        #expect(store.isForced(.count))
        #expect(store.isForced(.vendorFlag))
        #expect(!store.isForced(.flag))

        store[.count] = 1
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.valueForced])
        #expect(reported.first?.description.contains(settings.path) == true)
        #expect(reported.first?.key == StoredKey("count"))
        #expect(throws: PreferencesError.self) { try store.setValue(1, for: .count) }
        #expect(throws: PreferencesError.self) { try store.update(.count) { $0 += 1 } }
        #expect(throws: PreferencesError.self) { try store.removeValue(for: .count) }
        #expect(throws: PreferencesError.self) { try store.reset(.count) }
        #expect(throws: PreferencesError.self) {
            try store.transaction { preferences in
                preferences[.flag] = false
                preferences[.count] = 2
            }
        }
        try store.setValue(4, for: PreferenceKey<Int>("oldCount", default: 0))
        do {
            try store.runMigrations(MigrateName(from: PreferenceKey<Int>("oldCount", default: 0), to: .count))
            Issue.record("a migration that changes a forced key must fail")
        } catch let error as PreferencesError {
            #expect(error.code == .migrationFailed)
            #expect(error.key == StoredKey("count"))
            #expect(error.description.contains("forced"))
            #expect(error.description.contains("Nothing was written. It changed nothing"), "\(error)")
        }
        // The transaction wrote nothing, not even its unforced key.
        #expect(store[.flag] == true)
        #expect(!store.contains(.count))
        let reopened = try fixture.reopened()
        #expect(!reopened.contains(.count))
    }

    @Test("A managed setting of the wrong type is reported and skipped, and the key stays forced")
    func managedWrongType() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.plist")
        let plist: [String: Any] = ["count": "twelve", "title": "managed", "flag": true]
        try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0).write(to: settings)
        let store = PreferencesStore.inMemory(overrides: [.managed(fileURL: settings)])
        #expect(store[.title] == "managed")
        #expect(store[.flag] == true)
        #expect(store[.count] == 0)
        #expect(store.source(of: .count) == .default)
        #expect(store.isForced(.count))
        let errors = store.errorChannel.takeBacklog()
        #expect(errors.map(\.code) == [.typeMismatch])
        #expect(errors.first?.description.contains("does not read as Int") == true)
    }

    @Test("A managed setting beats launch arguments and the environment, even one that does not read")
    func managedBeatsEveryLayer() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 200, "title": 5}"#.utf8).write(to: settings)
        try PreferencesStore(fileURL: folder.storeURL).setValue("stored", for: .title)
        let store = try PreferencesStore(
            fileURL: folder.storeURL,
            overrides: [
                .launchArguments(["-count", "7", "-title", "argument", "-flag", "YES"]),
                .environment(prefix: "APP_", variables: ["APP_count": "8", "APP_title": "environment"]),
                .managed(fileURL: settings),
            ])
        #expect(store[.count] == 200)
        #expect(store.source(of: .count) == .managed)
        #expect(try store.value(for: .count) == 200)
        // The managed title does not read as a String: the key keeps its stored value, and no
        // launch argument or environment variable stands in for the administrator.
        #expect(store[.title] == "stored")
        #expect(store.source(of: .title) == .stored)
        #expect(store.isForced(.title))
        #expect(store.errorChannel.takeBacklog().map(\.code) == [.typeMismatch])
        // A key the administrator does not manage still takes its launch argument.
        #expect(store[.flag] == true)
        #expect(store.source(of: .flag) == .launchArgument)
    }

    @Test("An administrator's edit reaches the store's readers and observers while it is open")
    func managedEdit() async throws {
        let folder = try TemporaryDirectory()
        // The folder does not exist yet: the watch must see it created.
        let settings = folder.url.appendingPathComponent("xdg/app/preferences.json")
        let store = PreferencesStore.inMemory(overrides: [.managed(fileURL: settings)])
        store[.count] = 4
        #expect(store.source(of: .count) == .stored)
        let received = Locked<[Int]>([])
        let observation = store.observe(.count) { value, change in
            #expect(change.origin == .managedSettings)
            received.withLock { $0.append(value) }
        }
        defer { observation.cancel() }

        try FileManager.default.createDirectory(
            at: settings.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"count": 30}"#.utf8).write(to: settings, options: .atomic)
        try await waitUntil { received.withLock { $0.last } == 30 }
        #expect(store[.count] == 30)
        #expect(store.isForced(.count))

        try Data("{}".utf8).write(to: settings, options: .atomic)
        try await waitUntil { received.withLock { $0.last } == 4 }
        #expect(store.source(of: .count) == .stored)
        #expect(!store.isForced(.count))

        // A file that stops reading keeps the settings it last had, and says so.
        try Data(#"{"count": 31}"#.utf8).write(to: settings, options: .atomic)
        try await waitUntil { received.withLock { $0.last } == 31 }
        try Data("not json".utf8).write(to: settings, options: .atomic)
        let reported = Locked<[PreferencesError]>([])
        try await waitUntil {
            reported.withLock { $0 += store.errorChannel.takeBacklog() }
            return reported.withLock { $0.contains { $0.code == .fileOperationFailed } }
        }
        #expect(store[.count] == 31)
        let report = try #require(reported.withLock { $0.first { $0.code == .fileOperationFailed } })
        #expect(report.description.contains("it is not a JSON object"))
        #expect(report.description.contains("The settings it held when it last read still apply."))
    }

    @Test("A managed file that never read is reported as holding no settings that apply")
    func managedFileUnreadableAtOpen() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("preferences.json")
        try Data("not json".utf8).write(to: settings)
        let store = PreferencesStore.inMemory(overrides: [.managed(fileURL: settings)])
        #expect(!store.isForced(.count))
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.fileOperationFailed])
        #expect(reported.first?.description.contains("None of its settings apply until it reads.") == true)
        #expect(reported.first?.description.contains("still apply") == false)
    }

    #if canImport(Observation)
        @Test("An administrator's edit redraws a view that read the key, with no observer")
        func managedEditReachesObservationTracking() async throws {
            let folder = try TemporaryDirectory()
            let settings = folder.url.appendingPathComponent("managed.json")
            let store = PreferencesStore.inMemory(overrides: [.managed(fileURL: settings)])
            let fired = Locked(false)
            withObservationTracking {
                _ = store[.count]
            } onChange: {
                fired.withLock { $0 = true }
            }
            try Data(#"{"count": 30}"#.utf8).write(to: settings, options: .atomic)
            try await waitUntil { fired.withLock { $0 } }
            #expect(store[.count] == 30)
        }
    #endif

    /// The folders of a managed settings file made one after another, as `mkdir -p` makes them: a
    /// folder made while the watch moves down to its parent must not go unseen.
    @Test("A managed settings file in folders made just now is seen, however fast they are made")
    func managedFoldersMadeQuickly() async throws {
        for _ in 0..<25 {
            let folder = try TemporaryDirectory()
            let settings = folder.url.appendingPathComponent("a/b/c/d/preferences.json")
            let store = PreferencesStore.inMemory(overrides: [.managed(fileURL: settings)])
            try FileManager.default.createDirectory(
                at: settings.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(#"{"count": 12}"#.utf8).write(to: settings, options: .atomic)
            try await waitUntil { store.isForced(.count) }
            if !store.isForced(.count) {
                // Whether reading the layers by hand finds the setting tells a watcher that missed
                // the file from a reading that failed.
                let reported = store.errorChannel.takeBacklog()
                store.readOverrides()
                // Which folders the watch is on, against the folders' inodes: a watch missing from
                // the deepest tells a watch that never moved down from events that never came.
                let folders = sequence(first: settings.deletingLastPathComponent()) { $0.deletingLastPathComponent() }
                let inodes = folders.prefix(5).map { folder in
                    let number =
                        (try? FileManager.default.attributesOfItem(atPath: folder.path)[.systemFileNumber]) as? Int
                    return "\(folder.lastPathComponent): \(number.map { String($0, radix: 16) } ?? "-")"
                }
                Issue.record(
                    """
                    read by hand, the setting is \(store.isForced(.count) ? "found" : "still missing"); \
                    reported: \(reported); watcher: \(store.managedSettingsDiagnosis ?? "none"); \
                    folders: \(inodes.joined(separator: ", "))
                    """
                )
            }
            #expect(store[.count] == 12)
        }
    }

    #if os(Linux)
        /// inotify cannot watch a folder when the user is out of watches (`ENOSPC`), and these tests
        /// cannot use up a whole machine's watches: the watch of one folder, once it exists, fails as
        /// it would then.
        static func failingWatches(of folder: URL) -> ManagedSettingsWatcher.AddWatch {
            { descriptor, path, events in
                guard path != folder.path || !FileManager.default.fileExists(atPath: path) else {
                    errno = ENOSPC
                    return -1
                }
                return inotify_add_watch(descriptor, path, events)
            }
        }

        @Test("A managed file whose folder inotify cannot watch is still seen, by checking its status")
        func unwatchableFolder() async throws {
            let folder = try TemporaryDirectory()
            let settings = folder.url.appendingPathComponent("managed/preferences.json")
            try FileManager.default.createDirectory(
                at: settings.deletingLastPathComponent(), withIntermediateDirectories: true)
            let changes = Locked(0)
            let watcher = ManagedSettingsWatcher(
                location: .files([settings]), onChange: { changes.withLock { $0 += 1 } },
                addWatch: Self.failingWatches(of: settings.deletingLastPathComponent()))
            try Data(#"{"count": 12}"#.utf8).write(to: settings, options: .atomic)
            try await waitUntil { changes.withLock { $0 } > 0 }
            withExtendedLifetime(watcher) {}
        }

        /// An edit that keeps the size, within the second of the last check, is seen: the file's
        /// status is compared to the nanosecond.
        @Test("A same-size edit within the same second is seen by the status checks")
        func sameSizeEditWithinASecond() async throws {
            let folder = try TemporaryDirectory()
            let settings = folder.url.appendingPathComponent("managed/preferences.json")
            try FileManager.default.createDirectory(
                at: settings.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(#"{"count": 12}"#.utf8).write(to: settings)
            // A whole second, then half a second past it: the same second to a whole-second clock.
            var times = [timespec(tv_sec: 1_700_000_000, tv_nsec: 0), timespec(tv_sec: 1_700_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, settings.path, &times, 0) == 0)
            let changes = Locked(0)
            let watcher = ManagedSettingsWatcher(
                location: .files([settings]), onChange: { changes.withLock { $0 += 1 } },
                addWatch: Self.failingWatches(of: settings.deletingLastPathComponent()))
            let handle = try FileHandle(forWritingTo: settings)
            try handle.write(contentsOf: Data(#"{"count": 13}"#.utf8))
            try handle.close()
            times = [
                timespec(tv_sec: 1_700_000_000, tv_nsec: 500_000_000),
                timespec(tv_sec: 1_700_000_000, tv_nsec: 500_000_000),
            ]
            #expect(utimensat(AT_FDCWD, settings.path, &times, 0) == 0)
            try await waitUntil { changes.withLock { $0 } > 0 }
            withExtendedLifetime(watcher) {}
        }

        @Test("A managed folder made later that inotify cannot watch is still seen, by checking its status")
        func unwatchableFolderMadeLater() async throws {
            let folder = try TemporaryDirectory()
            let settings = folder.url.appendingPathComponent("managed/preferences.json")
            let changes = Locked(0)
            let watcher = ManagedSettingsWatcher(
                location: .files([settings]), onChange: { changes.withLock { $0 += 1 } },
                addWatch: Self.failingWatches(of: settings.deletingLastPathComponent()))
            // Seen through the watch of the folder above, which then cannot watch the new one.
            try FileManager.default.createDirectory(
                at: settings.deletingLastPathComponent(), withIntermediateDirectories: true)
            try await waitUntil { changes.withLock { $0 } > 0 }
            let before = changes.withLock { $0 }
            try Data(#"{"count": 12}"#.utf8).write(to: settings, options: .atomic)
            try await waitUntil { changes.withLock { $0 } > before }
            withExtendedLifetime(watcher) {}
        }
    #endif

    @Test("Managed app configuration is read from a UserDefaults suite's dictionary")
    func managedAppConfiguration() throws {
        let suite = "preferences-managed-\(UUID().uuidString)"
        let defaults = try #require(UserDefaults(suiteName: suite))
        defer { defaults.removePersistentDomain(forName: suite) }
        defaults.set(["title": "from MDM", "count": 3], forKey: ManagedSettings.appleConfigurationKey)
        let store = PreferencesStore.inMemory(
            overrides: [OverrideLayer(kind: .managed(.userDefaults(suiteName: suite)))])
        #expect(store[.title] == "from MDM")
        #expect(store[.count] == 3)
        #expect(store.isForced(.title))
    }

    @Test(
        "A child process reads its launch arguments, environment and $XDG_CONFIG_DIRS settings",
        .tags(.childProcesses))
    func childProcess() throws {
        let folder = try TemporaryDirectory()
        let managed = folder.url.appendingPathComponent("xdg/PreferencesHarness")
        try FileManager.default.createDirectory(at: managed, withIntermediateDirectories: true)
        try Data(#"{"com.vendor.sdk:flag": true, "count": 50}"#.utf8)
            .write(to: managed.appendingPathComponent("preferences.json"))
        let store = folder.url.appendingPathComponent("child.store").path
        let run = try ChildProcess.run(
            "PreferencesHarness", ["layers", store, "-count", "6", "-flag", "NO"],
            environment: [
                "XDG_CONFIG_DIRS": folder.url.appendingPathComponent("missing").path + ":"
                    + folder.url.appendingPathComponent("xdg").path,
                "HARNESS_title": "from the environment", "HARNESS_flag": "YES",
                "HARNESS_com.vendor.sdk:flag": "NO",
            ])
        #expect(run.status == 0, "\(run.errors)")
        // The administrator's count and flag beat the launch argument and the environment.
        #expect(
            run.output.split(separator: "\n") == [
                "count=50 (managed setting)", "flag=false (launch argument)",
                "title=from the environment (environment variable)", "vendor=true (managed setting)",
                "write: valueForced",
            ])
    }

    @Test("No layer can name a key in the library's reserved namespaces")
    func reservedNamespaces() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        let ledgerName = "\(AppliedMigration.ledgerNamespace):rename a in app to b in app"
        try JSONSerialization.data(withJSONObject: [ledgerName: "x"]).write(to: settings)
        let store = PreferencesStore.inMemory(
            overrides: [.managed(fileURL: settings), .launchArguments(["-" + ledgerName, "y"])])
        try store.runMigrations(
            MigrateName(from: PreferenceKey<Int>("a", default: 0), to: PreferenceKey("b", default: 0)))
        #expect(store.appliedMigrations.count == 1)
    }

    @Test("Reads of keys no layer holds are unchanged, with and without layers")
    func untouchedKeys() throws {
        let store = PreferencesStore.inMemory(overrides: [.launchArguments(["-other", "1"])])
        try store.setValue(7, for: .count)
        #expect(store[.count] == 7)
        #expect(store.source(of: .count) == .stored)
        #expect(store.source(of: .flag) == .default)
    }
}

/// Waits for a condition that another thread makes true: up to 500 looks, 10 ms apart.
///
/// Counted in looks, not by the clock: on a loaded machine, suites that block their threads can
/// keep this task from running for seconds at a time, and a clock's deadline could then pass with
/// the condition looked at only a few times. A timeout says how long the wait took, and whether
/// the condition came true within ten seconds more.
func waitUntil(
    _ condition: () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let start = ContinuousClock.now
    for _ in 0..<500 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    guard !condition() else { return }
    let waited = ContinuousClock.now - start
    var cameTrue: Duration?
    while cameTrue == nil && ContinuousClock.now - start < waited + .seconds(10) {
        try await Task.sleep(for: .milliseconds(10))
        if condition() { cameTrue = ContinuousClock.now - start - waited }
    }
    let after = cameTrue.map { "the condition came true \($0) later" } ?? "it was still false 10 s later"
    Issue.record(
        Comment(rawValue: "timed out after 500 looks in \(waited); \(after)"), sourceLocation: sourceLocation)
}
