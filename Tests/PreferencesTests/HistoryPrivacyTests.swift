import Foundation
import Testing

@testable import Preferences

extension PreferenceKeys {
    fileprivate static let secret = PreferenceKey<String?>("secret").withoutHistory()
    fileprivate static let secretBeforeItWasDeclaredSo = PreferenceKey<String?>("secret")
}

/// Keys declared without history: what each way of removing their values leaves in the files, and
/// what happens when the history cannot be rewritten without them.
@Suite struct HistoryPrivacyTests {
    private func store(_ directory: TemporaryDirectory, fileSystem: FileSystem = FileSystem()) throws
        -> PreferencesStore
    {
        try PreferencesStore(fileURL: directory.storeURL, fileSystem: fileSystem, compactionMinimumBytes: 4_096)
    }

    /// Every byte of every file in the folder.
    private func everyByte(in directory: TemporaryDirectory) throws -> Data {
        try directory.fileNames().reduce(into: Data()) { bytes, name in
            bytes += try Data(contentsOf: directory.url.appendingPathComponent(name))
        }
    }

    private func holds(_ text: String, _ directory: TemporaryDirectory) throws -> Bool {
        try everyByte(in: directory).range(of: Data(text.utf8)) != nil
    }

    @Test(arguments: ["removeAll", "removeAll(in:)", "resetAll", "transaction"])
    func everyWayOfRemovingASecretLeavesItInNoFile(_ way: String) throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        store[.secret] = "SECRET-VALUE"
        store[.count] = 1
        #expect(try holds("SECRET-VALUE", directory))
        switch way {
        case "removeAll": try store.removeAll()
        case "removeAll(in:)": try store.removeAll(in: .app)
        case "resetAll":
            store.register(.secret)
            try store.resetAll()
        default: try store.transaction { $0[.secret] = nil }
        }
        #expect(store[.secret] == nil)
        #expect(try !holds("SECRET-VALUE", directory), "\(way) left the secret in a file")
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    /// A store opened after the secret was written, which never uses its key: the slots it
    /// removes know no declaration, and a reset compacts at once all the same.
    @Test(arguments: ["removeAll", "removeAll(in:)", "resetAll(removingUndeclaredKeys:)"])
    func aResetByAStoreThatNeverUsedTheKeyLeavesTheSecretInNoFile(_ way: String) throws {
        let directory = try TemporaryDirectory()
        let writer = try store(directory)
        writer[.secret] = "SECRET-VALUE"
        writer[.count] = 1
        try writer.compact()
        writer[.secret] = "SECRET-AGAIN"
        let store = try store(directory)
        switch way {
        case "removeAll": try store.removeAll()
        case "removeAll(in:)": try store.removeAll(in: .app)
        default: try store.resetAll(removingUndeclaredKeys: true)
        }
        #expect(try !holds("SECRET-", directory), "\(way) left the secret in a file")
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func historyOffErasesASecretAndKeepsTheRestOfTheHistory() throws {
        let directory = try TemporaryDirectory()
        let first = try store(directory)
        first[.secretBeforeItWasDeclaredSo] = "OLD-SECRET"
        first[.count] = 1
        try first.compact()
        let off = try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: 4_096, history: .off)
        off[.secret] = "NEW-SECRET"
        try off.removeValue(for: .secret)
        #expect(try !holds("OLD-SECRET", directory) && !holds("NEW-SECRET", directory))
        #expect(try first.history(for: .count).count == 1, "erasing with history off dropped the rest")
    }

    @Test func clearingTheHistoryRemovesItsDamagedCopies() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        // An old value only the history holds.
        store[.secretBeforeItWasDeclaredSo] = "OLD-SECRET"
        store[.secretBeforeItWasDeclaredSo] = "current"
        try store.compact()
        let history = directory.url.appendingPathComponent("preferences.store.history")
        var bytes = try Data(contentsOf: history)
        bytes[0] ^= 0xFF
        try bytes.write(to: history)
        store[.count] = 1
        try store.compact()
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.history.damaged-") })
        #expect(try holds("OLD-SECRET", directory))
        try store.clearHistory()
        #expect(try !directory.fileNames().contains { $0.hasPrefix("preferences.store.history") })
        #expect(try !holds("OLD-SECRET", directory))
    }

    @Test(.tags(.childProcesses))
    func prefsDeleteLeavesTheSecretInNoFile() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        store[.secret] = "SECRET-VALUE"
        let deleted = try ChildProcess.run("prefs", ["delete", directory.storeURL.path, "app:secret"])
        #expect(deleted.status == 0, "\(deleted.errors)")
        #expect(try !holds("SECRET-VALUE", directory))
    }

    @Test func aHistoryThatCannotBeErasedIsErasedByTheNextCompactionThatCan() throws {
        let directory = try TemporaryDirectory()
        let operations = FileOperationLog()
        let store = try store(directory, fileSystem: operations.fileSystem)
        store[.secretBeforeItWasDeclaredSo] = "OLD-SECRET"
        try store.compact()
        #expect(try holds("OLD-SECRET", directory))

        // Rewriting the history fails: the compaction fails with it, and keeps its log.
        operations.fail(.rename, with: ENOSPC, where: { $0.hasSuffix(".history") })
        store[.secret] = "NEW-SECRET"
        try store.removeValue(for: .secret)
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.fileOperationFailed])
        #expect(try holds("OLD-SECRET", directory))
        #expect(try self.store(directory)[.secret] == nil)

        operations.fail(.rename, with: nil)
        try store.compact()
        #expect(try !holds("OLD-SECRET", directory), "the history kept the secret")
        #expect(try !holds("NEW-SECRET", directory))
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func aProcessWhoseFirstWriteIsASecretIsStillNamed() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        // The first record of this process in a new log names its program, and holds only a secret.
        try store.compact()
        store[.secret] = "SECRET-VALUE"
        store[.count] = 7
        try store.compact()
        let change = try #require(try store.history(for: .count).first)
        #expect(change.entry.program == CommitStamp.program)
        #expect(
            try !Data(contentsOf: directory.url.appendingPathComponent("preferences.store.history"))
                .contains(Data("SECRET-VALUE".utf8)))
    }

    @Test func theHistoryOfARegisteredKeyDeclaredWithoutHistoryIsNotListed() throws {
        let directory = try TemporaryDirectory()
        let store = try store(directory)
        store[.secretBeforeItWasDeclaredSo] = "OLD-SECRET"
        store[.count] = 1
        #expect(try store.history().contains { $0.key == StoredKey("secret") })
        store.register(.secret)
        #expect(try !store.history().contains { $0.key == StoredKey("secret") })
        #expect(try store.history(for: .secret).isEmpty)
        #expect(try store.history().contains { $0.key == StoredKey("count") })
    }
}
