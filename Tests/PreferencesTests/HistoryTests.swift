import Foundation
import Testing

@testable import Preferences

extension PreferenceKeys {
    fileprivate static let token = PreferenceKey<String?>("token").withoutHistory()
    fileprivate static let tokenWithHistory = PreferenceKey<String?>("token")
}

/// The store's history: what each change keeps, across compactions, processes and reopening, the
/// bounds, privacy, restoring, clearing and damage.
@Suite struct HistoryTests {
    /// A store at `directory` that compacts every few writes, keeping `history`.
    private func store(
        _ directory: TemporaryDirectory,
        history: HistoryRetention = .standard,
        compactionBytes: Int = 512
    ) throws -> PreferencesStore {
        try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: compactionBytes,
            history: history)
    }

    private func historyURL(_ directory: TemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("preferences.store.history")
    }

    /// Every byte of every file in the folder, for looking for a value that must be gone.
    private func everyByte(in directory: TemporaryDirectory) throws -> Data {
        try directory.fileNames().reduce(into: Data()) { bytes, name in
            bytes += try Data(contentsOf: directory.url.appendingPathComponent(name))
        }
    }

    @Test func eachChangeKeepsItsValueTimeProgramProcessAndCause() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        let before = Date()
        store[.count] = 1
        try store.transaction(writeIdentifier: "sync") { $0[.count] = 2 }
        try store.removeValue(for: .count)
        try store.setValue(3, for: .count)
        try store.removeAll(in: .app)
        let exported = PreferencesStore.inMemory()
        exported[.count] = 4
        try store.import(exported.export())
        try store.runMigrations(
            MigrateValue(from: PreferenceKeys.count, to: .count, id: "double count") { $0 * 2 })
        let after = Date()

        let history = try store.history(for: .count)
        let values = history.map { entry -> String in
            switch entry.value {
            case .value(let value): "\(value)"
            case .removed: "removed"
            case .otherType(let text): "other \(text)"
            }
        }
        #expect(values == ["8", "4", "removed", "3", "removed", "2", "1"])
        #expect(
            history.map(\.cause) == [
                .migration(id: "double count"), .import, .reset, .write, .write, .transaction, .write,
            ])
        #expect(history[5].entry.writeIdentifier == "sync")
        for entry in history {
            let date = try #require(entry.date)
            #expect(date >= before.addingTimeInterval(-0.001) && date <= after.addingTimeInterval(0.001))
            #expect(entry.entry.program == CommitStamp.program)
            #expect(entry.entry.processID == getpid())
            #expect(entry.entry.key == StoredKey("count"))
        }
        // Newest first, and the times never go backwards.
        let dates = history.compactMap(\.date)
        #expect(dates == dates.sorted(by: >))
    }

    @Test func historyOutlivesCompactionsAndReopening() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        for value in 0..<200 {
            store[.count] = value
        }
        #expect(FileManager().fileExists(atPath: historyURL(directory).path), "no compaction kept history")
        let reopened = try self.store(directory)
        let values = try reopened.history(for: .count).map { entry -> Int? in
            guard case .value(let value) = entry.value else { return nil }
            return value
        }
        // The standard limit: the last 32 changes of the key.
        #expect(values == Array((168..<200).reversed()))
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
    }

    @Test func theLimitsHoldAndAKeyWrittenOftenDoesNotPushOutOneWrittenRarely() throws {
        let directory = try TemporaryDirectory()
        let retention = HistoryRetention(changesPerKey: 5, maximumBytes: 4_096)
        let store = try store(directory, history: retention)
        store[.title] = "rare"
        for value in 0..<3_000 {
            store[.count] = value
        }
        #expect(try store.history(for: .count).count == 5)
        #expect(try store.history(for: .title).count == 1)
        let size = try #require(
            try FileManager().attributesOfItem(atPath: historyURL(directory).path)[.size] as? Int)
        #expect(size <= FileHeader.size + 2 * retention.maximumBytes, "the history file is \(size) bytes")

        // A limit on bytes alone drops the oldest changes first.
        let other = try TemporaryDirectory()
        let small = try self.store(other, history: HistoryRetention(changesPerKey: 1_000, maximumBytes: 2_048))
        for value in 0..<3_000 {
            small[.count] = value
        }
        let kept = try small.history(for: .count)
        #expect(kept.count > 10 && kept.count < 1_000)
        if case .value(let newest) = kept.first?.value {
            #expect(newest == 2_999)
        } else {
            Issue.record("the newest change is not kept")
        }
    }

    @Test func historyOffKeepsNoFile() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory, history: .off)
        for value in 0..<500 {
            store[.count] = value
        }
        #expect(!FileManager().fileExists(atPath: historyURL(directory).path))
        #expect(try store.history(for: .count).isEmpty)
    }

    @Test(.tags(.childProcesses))
    func eachProcessesChangesShowItsProgramAndProcess() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory, compactionBytes: 64 * 1024)
        store[.title] = "from the tests"
        let children = try ["first", "second"].map { prefix in
            (prefix, try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, prefix, "40"]))
        }
        for (_, child) in children {
            let result = child.wait()
            #expect(result.status == 0, "\(result.errors)")
        }
        // Into the history file, through this process's compaction.
        try store.compact()
        store[.count] = 1
        let history = try store.history()
        for (prefix, child) in children {
            let changes = history.filter { $0.key.name.hasPrefix(prefix + "-") }
            #expect(changes.count == 40)
            #expect(changes.allSatisfy { $0.program == "PreferencesHarness" && $0.cause == .write })
            #expect(changes.allSatisfy { $0.processID == child.process.processIdentifier })
        }
        let own = history.filter { $0.key == StoredKey("title") || $0.key == StoredKey("count") }
        #expect(own.count == 2)
        #expect(own.allSatisfy { $0.program == CommitStamp.program && $0.processID == getpid() })
        // Newest first, across processes.
        #expect(history.first?.key == StoredKey("count"))
        #expect(history.last?.key == StoredKey("title"))
    }

    @Test func aKeyWithoutHistoryLeavesNoBytesBehind() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        // Written while the key still kept history, as an app's older version may have.
        store[.tokenWithHistory] = "OLD-SECRET-1"
        try store.compact()
        #expect(try everyByte(in: directory).range(of: Data("OLD-SECRET-1".utf8)) != nil)

        for round in 0..<50 {
            store[.token] = "SECRET-\(round)"
            store[.count] = round
        }
        #expect(try store.history(for: .token).isEmpty)
        #expect(try store.history().allSatisfy { $0.key != StoredKey("token") })
        let history = try Data(contentsOf: historyURL(directory))
        #expect(history.range(of: Data("SECRET-".utf8)) == nil, "the history file holds a secret")

        try store.removeValue(for: .token)
        let bytes = try everyByte(in: directory)
        #expect(bytes.range(of: Data("SECRET-".utf8)) == nil, "a file still holds a secret")
        #expect(store[.token] == nil)
        #expect(store[.count] == 49)
        #expect(try store.history(for: .count).count == 32)
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func clearingRemovesEveryChangeAndKeepsTheValues() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        for value in 0..<100 {
            store[.title] = "title \(value)"
        }
        try store.clearHistory()
        #expect(try store.history(for: .title).isEmpty)
        #expect(!FileManager().fileExists(atPath: historyURL(directory).path))
        let bytes = try everyByte(in: directory)
        #expect(bytes.range(of: Data("title 98".utf8)) == nil, "an old value is still in a file")
        #expect(store[.title] == "title 99")
        #expect(try self.store(directory)[.title] == "title 99")
        // History starts again with the next change.
        store[.title] = "again"
        #expect(try store.history(for: .title).count == 1)
    }

    @Test func restoringWritesTheOldValueBackAsAChangeOfItsOwn() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        store[.theme] = .dark
        store[.theme] = .light
        try store.removeValue(for: .theme)
        let history = try store.history(for: .theme)
        try store.restore(.theme, to: history[2])
        #expect(store[.theme] == .dark)
        let after = try store.history(for: .theme)
        #expect(after.count == 4)
        #expect(after.first?.cause == .restore)
        guard case .value(.dark) = after.first?.value else {
            Issue.record("the restore is not the newest change")
            return
        }
        // Restoring a removal removes.
        try store.restore(.theme, to: history[0])
        #expect(!store.contains(.theme))
        // An entry of another key is refused, and changes nothing.
        store[.level] = .high
        let level = try #require(try store.history(for: .level).first)
        let foreign = KeyHistoryEntry<Theme>(value: .removed, entry: level.entry)
        let refused = #expect(throws: PreferencesError.self) { try store.restore(.theme, to: foreign) }
        #expect(refused?.code == .typeMismatch)
        #expect(!store.contains(.theme))
    }

    @Test func aValueOfAnotherTypeIsShownAsStoredAndCannotBeRestored() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        store[PreferenceKey<String>("count", default: "")] = "seven"
        store[.count] = 7
        let history = try store.history(for: .count)
        #expect(history.count == 2)
        guard case .otherType(let text) = history[1].value else {
            Issue.record("a string read as an integer: \(history[1].value)")
            return
        }
        #expect(text.contains("seven"))
        let error = #expect(throws: PreferencesError.self) { try store.restore(.count, to: history[1]) }
        #expect(error?.code == .typeMismatch)
        #expect(store[.count] == 7)
    }

    @Test func aForcedKeyIsNotRestored() throws {
        let folder = try TemporaryDirectory()
        let settings = folder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 12}"#.utf8).write(to: settings)
        let directory = try TemporaryDirectory()
        try self.store(directory)[.count] = 5
        let store = try PreferencesStore(fileURL: directory.storeURL, overrides: [.managed(fileURL: settings)])
        let entry = try #require(try store.history(for: .count).first)
        let error = #expect(throws: PreferencesError.self) { try store.restore(.count, to: entry) }
        #expect(error?.code == .valueForced)
    }

    @Test func aStoreInMemoryKeepsNoHistory() throws {
        let store = PreferencesStore.inMemory()
        store[.count] = 1
        #expect(try store.history(for: .count).isEmpty)
        #expect(try store.history().isEmpty)
        try store.clearHistory()
    }
}
