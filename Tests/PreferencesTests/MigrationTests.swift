import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// Each migration runs exactly once, atomically with its ledger entry, however often the app
/// launches; a migration that fails changes nothing.
struct MigrationTests {
    /// The same migrations run on three launches: a new store on the same file each time.
    private func launchThreeTimes(
        _ migrations: @autoclosure () -> [any PreferencesMigration],
        in directory: TemporaryDirectory,
        between: (PreferencesStore) throws -> Void = { _ in }
    ) throws -> [[AppliedMigration]] {
        try (0..<3).map { _ in
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let applied = try store.runMigrations(migrations())
            try between(store)
            return applied
        }
    }

    @Test(arguments: BackendKind.allCases)
    func aRenameMovesTheValueAndRemovesTheOldKey(on kind: BackendKind) throws {
        let fixture = try StoreFixture(kind)
        let old = PreferenceKey<String>("nickName", default: "")
        fixture.store[old] = "Ada"
        let applied = try fixture.store.runMigrations(MigrateName(from: old, to: PreferenceKeys.title))
        #expect(applied.map(\.id) == ["rename nickName in app to title in app"])
        #expect(applied.first?.result == .applied)
        let store = try fixture.reopened()
        #expect(store[.title] == "Ada")
        #expect(!store.contains(old))
        #expect(store.appliedMigrations.map(\.id) == ["rename nickName in app to title in app"])
    }

    @Test func aMigrationRunsOnceOverThreeLaunchesAndItsRerunsWriteNothing() throws {
        let directory = try TemporaryDirectory()
        let old = PreferenceKey<Int>("launches", default: 0)
        try PreferencesStore(fileURL: directory.storeURL).setValue(3, for: old)
        let log = FileOperationLog()
        var counts: [[FileSystem.Operation: Int]] = []
        for launch in 0..<3 {
            let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
            let before = log.counts
            let applied = try store.runMigrations(MigrateName(from: old, to: PreferenceKeys.count))
            #expect(applied.count == (launch == 0 ? 1 : 0))
            #expect(store[.count] == 3)
            #expect(store.appliedMigrations.count == 1)
            counts.append(log.counts.merging(before) { $0 - $1 })
        }
        #expect(counts[1].values.allSatisfy { $0 == 0 }, "a rerun wrote: \(counts[1])")
        #expect(counts[2].values.allSatisfy { $0 == 0 }, "a rerun wrote: \(counts[2])")
    }

    @Test func aRenameMovesAGlobalEntryIntoTheAppNamespace() throws {
        let store = PreferencesStore.inMemory()
        let appStorage = PreferenceKey<Bool>("showsBadge", default: false, in: .global)
        let declared = PreferenceKey<Bool>("showsBadge", default: false)
        store[appStorage] = true
        try store.runMigrations(MigrateName(from: appStorage, to: declared))
        #expect(store[declared] == true)
        #expect(store.storedKeys() == [StoredKey("showsBadge")])
    }

    @Test(arguments: [
        (RenameConflictPolicy.keepNewValue, "new", "kept the value at the new key"),
        (.useOldValue, "old", "replaced the value at the new key"),
    ])
    func whenBothKeysHoldAValueThePolicyDecides(policy: RenameConflictPolicy, expected: String, result: String) throws {
        let store = PreferencesStore.inMemory()
        let old = PreferenceKey<String>("oldTitle", default: "")
        store[old] = "old"
        store[.title] = "new"
        let applied = try store.runMigrations(MigrateName(from: old, to: .title, ifBothExist: policy))
        #expect(store[.title] == expected)
        #expect(!store.contains(old))
        #expect(applied.first?.result.description.contains(result) == true)
    }

    @Test func theFailPolicyChangesNothingAndStopsTheRun() throws {
        let store = PreferencesStore.inMemory()
        let old = PreferenceKey<String>("oldTitle", default: "")
        store[old] = "old"
        store[.title] = "new"
        store[.count] = 1
        let error = #expect(throws: PreferencesError.self) {
            try store.runMigrations(
                MigrateName(from: old, to: .title, ifBothExist: .fail),
                MigrateValue(from: PreferenceKeys.count, to: PreferenceKey<Double>("count", default: 0)) { Double($0) }
            )
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.key == StoredKey("title"))
        #expect(error?.description.contains("rename oldTitle in app to title in app") == true)
        #expect(store[old] == "old")
        #expect(store[.title] == "new")
        #expect(store[.count] == 1, "the migration after the failed one ran")
        #expect(store.appliedMigrations.isEmpty)
    }

    @Test func aRenameOfAValueOfAnotherTypeFailsAndMovesNothing() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<String>("old", default: "")] = "not a number"
        let error = #expect(throws: PreferencesError.self) {
            try store.runMigrations(MigrateName(from: PreferenceKey<Int>("old", default: 0), to: PreferenceKeys.count))
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.key == StoredKey("old"))
        #expect(error?.description.contains("a String is stored") == true)
        #expect(store[PreferenceKey<String>("old", default: "")] == "not a number")
        #expect(!store.contains(.count))
    }

    @Test func anIntBecomesADoubleOnceAndALaterValueIsNeverConvertedAgain() throws {
        let directory = try TemporaryDirectory()
        let asInt = PreferenceKey<Int>("rating", default: 0)
        let asDouble = PreferenceKey<Double>("rating", default: 0)
        try PreferencesStore(fileURL: directory.storeURL).setValue(4, for: asInt)
        var launch = 0
        let applied = try launchThreeTimes(
            [MigrateValue(from: asInt, to: asDouble) { Double($0) }],
            in: directory,
            between: { store in
                #expect(store[asDouble] == (launch == 0 ? 4.0 : 4.7))
                // The new version of the app writes a Double; a rerun must leave it alone.
                store[asDouble] = 4.7
                launch += 1
            }
        )
        #expect(applied.map(\.count) == [1, 0, 0])
        #expect(try PreferencesStore(fileURL: directory.storeURL)[asDouble] == 4.7)
    }

    @Test func aBoolBecomesAnInt() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<Bool>("level", default: false)] = true
        try store.runMigrations(
            MigrateValue(
                from: PreferenceKey<Bool>("level", default: false), to: PreferenceKey<Int>("level", default: 0)
            ) {
                $0 ? 2 : 1
            }
        )
        #expect(store[PreferenceKey<Int>("level", default: 0)] == 2)
    }

    @Test func anOptionalOldKeyConvertsAndAnAbsentOneIsNothingToMigrate() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<Int?>("present")] = 5
        let applied = try store.runMigrations(
            MigrateValue(from: PreferenceKey<Int?>("present"), to: PreferenceKey<Double?>("present")) {
                $0.map(Double.init)
            },
            MigrateValue(from: PreferenceKey<Int?>("absent"), to: PreferenceKey<Double?>("absent")) {
                $0.map(Double.init)
            }
        )
        #expect(store[PreferenceKey<Double?>("present")] == 5.0)
        #expect(applied.map(\.result) == [.applied, .nothingToMigrate])
        #expect(!store.contains(PreferenceKey<Double?>("absent")))
    }

    @Test func aValueMovesToANewNameWithANewTypeAndTheOldEntryGoes() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<String>("themeName", default: "")] = "dark"
        try store.runMigrations(
            MigrateValue(from: PreferenceKey<String>("themeName", default: ""), to: PreferenceKeys.theme) {
                Theme(rawValue: $0) ?? .system
            })
        #expect(store[.theme] == .dark)
        #expect(store.storedKeys() == [StoredKey("theme")])
    }

    struct Unconvertible: Error {}

    @Test func aThrowingTransformChangesNothingAndRunsAgainNextTime() throws {
        let directory = try TemporaryDirectory()
        let asString = PreferenceKey<String>("size", default: "")
        let asInt = PreferenceKey<Int>("size", default: 0)
        try PreferencesStore(fileURL: directory.storeURL).setValue("large", for: asString)

        let store = try PreferencesStore(fileURL: directory.storeURL)
        let error = #expect(throws: PreferencesError.self) {
            try store.runMigrations(
                MigrateValue(from: asString, to: asInt, id: "size to points") { _ in throw Unconvertible() })
        }
        #expect(error?.code == .migrationFailed)
        #expect(error?.key == StoredKey("size"))
        #expect(error?.description.contains("size to points") == true)
        #expect(error?.description.contains("Unconvertible") == true)
        #expect(store[asString] == "large")
        #expect(store.appliedMigrations.isEmpty)

        let next = try PreferencesStore(fileURL: directory.storeURL)
        try next.runMigrations(
            MigrateValue(from: asString, to: asInt, id: "size to points") { $0 == "large" ? 18 : 12 })
        #expect(next[asInt] == 18)
        #expect(next.appliedMigrations.map(\.id) == ["size to points"])
    }

    struct SplitName: PreferencesMigration {
        let id = "split fullName"

        func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
            let full = PreferenceKey<String?>("fullName")
            guard let name = try preferences.value(for: full) else { return .nothingToMigrate }
            let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
            preferences[PreferenceKey<String>("first", default: "")] = parts[0]
            preferences[PreferenceKey<String>("last", default: "")] = parts.count > 1 ? parts[1] : ""
            preferences.removeValue(for: full)
            return MigrationResult("split into first and last")
        }
    }

    @Test func aMigrationOfYourOwnRunsInItsTransactionAndIsRecorded() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<String?>("fullName")] = "Ada Lovelace"
        let applied = try store.runMigrations(SplitName())
        #expect(store[PreferenceKey<String>("first", default: "")] == "Ada")
        #expect(store[PreferenceKey<String>("last", default: "")] == "Lovelace")
        #expect(applied.first?.result.description == "split into first and last")
        #expect(try store.runMigrations(SplitName()).isEmpty)
    }

    @Test func migrationIdsMustBeValidAndDistinct() throws {
        let store = PreferencesStore.inMemory()
        let invalid = #expect(throws: PreferencesError.self) {
            try store.runMigrations(MigrateName(from: PreferenceKeys.title, to: PreferenceKeys.title, id: "a:b"))
        }
        #expect(invalid?.description.contains("its id is invalid") == true)
        let duplicate = #expect(throws: PreferencesError.self) {
            try store.runMigrations(
                MigrateName(from: PreferenceKeys.title, to: PreferenceKeys.title, id: "same"),
                MigrateName(from: PreferenceKeys.count, to: PreferenceKeys.count, id: "same")
            )
        }
        #expect(duplicate?.description.contains("two migrations in this call") == true)
    }

    @Test func theLedgerIsReadableButNeitherListedNorRemoved() throws {
        let store = PreferencesStore.inMemory()
        store[PreferenceKey<Int>("old", default: 0)] = 1
        try store.runMigrations(MigrateName(from: PreferenceKey<Int>("old", default: 0), to: PreferenceKeys.count))
        #expect(store.storedKeys() == [StoredKey("count")])
        try store.removeAll(in: .app)
        try store.removeAll(in: .custom(AppliedMigration.ledgerNamespace))
        #expect(store.appliedMigrations.count == 1)
        #expect(store.appliedMigrations.first?.appliedAt.timeIntervalSinceNow ?? -100 > -60)
    }

    @Test func aTypeChangeIsNotReportedAsAConflict() throws {
        let directory = try TemporaryDirectory()
        // Written by the app's previous version, with the old type.
        try PreferencesStore(fileURL: directory.storeURL).setValue(4, for: PreferenceKey<Int>("rating", default: 0))
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.runMigrations(
            MigrateValue(
                from: PreferenceKey<Int>("rating", default: 0), to: PreferenceKey<Double>("rating", default: 0)
            ) {
                Double($0)
            }
        )
        _ = store[PreferenceKey<Double>("rating", default: 0)]
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test(.tags(.childProcesses)) func aMigrationKilledMidwayRunsExactlyOnceAndDataAndLedgerAgree() throws {
        let count = 400
        for round in 0..<5 {
            let directory = try TemporaryDirectory()
            try NumberedMigrations.prepare(try PreferencesStore(fileURL: directory.storeURL), count: count)
            let acks = directory.url.appendingPathComponent("acks")
            let child = try ChildProcess.start(
                "PreferencesHarness",
                ["migrate", directory.storeURL.path, acks.path, "\(count)"]
            )
            let deadline = Date().addingTimeInterval(10)
            while (try? Data(contentsOf: acks).isEmpty) ?? true, Date() < deadline, child.process.isRunning {
                Thread.sleep(forTimeInterval: 0.001)
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.01))
            child.killAbruptly()

            let store = try PreferencesStore(fileURL: directory.storeURL)
            let ledger = Set(store.appliedMigrations.map(\.id))
            for index in 0..<count {
                let applied = ledger.contains(NumberedMigrations.migration(index).id)
                if applied {
                    #expect(
                        store[NumberedMigrations.doubleKey(index)] == Double(index) + 0.5, "round \(round), \(index)")
                } else {
                    #expect(store[NumberedMigrations.intKey(index)] == index, "round \(round), \(index)")
                }
            }
            try store.runMigrations((0..<count).map(NumberedMigrations.migration))
            for index in 0..<count {
                #expect(store[NumberedMigrations.doubleKey(index)] == Double(index) + 0.5)
            }
            #expect(store.appliedMigrations.count == count)
        }
    }
}
