import Foundation
import Testing

@testable import Preferences

/// Runs the built `prefs` binary as a real process.
private func prefs(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
    try ChildProcess.run("prefs", arguments)
}

@Suite(.tags(.childProcesses))
struct PrefsToolTests {
    /// A store with a few entries of different types, written through the library.
    private func sampleStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store[.count] = 3
        store[.title] = "Hello"
        store[.globalFlag] = true
        store[.pet] = Pet(name: "Rex", age: 3)
        store[PreferenceKey<URL?>("home")] = URL(string: "https://example.com/a?b=1#c")
        store[PreferenceKey<[String]>("recent", default: [])] = ["a", "b"]
        return directory
    }

    /// Values that lose their type or bits through JSON or a property list unless written with care.
    private func delicateStore() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.writeStoredValues([
            (StoredKey("negativeZero"), .double(-0.0)),
            (StoredKey("payloadNaN"), .double(Double(nan: 0x5A5, signaling: false))),
            (StoredKey("floatNaN"), .float(Float(nan: 3, signaling: false))),
            (StoredKey("big"), .unsigned(UInt64.max)),
            (StoredKey("when"), .date(785_000_000.123_456_7)),
            (StoredKey("flags"), .array([.bool(true), .bool(false), .signed(1)])),
            (
                StoredKey("nested"),
                .dictionary([
                    "at": .date(12.25), "bytes": .data(Data([0, 1, 255])), "zero": .double(-0.0),
                    "link": .url("https://example.com/a?b=1"),
                ])
            ),
        ])
        return directory
    }

    @Test func aPlistExportKeepsTheSignOfNegativeZeroOrRefusesIt() throws {
        let directory = try delicateStore()
        let exported = try prefs(["export", directory.storeURL.path, "--format", "plist"])
        let probe = try PropertyListSerialization.data(fromPropertyList: [-0.0], format: .xml, options: 0)
        if (try PropertyListSerialization.propertyList(from: probe, format: nil) as? [Double])?.first?.sign == .minus {
            #expect(exported.status == 0, "\(exported.errors)")
            let plist = try PropertyListSerialization.propertyList(from: Data(exported.output.utf8), format: nil)
            #expect(((plist as? [String: Any])?["app:negativeZero"] as? Double)?.sign == .minus)
        } else {
            #expect(exported.status == 4)
            #expect(exported.output.isEmpty)
            #expect(exported.errors.contains("holds -0.0"))
            #expect(exported.errors.contains("--format json"))
        }
    }

    @Test func aPlistExportHoldsRealDatesAndNumbers() throws {
        let directory = try delicateStore()
        // Without -0.0, which the test above covers.
        try PreferencesStore(fileURL: directory.storeURL).writeStoredValues([
            (StoredKey("negativeZero"), nil),
            (
                StoredKey("nested"),
                .dictionary(["at": .date(12.25), "bytes": .data(Data([0, 1, 255])), "zero": .double(0)])
            ),
        ])
        let exported = try prefs(["export", directory.storeURL.path, "--format", "plist"])
        #expect(exported.status == 0, "\(exported.errors)")
        let plist = try #require(
            try PropertyListSerialization.propertyList(from: Data(exported.output.utf8), format: nil) as? [String: Any]
        )
        #expect(plist["app:when"] is Date)
        let nested = try #require(plist["app:nested"] as? [String: Any])
        #expect(nested["at"] is Date)
        #expect(exported.output.contains("<date>"))
        #expect(!exported.output.contains("_preferences."))
    }

    @Test func keysInReservedNamespacesAreRefusedOnWriteAndImport() throws {
        let directory = try sampleStore()
        let write = try prefs(["write", directory.storeURL.path, "_preferences.migrations:x", "1"])
        #expect(write.status == 2)
        #expect(write.errors.contains("reserved"))
        let file = directory.url.appendingPathComponent("ledger.json")
        try Data(#"[{"key":"_preferences.migrations:x","type":"int","value":"1"}]"#.utf8).write(to: file)
        let imported = try prefs(["import", directory.storeURL.path, file.path])
        #expect(imported.status == 2)
        #expect(try PreferencesStore(fileURL: directory.storeURL).appliedMigrations.isEmpty)
    }

    @Test func readListsEveryEntryOrOneValue() throws {
        let directory = try sampleStore()
        let all = try prefs(["read", directory.storeURL.path])
        #expect(all.status == 0)
        #expect(all.output.contains("app:count"))
        #expect(all.output.contains("int"))
        #expect(all.output.contains("global:flag"))
        #expect(all.output.contains("https://example.com/a?b=1#c"))
        #expect(all.output.contains(#"{"age":3,"name":"Rex"}"#))
        // The type column is as wide as its longest name, so no value runs into its type.
        #expect(
            try prefs(["write", directory.storeURL.path, "app:sizes", #"{"x":1}"#, "--type", "dictionary"]).status == 0)
        let lines = try prefs(["read", directory.storeURL.path]).output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("app:sizes") && $0.hasSuffix(#"dictionary  {"x":1}"#) }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("app:count ") && $0.hasSuffix("int         3") }, "\(lines)")
        #expect(try prefs(["read", directory.storeURL.path, "app:title"]).output == "Hello\n")
        #expect(try prefs(["read", directory.storeURL.path, "title"]).output == "Hello\n")
        let missing = try prefs(["read", directory.storeURL.path, "app:nothing"])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("no value for 'app:nothing'"))
    }

    @Test func everyCommandSpeaksJSON() throws {
        let directory = try sampleStore()
        let read = try prefs(["read", directory.storeURL.path, "--json"])
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(read.output.utf8)) as? [[String: Any]])
        #expect(entries.count == 6)
        #expect(
            entries.contains {
                $0["key"] as? String == "app:count" && $0["value"] as? Int == 3 && $0["type"] as? String == "int"
            })
        let keys = try prefs(["keys", directory.storeURL.path, "--json"])
        #expect(try JSONSerialization.jsonObject(with: Data(keys.output.utf8)) as? [String] != nil)
        let verify = try prefs(["verify", directory.storeURL.path, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(verify.output.utf8)) as? [String: Any])
        #expect(report["whole"] as? Bool == true)
        let write = try prefs(["write", directory.storeURL.path, "app:n", "5", "--type", "int", "--json"])
        #expect(try JSONSerialization.jsonObject(with: Data(write.output.utf8)) as? [String: Any] != nil)
    }

    @Test(arguments: [
        ("bool", "yes", StoredValue.bool(true)),
        ("int", "-42", .signed(-42)),
        ("double", "2.5", .double(2.5)),
        ("string", "text", .string("text")),
        (
            "date", "2026-11-21T09:30:00Z",
            .date(Date(timeIntervalSince1970: 1_795_253_400).timeIntervalSinceReferenceDate)
        ),
        ("data", "AAEC", .data(Data([0, 1, 2]))),
        ("url", "https://example.com/?q=1", .url("https://example.com/?q=1")),
        ("json", #"{"age":1,"name":"A"}"#, .encoded(Data(#"{"age":1,"name":"A"}"#.utf8))),
    ])
    func writeStoresEachTypeAsTheLibraryReadsIt(type: String, text: String, expected: StoredValue) throws {
        let directory = try TemporaryDirectory()
        let result = try prefs(["write", directory.storeURL.path, "app:value", text, "--type", type])
        #expect(result.status == 0, "\(result.errors)")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.storedValue(at: StoredKey("value")) == expected)
    }

    @Test func whatReadPrintsWritesBackUnchangedCollectionsAndCodableValuesIncluded() throws {
        let directory = try TemporaryDirectory()
        let entries: [(StoredKey, StoredValue)] = [
            (StoredKey("tags"), .array([.string("x"), .string("y")])),
            (StoredKey("visits"), .array([.date(785_000_000.5), .date(12.25)])),
            (StoredKey("weights"), .array([.double(1), .double(-0.0), .double(2.5)])),
            (StoredKey("sizes"), .dictionary(["a": .signed(1), "b": .signed(-2)])),
            (StoredKey("blobs"), .dictionary(["k": .data(Data([0, 255]))])),
            (StoredKey("pet"), .encoded(Data(#"{"age":3,"name":"Rex"}"#.utf8))),
        ]
        try PreferencesStore(fileURL: directory.storeURL).writeStoredValues(entries.map { ($0.0, $0.1) })
        for (key, value) in entries {
            let read = try prefs(["read", directory.storeURL.path, "\(key)"])
            #expect(read.status == 0, "\(read.errors)")
            let text = String(read.output.dropLast())
            let written = try prefs(["write", directory.storeURL.path, "\(key)", text])
            #expect(written.status == 0, "\(key): \(written.errors)")
            #expect(try PreferencesStore(fileURL: directory.storeURL).storedValue(at: key) == value, "\(key)")
        }
        // JSON of another shape, and a null item, are refused with what was expected.
        let object = try prefs(["write", directory.storeURL.path, "app:tags", #"{"x":1}"#])
        #expect(object.status == 2)
        #expect(object.errors.contains("is not a JSON array"))
        let null = try prefs(["write", directory.storeURL.path, "app:tags", #"["x",null]"#])
        #expect(null.status == 2)
        #expect(null.errors.contains("null cannot be stored"))
        let notDate = try prefs(["write", directory.storeURL.path, "app:visits", #"["soon"]"#])
        #expect(notDate.status == 2)
        #expect(notDate.errors.contains("'soon' is not an ISO 8601 date"))
        // A new entry given --type array reads items as JSON names them.
        let fresh = try prefs(["write", directory.storeURL.path, "app:mixed", #"[true,1,1.5,"s"]"#, "--type", "array"])
        #expect(fresh.status == 0, "\(fresh.errors)")
        #expect(
            try PreferencesStore(fileURL: directory.storeURL).storedValue(at: StoredKey("mixed"))
                == .array([.bool(true), .signed(1), .double(1.5), .string("s")]))
    }

    @Test func aWriteThatWouldChangeATypeIsRefusedUnlessForced() throws {
        let directory = try sampleStore()
        let refused = try prefs(["write", directory.storeURL.path, "app:count", "many", "--type", "string"])
        #expect(refused.status == 4)
        #expect(refused.errors.contains("'app:count' holds an int (3); writing a string would change its type"))
        #expect(refused.errors.contains("--force"))
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 3)

        let guessed = try prefs(["write", directory.storeURL.path, "app:count", "many"])
        #expect(guessed.status == 2)
        #expect(guessed.errors.contains("'many' is not an integer"))

        let forced = try prefs(["write", directory.storeURL.path, "app:count", "many", "--type", "string", "--force"])
        #expect(forced.status == 0)
        #expect(
            try PreferencesStore(fileURL: directory.storeURL)[PreferenceKey<String>("count", default: "")] == "many")
    }

    @Test func badKeysValuesAndCommandsAreUsageErrors() throws {
        let directory = try sampleStore()
        #expect(try prefs(["write", directory.storeURL.path, "app:", "1"]).status == 2)
        #expect(try prefs(["write", directory.storeURL.path, "app:n", "nope", "--type", "int"]).status == 2)
        #expect(try prefs(["write", directory.storeURL.path, "app:n", "1", "--type", "float"]).status == 2)
        #expect(try prefs(["frobnicate"]).status == 2)
        #expect(try prefs(["read", directory.storeURL.path, "--colour"]).status == 2)
        #expect(try prefs(["read"]).status == 2)
        let missing = try prefs(["keys", directory.url.appendingPathComponent("absent.store").path])
        #expect(missing.status == 3)
        #expect(missing.errors.contains("no store at"))
        #expect(!FileManager().fileExists(atPath: directory.url.appendingPathComponent("absent.store.lock").path))
    }

    @Test func deleteKeysAndNamespaces() throws {
        let directory = try sampleStore()
        #expect(try prefs(["keys", directory.storeURL.path, "--namespace", "global"]).output == "global:flag\n")
        #expect(try prefs(["delete", directory.storeURL.path, "global:flag"]).status == 0)
        #expect(try prefs(["delete", directory.storeURL.path, "global:flag"]).status == 1)
        #expect(try prefs(["keys", directory.storeURL.path, "--namespace", "global"]).output == "\n")
    }

    /// Every type, and values that lose their type or bits through JSON unless written with care:
    /// `StoredValue` compares doubles by their bits, so `-0.0` and NaN payloads count.
    @Test func exportAndImportRoundTripEveryTypeAndEveryBitNestedValuesIncluded() throws {
        for directory in [try sampleStore(), try delicateStore()] {
            let exported = try prefs(["export", directory.storeURL.path])
            #expect(exported.status == 0, "\(exported.errors)")
            let file = directory.url.appendingPathComponent("export.json")
            try Data(exported.output.utf8).write(to: file)
            let copy = directory.url.appendingPathComponent("copy.store")
            let imported = try prefs(["import", copy.path, file.path])
            #expect(imported.status == 0, "\(imported.errors)")
            let original = try PreferencesStore(fileURL: directory.storeURL).storedEntries()
            let restored = try PreferencesStore(fileURL: copy).storedEntries()
            #expect(restored.map(\.key) == original.map(\.key))
            for (left, right) in zip(original, restored) {
                #expect(left.value == right.value, "\(left.key)")
            }
        }
    }

    @Test func anImportWithOneBadEntryWritesNothing() throws {
        let directory = try sampleStore()
        let file = directory.url.appendingPathComponent("bad.json")
        try Data(#"[{"key":"app:a","type":"int","value":1},{"key":"app:b","type":"int","value":"x"}]"#.utf8).write(
            to: file)
        let result = try prefs(["import", directory.storeURL.path, file.path])
        #expect(result.status == 2)
        #expect(try PreferencesStore(fileURL: directory.storeURL).storedValue(at: StoredKey("a")) == nil)
    }

    @Test(.enabled(if: isLinux, "points Foundation's suite files elsewhere through XDG_CONFIG_HOME"))
    func aUserDefaultsPlistWrittenByFoundationImports() throws {
        let directory = try TemporaryDirectory()
        let config = directory.url.appendingPathComponent("config")
        let suite = "com.example.legacy"
        let writer = Process()
        writer.executableURL = ChildProcess.executable("PreferencesHarness")
        writer.arguments = ["userdefaults", suite]
        writer.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": config.path]) { $1 }
        try writer.run()
        writer.waitUntilExit()
        let plist = config.appendingPathComponent("\(suite).plist")
        try #require(FileManager().fileExists(atPath: plist.path), "Foundation wrote no suite file")

        let result = try prefs(["import", directory.storeURL.path, plist.path])
        #expect(result.status == 0, "\(result.errors)")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[PreferenceKey<Bool>("largeText", default: false, in: .global)] == true)
        #expect(store[PreferenceKey<Int>("launchCount", default: 0, in: .global)] == 7)
        #expect(store[PreferenceKey<String>("theme", default: "", in: .global)] == "dark")
        #expect(store[PreferenceKey<Double>("ratio", default: 0, in: .global)] == 4.5)
        #expect(store[PreferenceKey<[String]>("recent", default: [], in: .global)] == ["a", "b"])
    }

    @Test func verifyAndRepairADamagedStoreWhileOtherCommandsLeaveItAlone() throws {
        let directory = try sampleStore()
        var log = try Data(contentsOf: directory.logURL)
        log[LogFile.recordsOffset + 20] ^= 0x10  // inside the first record; later ones still verify
        try log.write(to: directory.logURL)

        let read = try prefs(["read", directory.storeURL.path])
        #expect(read.status == 3)
        #expect(read.errors.contains("prefs verify"))
        #expect(try Data(contentsOf: directory.logURL) == log, "reading changed a damaged store")

        let verify = try prefs(["verify", directory.storeURL.path])
        #expect(verify.status == 1)
        #expect(verify.output.contains("DAMAGED"))
        #expect(try Data(contentsOf: directory.logURL) == log, "verifying changed a damaged store")

        let repair = try prefs(["repair", directory.storeURL.path])
        #expect(repair.status == 0)
        #expect(repair.output.contains(".damaged-"))
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.log.damaged-") })
        #expect(try prefs(["verify", directory.storeURL.path]).status == 0)
        #expect(try prefs(["read", directory.storeURL.path, "app:title"]).output == "Hello\n")
        #expect(try prefs(["repair", directory.storeURL.path]).output.contains("nothing to repair"))
    }

    /// A value that verifies but does not decode, which only another program can write: opening
    /// does not find it, so `verify` must, and `repair` must compact it away, keeping a copy.
    @Test func verifyFindsAndRepairRemovesAValueThatDoesNotDecode() throws {
        let directory = try TemporaryDirectory()
        let a = EntryChange(key: ResolvedKey(namespace: "app", name: "a"), value: .signed(1))
        var broken = HandWrittenSnapshot.payloadSetting(namespace: "app", name: "broken")
        broken.append(UInt8(0xEE))  // no value has this tag
        let snapshot = HandWrittenSnapshot.file(
            frames: HandWrittenSnapshot.frames([Record(changes: [a])])
                + HandWrittenSnapshot.frame(payload: broken.bytes),
            generation: 3)
        try Data(snapshot).write(to: directory.storeURL)
        try Data(LogFile.start(generation: 3, lockStamp: 0)).write(to: directory.logURL)

        let verify = try prefs(["verify", directory.storeURL.path])
        #expect(verify.status == 1)
        #expect(verify.output.contains("DAMAGED"))
        #expect(verify.output.contains("do not decode"))

        let repair = try prefs(["repair", directory.storeURL.path])
        #expect(repair.status == 0)
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.damaged-") })
        #expect(try prefs(["verify", directory.storeURL.path]).status == 0)
        #expect(try prefs(["read", directory.storeURL.path, "app:a"]).output == "1\n")
    }

    @Test func verifyCallsATornTailNormal() throws {
        let directory = try sampleStore()
        // Where the records end, before the space allocated after them.
        let end = try LogFile.replay(Array(Data(contentsOf: directory.logURL))).validEnd
        let handle = try FileHandle(forWritingTo: directory.logURL)
        try handle.seek(toOffset: UInt64(end))
        try handle.write(contentsOf: Data([9, 9, 9]))
        try handle.close()
        let verify = try prefs(["verify", directory.storeURL.path])
        #expect(verify.status == 0)
        #expect(verify.output.contains("torn record of 3 bytes"))
    }

    @Test func verifyCallsAFinalRecordThatIsWholeButWrongDamage() throws {
        let directory = try sampleStore()
        var bytes = Array(try Data(contentsOf: directory.logURL))
        bytes[try LogFile.replay(bytes).validEnd - 2] ^= 0x10
        try Data(bytes).write(to: directory.logURL)
        let verify = try prefs(["verify", directory.storeURL.path])
        #expect(verify.status == 1)
        #expect(verify.output.contains("the log's last record is complete but does not verify"))
        #expect(!verify.output.contains("torn record"))
        #expect(Array(try Data(contentsOf: directory.logURL)) == bytes)
    }

    @Test func ledgerAndCompact() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store[PreferenceKey<Int>("old", default: 0)] = 1
        try store.runMigrations(MigrateName(from: PreferenceKey<Int>("old", default: 0), to: PreferenceKeys.count))
        let ledger = try prefs(["ledger", directory.storeURL.path])
        #expect(ledger.output.contains("rename old in app to count in app  (applied)"))
        #expect(!FileManager().fileExists(atPath: directory.storeURL.path))
        #expect(try prefs(["compact", directory.storeURL.path]).status == 0)
        #expect(FileManager().fileExists(atPath: directory.storeURL.path))
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 1)
    }

    @Test func watchShowsAnotherProcesssWrite() throws {
        let directory = try sampleStore()
        let watcher = try ChildProcess.startCollectingOutput("prefs", ["watch", directory.storeURL.path])
        watcher.waitFor("Watching")
        #expect(try prefs(["write", directory.storeURL.path, "app:count", "8"]).status == 0)
        watcher.waitFor("app:count = 8  (from another process)")
    }

    @Test func syncRunsARoundWithTheKeysTheAppSyncedAndWatchNamesTheDevice() throws {
        let folder = try TemporaryDirectory()
        let phone = try TemporaryDirectory()
        let laptop = try TemporaryDirectory()
        let phoneStore = try PreferencesStore(fileURL: phone.storeURL)
        let phoneSync = try PreferencesSync(store: phoneStore, keys: [.count, .title], folder: folder.url)
        try PreferencesSync(
            store: PreferencesStore(fileURL: laptop.storeURL), keys: [.count, .title], folder: folder.url
        )
        .synchronize()
        phoneStore[.count] = 8
        try phoneSync.synchronize()

        let watcher = try ChildProcess.startCollectingOutput("prefs", ["watch", laptop.storeURL.path])
        watcher.waitFor("Watching")
        let result = try prefs(["sync", laptop.storeURL.path, folder.url.path])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "received 1 (app:count), sent 0\n")
        watcher.waitFor("app:count = 8  (from device \(phoneSync.deviceID))")
        #expect(try PreferencesStore(fileURL: laptop.storeURL)[.count] == 8)
    }

    @Test func syncRefusesAStoreNoAppSynced() throws {
        let directory = try sampleStore()
        let folder = try TemporaryDirectory()
        let result = try prefs(["sync", directory.storeURL.path, folder.url.path])
        #expect(result.status == 1)
        #expect(result.errors.contains("this store has never synced"))
        #expect(try folder.fileNames().isEmpty)
    }

    /// An idle watch sleeps: no timer, in the tool or the library, wakes it while nothing changes.
    @Test(.enabled(if: ChildProcess.canCountWakeUps, "wake-ups are counted through Linux's /proc"))
    func anIdleWatchDoesNotWakeUp() throws {
        let directory = try sampleStore()
        let watcher = try ChildProcess.startCollectingOutput("prefs", ["watch", directory.storeURL.path])
        watcher.waitFor("Watching")
        // A once-a-second timer would make three.
        let wakeUps = watcher.wakeUps(whileIdleFor: 3)
        #expect(
            wakeUps <= (ChildProcess.isUnderThreadSanitizer ? 35 : 0),
            "\(wakeUps) wake-ups in 3 s with nothing to print")
        #expect(try prefs(["write", directory.storeURL.path, "app:count", "8"]).status == 0)
        watcher.waitFor("app:count = 8  (from another process)")
    }

    @Test func logListsTheHistoryAndRestoreWritesAChangeBack() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        store[.theme] = .dark
        store[.theme] = .light
        store[.count] = 3
        try store.removeValue(for: .theme)
        let path = directory.storeURL.path

        let log = try prefs(["log", path])
        #expect(log.status == 0, "\(log.errors)")
        let lines = log.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 4)
        #expect(lines[0].contains("app:theme #1  light → (removed)  write  \(CommitStamp.program)[\(getpid())]"))
        #expect(lines[1].contains("app:count #1  ? → 3  write"))
        #expect(lines[2].contains("app:theme #2  dark → light  write"))
        #expect(lines[3].contains("app:theme #3  ? → dark  write"))
        #expect(try prefs(["log", path, "count"]).output.split(separator: "\n").count == 1)
        #expect(try prefs(["log", path, "--since", "2999-01-01"]).output == "No changes in the history.\n")
        #expect(try prefs(["log", path, "--since", "yesterday"]).status == 2)
        let json = try JSONSerialization.jsonObject(with: Data(try prefs(["log", path, "--json"]).output.utf8))
        let objects = try #require(json as? [[String: Any]])
        #expect(objects.count == 4)
        #expect(objects.first?["before"] as? String == "light" && objects.first?["cause"] as? String == "write")

        let restored = try prefs(["restore", path, "theme", "--to", "2"])
        #expect(restored.status == 0, "\(restored.errors)")
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.theme] == .light)
        let after = try prefs(["log", path, "theme"]).output
        #expect(after.split(separator: "\n").first?.contains("(no value) → light  restore  prefs[") == true)
        #expect(try prefs(["restore", path, "theme", "--to", "9"]).status == 1)
        #expect(try prefs(["restore", path, "theme"]).status == 2)

        #expect(try prefs(["log", path, "--clear"]).status == 0)
        #expect(try prefs(["log", path]).output == "No changes in the history.\n")
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 3)
    }

    @Test func verifyReportsADamagedHistoryAndRepairKeepsACopyAndWhatVerifies() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: 512)
        for value in 0..<100 {
            store[.count] = value
        }
        try store.compact()
        let history = directory.url.appendingPathComponent("preferences.store.history")
        var bytes = try Data(contentsOf: history)
        bytes[bytes.count / 2] ^= 0x10
        try bytes.write(to: history)

        let verified = try prefs(["verify", directory.storeURL.path])
        #expect(verified.status == 1)
        #expect(verified.output.contains("DAMAGED \(history.path)"))
        let repaired = try prefs(["repair", directory.storeURL.path])
        #expect(repaired.status == 0, "\(repaired.errors)")
        #expect(repaired.output.contains("preferences.store.history.damaged-"))
        #expect(try prefs(["verify", directory.storeURL.path]).status == 0)
        let kept = try PreferencesStore(fileURL: directory.storeURL).history(for: .count)
        #expect(kept.count >= 31)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[.count] == 99)
    }

    @Test func helpDescribesTheToolAndEachCommand() throws {
        let tool = try prefs(["--help"])
        #expect(tool.status == 0)
        #expect(tool.output.contains("Exit status"))
        for command in [
            "read", "write", "delete", "keys", "export", "import", "verify", "repair", "ledger", "compact", "watch",
            "log", "restore", "sync",
        ] {
            let help = try prefs([command, "--help"])
            #expect(help.status == 0)
            #expect(help.output.contains("usage: prefs \(command)"), "\(command)")
        }
    }

}
