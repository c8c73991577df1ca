import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// A child process writes numbered values and acknowledges each; it is killed at a random moment,
/// and the store it leaves must hold every acknowledged write and equal some prefix of the writes.
///
/// `swift test` runs 20 rounds; set `PREFERENCES_FULL_HARNESS=1` for 200.
@Suite(.tags(.childProcesses))
struct KillHarnessTests {
    static let rounds = ProcessInfo.processInfo.environment["PREFERENCES_FULL_HARNESS"] == nil ? 20 : 200

    @Test func everyAcknowledgedWriteSurvivesAKillAtAnyMoment() throws {
        var generator = SystemRandomNumberGenerator()
        var duringCompaction = 0
        var acknowledgedInAll = 0
        for round in 0..<Self.rounds {
            let directory = try TemporaryDirectory()
            let acks = directory.url.appendingPathComponent("acks")
            // Alternate between compacting every few writes, default settings, and synchronous writes.
            let compaction = round % 3 == 0 ? "16384" : "160"
            var arguments = ["numbered", directory.storeURL.path, acks.path, compaction]
            if round % 4 == 3 {
                arguments.append("synchronous")
            }
            let child = try ChildProcess.start("PreferencesHarness", arguments)
            try waitForFirstAcknowledgement(at: acks, from: child)
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.015, using: &generator))
            child.killAbruptly()

            let acknowledged = try lastAcknowledgement(at: acks)
            acknowledgedInAll += acknowledged
            if try directory.fileNames().contains(where: { $0.contains(".tmp-") }) {
                duringCompaction += 1
            }
            let store = try PreferencesStore(fileURL: directory.storeURL)
            let values = NumberedWrites.values(in: store)
            #expect(
                values == NumberedWrites.expectedValues(afterWrites: acknowledged)
                    || values == NumberedWrites.expectedValues(afterWrites: acknowledged + 1),
                "round \(round): \(acknowledged) writes acknowledged, store holds \(values)"
            )
            // The history too: an append or a pruning cut short by the kill is not damage.
            let history = try store.history()
            #expect(!history.isEmpty || acknowledged == 0, "round \(round): no history of \(acknowledged) writes")
            #expect(store.errorChannel.takeBacklog().isEmpty, "round \(round) reported damage")
            #expect(!(try directory.fileNames().contains { $0.contains(".tmp-") }), "a temporary file outlived opening")
        }
        print(
            "kill harness: \(Self.rounds) rounds, \(acknowledgedInAll) acknowledged writes, all present; "
                + "\(duringCompaction) kills caught a compaction mid-way")
    }

    private func waitForFirstAcknowledgement(at acks: URL, from child: ChildProcess) throws {
        let deadline = Date().addingTimeInterval(10)
        while (try? Data(contentsOf: acks).isEmpty) ?? true {
            guard Date() < deadline, child.process.isRunning else {
                Issue.record("the harness acknowledged nothing: \(child.wait().errors)")
                return
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    /// The last write acknowledged in full: a line cut short by the kill does not count.
    private func lastAcknowledgement(at acks: URL) throws -> Int {
        let text = String(decoding: try Data(contentsOf: acks), as: UTF8.self)
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
        return complete.split(separator: "\n").last.flatMap { Int($0) } ?? 0
    }
}

/// Several processes, and several stores in one process, on the same files at once.
@Suite(.tags(.childProcesses))
struct SeveralProcessesTests {
    @Test func fourProcessesWritingDistinctKeysLoseNone() throws {
        let directory = try TemporaryDirectory()
        let children = try (0..<4).map { index in
            try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "p\(index)", "300"])
        }
        for child in children {
            let (status, errors) = child.wait()
            #expect(status == 0, "\(errors)")
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.storedKeys(in: .custom("harness")).count == 1_200)
        for index in 0..<4 {
            #expect(store[PreferenceKey<Int>("p\(index)-299", default: -1, in: .custom("harness"))] == 299)
        }
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    @Test func fourProcessesIncrementingOneCounterCountEveryIncrement() throws {
        let directory = try TemporaryDirectory()
        let children = try (0..<4).map { _ in
            try ChildProcess.start("PreferencesHarness", ["increment", directory.storeURL.path, "1000"])
        }
        for child in children {
            let (status, errors) = child.wait()
            #expect(status == 0, "\(errors)")
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))] == 4_000)
    }

    @Test func aStoreAlreadyOpenSeesAnotherProcesssWriteOnItsNextRead() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let written = PreferenceKey<Int>("child-2", default: -1, in: .custom("harness"))
        #expect(store[written] == -1)
        let child = try ChildProcess.start("PreferencesHarness", ["distinct", directory.storeURL.path, "child", "3"])
        let (status, errors) = child.wait()
        #expect(status == 0, "\(errors)")
        #expect(store[written] == 2)
        #expect(store.storedKeys(in: .custom("harness")).count == 3)
    }

    @Test func aWriteThroughOneStoreIsSeenByTheNextReadOfAnother() throws {
        let directory = try TemporaryDirectory()
        let first = try PreferencesStore(fileURL: directory.storeURL)
        let second = try PreferencesStore(fileURL: directory.storeURL)
        #expect(second[.count] == 0)
        first[.count] = 1
        #expect(second[.count] == 1)
        try second.removeValue(for: .count)
        #expect(first[.count] == 0)
        #expect(!first.contains(.count))
        second[.title] = "from the second"
        #expect(first.storedKeys() == [StoredKey("title")])
    }

    @Test func aCompactionByOneStoreIsSeenByAnother() throws {
        let directory = try TemporaryDirectory()
        let first = try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: 64)
        let second = try PreferencesStore(
            fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: 64)
        for index in 0..<50 {
            first[PreferenceKey<Int>("k\(index % 5)", default: -1)] = index
            second[.title] = "t\(index)"
        }
        #expect(FileManager().fileExists(atPath: directory.storeURL.path), "no compaction ran")
        for index in 45..<50 {
            #expect(second[PreferenceKey<Int>("k\(index % 5)", default: -1)] == index)
        }
        #expect(first[.title] == "t49")
        #expect(first.errorChannel.takeBacklog().isEmpty)
        #expect(second.errorChannel.takeBacklog().isEmpty)
    }

    @Test func updatesThroughTwoStoresOnOneFileFromManyThreadsLoseNothing() throws {
        let directory = try TemporaryDirectory()
        let stores = try (0..<2).map { _ in
            try PreferencesStore(fileURL: directory.storeURL, fileSystem: FileSystem(), compactionMinimumBytes: 256)
        }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for _ in 0..<100 {
                try? stores[thread % 2].update(.count) { $0 += 1 }
            }
        }
        #expect(stores[0][.count] == 400)
        #expect(stores[1][.count] == 400)
    }
}
