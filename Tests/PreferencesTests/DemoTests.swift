import Foundation
import Testing

@testable import Preferences

/// Runs the built `preferences-demo` as a real process, twice, against a scratch store.
@Suite(.tags(.childProcesses))
struct DemoTests {
    private func runDemo(arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String, String) {
        try ChildProcess.run("preferences-demo", arguments, environment: environment)
    }

    @Test func valuesPersistFromOneRunToTheNext() throws {
        let directory = try TemporaryDirectory()
        let store = directory.storeURL.path
        let (firstStatus, first, _) = try runDemo(arguments: ["--store", store])
        #expect(firstStatus == 0)
        #expect(first.contains("Migrated: rename launches in app to launchCount in app (nothing to migrate)"))
        #expect(first.contains("Ledger: 2 migrations applied"))
        #expect(first.contains("Launch 1; previous launch: never"))
        #expect(first.contains("recentLaunches ([String]): launch 1\n"))

        let (secondStatus, second, _) = try runDemo(arguments: [], environment: ["PREFERENCES_DEMO_STORE": store])
        #expect(secondStatus == 0)
        #expect(!second.contains("Migrated:"))
        #expect(second.contains("Ledger: 2 migrations applied"))
        #expect(second.contains("Launch 2; previous launch: 20"))
        #expect(second.contains("recentLaunches ([String]): launch 1, launch 2\n"))
        #expect(second.contains("app:launchCount"))
        #expect(second.contains("zoomPercent: 100 (from the default)"))

        let (thirdStatus, third, _) = try runDemo(arguments: ["--store", store, "-zoomPercent", "150"])
        #expect(thirdStatus == 0)
        #expect(third.contains("Launch 3"))
        #expect(third.contains("zoomPercent: 150 (from the launch argument)"))
    }

    @Test func twoStoresSyncThroughAFolder() throws {
        let directory = try TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("synced").path
        let first = directory.url.appendingPathComponent("a.store").path
        let second = directory.url.appendingPathComponent("b.store").path
        let (firstStatus, firstOutput, firstErrors) = try runDemo(arguments: [
            "--store", first, "--sync-folder", folder,
        ])
        #expect(firstStatus == 0, "\(firstErrors)")
        #expect(firstOutput.contains("sent: app:appearance, app:nickname"))
        let named = firstOutput.split(separator: "\n").first { $0.contains("nickname: named on device") }
        #expect(named?.hasSuffix("(made here)") == true, "\(firstOutput)")

        let (secondStatus, secondOutput, secondErrors) = try runDemo(arguments: [
            "--store", second, "--sync-folder", folder,
        ])
        #expect(secondStatus == 0, "\(secondErrors)")
        #expect(secondOutput.contains("received: app:nickname\n"))
        #expect(secondOutput.contains("sent: nothing"))
        let taken = secondOutput.split(separator: "\n").first { $0.contains("nickname: named on device") }
        // The second store took the first's nickname, and says which device it came from.
        #expect(taken?.split(separator: "(").first == named?.split(separator: "(").first, "\(secondOutput)")
        #expect(taken?.contains("(from device") == true)
    }

    @Test func aDamagedStoreIsReportedAndRecovered() throws {
        let directory = try TemporaryDirectory()
        let store = directory.storeURL.path
        _ = try runDemo(arguments: ["--store", store])
        _ = try runDemo(arguments: ["--store", store])
        // Damage the first launch's record; the second launch's, after it, still verifies.
        var bytes = try Data(contentsOf: directory.logURL)
        bytes[LogFile.recordsOffset + 20] ^= 0x40
        try bytes.write(to: directory.logURL)

        let (status, output, _) = try runDemo(arguments: ["--store", store])
        #expect(status == 0)
        #expect(output.contains("! The store file '\(directory.logURL.path)' is damaged"))
        #expect(output.contains("Launch 3"))
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.log.damaged-") })
    }

    @Test func watchingShowsAnotherRunsChangesAsTheyHappen() throws {
        let directory = try TemporaryDirectory()
        let store = directory.storeURL.path
        let watcher = try ChildProcess.startCollectingOutput("preferences-demo", ["--watch", "--store", store])
        watcher.waitFor("Watching")
        let (status, _, _) = try runDemo(arguments: ["--store", store])
        #expect(status == 0)
        watcher.waitFor("Changed: ")
        #expect(watcher.output.contains("launchCount"))
        #expect(watcher.output.contains("from another process"))
    }

    /// Linux only: on Apple platforms the standard store lives in Application Support, which a
    /// test must not write into.
    @Test(.enabled(if: isLinux, "the standard store follows XDG_CONFIG_HOME only on Linux"))
    func theStandardStoreFollowsXDGConfigHome() throws {
        let directory = try TemporaryDirectory()
        let (status, output, _) = try runDemo(arguments: [], environment: ["XDG_CONFIG_HOME": directory.url.path])
        #expect(status == 0)
        let expected = directory.url.appendingPathComponent("preferences-demo/preferences.store").path
        #expect(output.contains("Store: \(expected)"))
        #expect(FileManager().fileExists(atPath: expected + ".log"))
    }
}

/// The standard store opens again on a later access after it could not open, as on iOS before the
/// first unlock.
@Suite(.tags(.childProcesses))
struct StandardStoreTests {
    @Test(.enabled(if: isLinux, "points the standard store elsewhere through XDG_CONFIG_HOME"))
    func theStandardStoreOpensOnALaterAccessOnceItCan() throws {
        let directory = try TemporaryDirectory()
        let blocker = directory.url.appendingPathComponent("config")
        try Data("not a folder".utf8).write(to: blocker)
        let (status, output, errors) = try ChildProcess.run(
            "PreferencesHarness", ["standard", blocker.path], environment: ["XDG_CONFIG_HOME": blocker.path])
        #expect(status == 0, "\(errors)")
        #expect(output.contains("refused: storeUnavailable"))
        #expect(output.contains("recovered: 2"))
        #expect(
            FileManager().fileExists(
                atPath: blocker.appendingPathComponent("PreferencesHarness/preferences.store.log").path))
    }
}
