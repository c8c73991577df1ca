import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// Devices as separate processes, each with a store of its own, sharing a folder: they agree,
/// nothing flaps, and a device killed in the middle of its rounds loses nothing it acknowledged.
///
/// `swift test` runs 5 kill rounds; set `PREFERENCES_FULL_HARNESS=1` for 40.
@Suite(.tags(.childProcesses))
struct SyncProcessTests {
    static let killRounds = ProcessInfo.processInfo.environment["PREFERENCES_FULL_HARNESS"] == nil ? 5 : 40

    /// A store of device `index` in `directory`.
    private func storeURL(_ directory: TemporaryDirectory, device index: Int) -> URL {
        directory.url.appendingPathComponent("device-\(index).store")
    }

    /// Runs a round on each device in turn, twice: by then every device has seen every other's
    /// changes and its own have been seen.
    private func settle(_ stores: [PreferencesStore], folder: URL) throws {
        let syncs = try stores.map { try SyncedKeys.sync($0, through: folder) }
        for _ in 0..<2 {
            for sync in syncs {
                try sync.synchronize()
            }
        }
    }

    @Test func threeDevicesWritingAtOnceAgreeAndNoValueGoesBack() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("shared", isDirectory: true)
        let writes = 150
        let children = try (0..<SyncedKeys.deviceCount).map { index in
            try ChildProcess.start(
                "PreferencesHarness",
                ["sync-writes", storeURL(directory, device: index).path, folder.path, "\(index)", "\(writes)"])
        }
        for child in children {
            let (status, errors) = child.wait()
            #expect(status == 0, "\(errors)")
        }

        let stores = try (0..<SyncedKeys.deviceCount).map {
            try PreferencesStore(fileURL: storeURL(directory, device: $0))
        }
        try settle(stores, folder: folder)
        let shared = stores.map { $0[SyncedKeys.shared] }
        #expect(Set(shared).count == 1, "the devices disagree: \(shared)")
        for store in stores {
            for index in 0..<SyncedKeys.deviceCount {
                #expect(store[SyncedKeys.own(index)] == writes)
                // Each value another device sent arrived at most once, and none went back: the
                // history (newest first) of a key only its device writes only ever decreases.
                let values = try store.history(for: SyncedKeys.own(index)).compactMap { entry -> Int? in
                    if case .value(let value) = entry.value { value } else { nil }
                }
                #expect(
                    zip(values, values.dropFirst()).allSatisfy { $0 > $1 }, "device \(index)'s key flapped: \(values)")
            }
            #expect(store.errorChannel.takeBacklog().isEmpty)
        }
    }

    /// The harness acknowledges a write once its round returned: the change is then in its
    /// device's file, and another device that syncs alone, before the killed one starts again,
    /// has it.
    @Test func aDeviceKilledDuringItsRoundsLosesNothingItAcknowledged() throws {
        var cutShort = 0
        for round in 0..<Self.killRounds {
            let directory = try TemporaryDirectory()
            let folder = directory.url.appendingPathComponent("shared", isDirectory: true)
            let acks = directory.url.appendingPathComponent("acks")
            let child = try ChildProcess.start(
                "PreferencesHarness",
                ["sync-writes", storeURL(directory, device: 0).path, folder.path, "0", "0", acks.path])
            let deadline = Date().addingTimeInterval(10)
            while ((try? Data(contentsOf: acks).count) ?? 0) < 40 * (round % 5 + 1) {
                guard Date() < deadline, child.process.isRunning else {
                    Issue.record("the harness acknowledged too little: \(child.wait().errors)")
                    return
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0...0.01))
            child.killAbruptly()
            let text = String(decoding: try Data(contentsOf: acks), as: UTF8.self)
            let lines = text.split(separator: "\n").dropLast(text.hasSuffix("\n") ? 0 : 1)
            let acknowledged = lines.last.flatMap { Int($0) } ?? 0

            let other = try PreferencesStore(fileURL: storeURL(directory, device: 1))
            let otherReport = try SyncedKeys.sync(other, through: folder).synchronize()
            let seen = other[SyncedKeys.own(0)]
            #expect(seen >= acknowledged, "round \(round): \(acknowledged) acknowledged, another device has \(seen)")

            // The killed device starts again: its last change, if its round was cut short, follows.
            let restarted = try PreferencesStore(fileURL: storeURL(directory, device: 0))
            if restarted[SyncedKeys.own(0)] > seen || !otherReport.problems.isEmpty {
                cutShort += 1
            }
            try settle([restarted, other], folder: folder)
            #expect(other[SyncedKeys.own(0)] == restarted[SyncedKeys.own(0)], "round \(round)")
            #expect(other[SyncedKeys.shared] == restarted[SyncedKeys.shared], "round \(round)")
            // A round cut short may leave its device's file with half a round: reported, and written whole.
            let reported = restarted.errorChannel.takeBacklog() + other.errorChannel.takeBacklog()
            #expect(reported.allSatisfy { $0.code == .damagedFile }, "round \(round): \(reported)")
        }
        print("sync kill harness: \(Self.killRounds) rounds, \(cutShort) kills cut a write or its round short")
        if Self.killRounds >= 40 {
            #expect(cutShort > 0, "no kill caught a write or a round under way: the test proved nothing of them")
        }
    }

    @Test func aDeviceOfflineForAThousandChangesCatchesUpFromTheCommandLine() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("shared", isDirectory: true)
        let offline = storeURL(directory, device: 1)
        _ = try ChildProcess.run("PreferencesHarness", ["sync", offline.path, folder.path])
        let writer = try ChildProcess.start(
            "PreferencesHarness", ["sync-writes", storeURL(directory, device: 0).path, folder.path, "0", "1000"])
        let (status, errors) = writer.wait()
        #expect(status == 0, "\(errors)")

        let result = try ChildProcess.run("PreferencesHarness", ["sync", offline.path, folder.path])
        #expect(result.output == "received 2 sent 0 problems 0\n", "\(result.errors)")
        let store = try PreferencesStore(fileURL: offline)
        #expect(store[SyncedKeys.own(0)] == 1000)
        #expect(store[SyncedKeys.shared] == "0-1000")
        #expect(try store.history(for: SyncedKeys.own(0)).count == 1)
    }
}
