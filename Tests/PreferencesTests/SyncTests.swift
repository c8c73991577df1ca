import Foundation
import Testing

@testable import Preferences

extension PreferenceKeys {
    fileprivate static let secret = PreferenceKey<String?>("secret").withoutHistory()
    fileprivate static let oldName = PreferenceKey<Int>("oldName", default: 0)
    fileprivate static let newName = PreferenceKey<Int>("newName", default: 0)
}

/// A device: a store of its own, syncing some keys through a shared folder.
private struct Device {
    let directory: TemporaryDirectory
    let store: PreferencesStore
    let sync: PreferencesSync

    init(folder: URL, keys: [PreferenceKeys] = [.count, .title, .nickname], overrides: [OverrideLayer] = []) throws {
        directory = try TemporaryDirectory()
        store = try PreferencesStore(fileURL: directory.storeURL, overrides: overrides)
        sync = try PreferencesSync(store: store, keys: keys, folder: folder)
    }

    /// The same store with another set of synced keys: a newer version of the app.
    init(upgrading device: Device, keys: [PreferenceKeys], folder: URL) throws {
        directory = device.directory
        store = device.store
        sync = try PreferencesSync(store: store, keys: keys, folder: folder)
    }

    @discardableResult
    func synchronize() throws -> SyncReport {
        try sync.synchronize()
    }
}

/// Two and three devices, each a store of its own, sharing a folder in one process.
///
/// What wins, what is sent and what is not, damage, and versions of the app that differ. The same
/// with separate processes is in ``SyncProcessTests``.
@Suite struct SyncTests {
    @Test func aChangeOnOneDeviceReachesTheOtherWithItsDeviceAsOrigin() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        let laptop = try Device(folder: folder.url)
        let origins = Locked<[ChangeOrigin]>([])
        let observation = laptop.store.observe(.count) { _, change in
            origins.withLock { $0.append(change.origin) }
        }
        defer { observation.cancel() }

        phone.store[.count] = 7
        let sent = try phone.synchronize()
        #expect(sent.sent.map(\.name) == ["count"])
        let received = try laptop.synchronize()

        #expect(received.received.map(\.name) == ["count"])
        #expect(laptop.store[.count] == 7)
        #expect(origins.withLock { $0 } == [.sync(device: phone.sync.deviceID)])
        let history = try laptop.store.history(for: .count)
        #expect(history.map(\.cause) == [.sync(device: phone.sync.deviceID)])
    }

    @Test func aChangeThatCameFromSyncIsNeverSentBack() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        let laptop = try Device(folder: folder.url)
        phone.store[.title] = "hello"
        try phone.synchronize()
        try laptop.synchronize()

        for _ in 0..<3 {
            let fromLaptop = try laptop.synchronize()
            let fromPhone = try phone.synchronize()
            #expect(fromLaptop.sent.isEmpty && fromLaptop.received.isEmpty)
            #expect(fromPhone.sent.isEmpty && fromPhone.received.isEmpty)
        }
        #expect(try phone.store.history(for: .title).count == 1)
        #expect(try laptop.store.history(for: .title).count == 1)
    }

    @Test func concurrentWritesToOneKeyConvergeOnTheLatest() throws {
        let folder = try TemporaryDirectory()
        let devices = try (0..<3).map { _ in try Device(folder: folder.url) }
        for device in devices {
            try device.synchronize()
        }
        // Each changes the key before seeing the others' changes, a few milliseconds apart, and they
        // sync in the opposite order: each change is stamped with when it was made.
        for (index, device) in devices.enumerated() {
            device.store[.count] = 100 + index
            Thread.sleep(forTimeInterval: 0.003)
        }
        for device in devices.reversed() {
            try device.synchronize()
        }
        for device in devices {
            try device.synchronize()
        }
        #expect(devices.map { $0.store[.count] } == [102, 102, 102])
    }

    @Test func aNewerRemovalIsNotUndoneByAnOlderWriteNorAnOlderRemovalByANewerWrite() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        let laptop = try Device(folder: folder.url)
        phone.store[.nickname] = "first"
        try phone.synchronize()
        try laptop.synchronize()
        #expect(laptop.store[.nickname] == "first")

        // The laptop writes, then the phone removes: the removal is later and wins on both.
        laptop.store[.nickname] = "second"
        try laptop.synchronize()
        try phone.store.removeValue(for: .nickname)
        try phone.synchronize()
        try laptop.synchronize()
        #expect(phone.store[.nickname] == nil)
        #expect(laptop.store[.nickname] == nil)
        #expect(try laptop.synchronize().received.isEmpty)

        // A write after the removal brings a value back everywhere.
        laptop.store[.nickname] = "third"
        try laptop.synchronize()
        try phone.synchronize()
        #expect(phone.store[.nickname] == "third")
    }

    @Test func aNewDeviceTakesTheOthersValuesAndNeverSendsItsDefaults() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        phone.store[.count] = 5
        try phone.synchronize()

        let tablet = try Device(folder: folder.url)
        let report = try tablet.synchronize()
        #expect(report.sent.isEmpty)
        #expect(tablet.store[.count] == 5)
        // Nothing stored for title: nothing offered, and the phone's title stays unset.
        try phone.synchronize()
        #expect(!phone.store.contains(.title))
        #expect(phone.store[.count] == 5)
    }

    @Test func aDeviceThatNeverSyncedTakesTheOthersValueBeforeOfferingItsOwn() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        phone.store[.count] = 5
        try phone.synchronize()

        // Set before this device first synced: another device's value wins, so that a first
        // launch cannot overwrite what the user chose elsewhere.
        let tablet = try Device(folder: folder.url)
        tablet.store[.count] = 1
        tablet.store[.title] = "only here"
        let report = try tablet.synchronize()
        #expect(tablet.store[.count] == 5)
        #expect(report.sent.map(\.name) == ["title"])
        try phone.synchronize()
        #expect(phone.store[.title] == "only here")
    }

    @Test func aDeviceOfflineForAThousandChangesCatchesUpInOneCommit() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        let laptop = try Device(folder: folder.url)
        try laptop.synchronize()
        for value in 1...1000 {
            phone.store[.count] = value
            try phone.synchronize()
        }
        // The phone's file was written whole as it grew, and holds far fewer than 1,000 versions.
        let size =
            try FileManager.default.attributesOfItem(
                atPath: folder.url.appendingPathComponent(phone.sync.deviceID + ".prefsync").path)[.size] as? Int
        #expect((size ?? .max) < 20_000)

        let report = try laptop.synchronize()
        #expect(report.received.map(\.name) == ["count"])
        #expect(laptop.store[.count] == 1000)
        #expect(try laptop.store.history(for: .count).count == 1)
    }

    @Test func aKeyKeptOutOfHistoryCannotSync() throws {
        let folder = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: TemporaryDirectory().storeURL)
        #expect {
            try PreferencesSync(store: store, keys: [.count, .secret], folder: folder.url)
        } throws: { error in
            (error as? PreferencesError)?.code == .notSyncable && (error as? PreferencesError)?.key?.name == "secret"
        }
    }

    @Test func aForcedKeyIsNeitherSentNorChanged() throws {
        let folder = try TemporaryDirectory()
        let settingsFolder = try TemporaryDirectory()
        let settings = settingsFolder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 12}"#.utf8).write(to: settings)
        let phone = try Device(folder: folder.url)
        let managed = try Device(folder: folder.url, overrides: [.managed(fileURL: settings)])
        try managed.synchronize()

        phone.store[.count] = 3
        try phone.synchronize()
        let report = try managed.synchronize()
        #expect(report.received.isEmpty)
        #expect(managed.store[.count] == 12)
        #expect(!managed.store.contains(.count))
    }

    @Test func aHalfCopiedFileIsSkippedAndReportedUntilItVerifies() throws {
        let folder = try TemporaryDirectory()
        let elsewhere = try TemporaryDirectory()
        let phone = try Device(folder: elsewhere.url)
        let laptop = try Device(folder: folder.url)
        phone.store[.count] = 9
        phone.store[.title] = "whole"
        try phone.synchronize()
        let name = phone.sync.deviceID + ".prefsync"
        let whole = try Data(contentsOf: elsewhere.url.appendingPathComponent(name))

        // The program copying the folder has written part of the file so far.
        try whole.prefix(whole.count - 5).write(to: folder.url.appendingPathComponent(name))
        let first = try laptop.synchronize()
        #expect(first.received.isEmpty)
        #expect(first.problems.map(\.code) == [.damagedFile])
        #expect(first.problems.first?.filePath?.hasSuffix(name) == true)
        #expect(laptop.store[.count] == 0)
        // The same file, unchanged, is not reported again.
        #expect(try laptop.synchronize().problems.isEmpty)

        try whole.write(to: folder.url.appendingPathComponent(name))
        let second = try laptop.synchronize()
        #expect(second.problems.isEmpty)
        #expect(Set(second.received.map(\.name)) == ["count", "title"])
        #expect(laptop.store[.count] == 9)
    }

    @Test func aDamagedFileOfThisDeviceIsWrittenWholeAgain() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        phone.store[.count] = 4
        try phone.synchronize()
        let url = folder.url.appendingPathComponent(phone.sync.deviceID + ".prefsync")
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 3] ^= 0xFF
        try bytes.write(to: url)

        let restarted = try Device(upgrading: phone, keys: [.count, .title, .nickname], folder: folder.url)
        let report = try restarted.synchronize()
        #expect(report.problems.map(\.code) == [.damagedFile])
        let laptop = try Device(folder: folder.url)
        try laptop.synchronize()
        #expect(laptop.store[.count] == 4)
    }

    @Test func renamingAKeyKeepsItsPlaceAmongTheOtherDevicesChanges() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url, keys: [.oldName])
        let laptop = try Device(folder: folder.url, keys: [.oldName])
        phone.store[.oldName] = 5
        try phone.synchronize()
        try laptop.synchronize()

        // The phone updates first: its rename moves the value and its place, and syncs the new name.
        try phone.store.runMigrations(MigrateName(from: .oldName, to: .newName))
        let newPhone = try Device(upgrading: phone, keys: [.newName], folder: folder.url)
        try newPhone.synchronize()
        // The laptop, still on the old version, changes the old name, which the phone no longer syncs.
        laptop.store[.oldName] = 7
        try laptop.synchronize()
        try newPhone.synchronize()
        #expect(newPhone.store[.newName] == 5)

        // Then the laptop updates: its later change, moved by its own rename, wins on both.
        try laptop.store.runMigrations(MigrateName(from: .oldName, to: .newName))
        let newLaptop = try Device(upgrading: laptop, keys: [.newName], folder: folder.url)
        try newLaptop.synchronize()
        try newPhone.synchronize()
        #expect(newLaptop.store[.newName] == 7)
        #expect(newPhone.store[.newName] == 7)
    }

    /// Whether `condition` holds within ten seconds: for what the sync's own queue does.
    private func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            guard Date() < deadline else { return false }
            Thread.sleep(forTimeInterval: 0.002)
        }
        return true
    }

    @Test func startedSyncAppliesTheOtherDevicesChangesAsTheyArrive() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        let laptop = try Device(folder: folder.url)
        try phone.sync.start()
        try laptop.sync.start()
        defer {
            phone.sync.stop()
            laptop.sync.stop()
        }
        // An append to the phone's file.
        phone.store[.count] = 42
        #expect(eventually { laptop.store[.count] == 42 })
        // And back.
        laptop.store[.title] = "from the laptop"
        #expect(eventually { phone.store[.title] == "from the laptop" })
        // The phone's file written whole, and renamed over the one the laptop watched, many times.
        for value in 1...300 {
            phone.store[.count] = value
        }
        #expect(eventually { laptop.store[.count] == 300 })
        phone.store[.nickname] = "after the rewrites"
        #expect(eventually { laptop.store[.nickname] == "after the rewrites" })
    }

    @Test func aStartedSyncAppliesWhatArrivedWhileAKeyWasForcedOnceItIsNoLonger() throws {
        let folder = try TemporaryDirectory()
        let settingsFolder = try TemporaryDirectory()
        let settings = settingsFolder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 12}"#.utf8).write(to: settings)
        let phone = try Device(folder: folder.url)
        let managed = try Device(folder: folder.url, overrides: [.managed(fileURL: settings)])
        try managed.sync.start()
        defer { managed.sync.stop() }

        phone.store[.count] = 3
        phone.store[.title] = "arrives"
        try phone.synchronize()
        #expect(eventually { managed.store[.title] == "arrives" })
        #expect(managed.store[.count] == 12)
        #expect(!managed.store.contains(.count))

        try Data("{}".utf8).write(to: settings)
        #expect(eventually { managed.store[.count] == 3 })
    }

    @Test func stoppedSyncNoLongerApplies() throws {
        let folder = try TemporaryDirectory()
        let phone = try Device(folder: folder.url)
        let laptop = try Device(folder: folder.url)
        try laptop.sync.start()
        phone.store[.count] = 1
        try phone.synchronize()
        #expect(eventually { laptop.store[.count] == 1 })
        laptop.sync.stop()
        phone.store[.count] = 2
        try phone.synchronize()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(laptop.store[.count] == 1)
        // A round asked for by hand still runs.
        try laptop.synchronize()
        #expect(laptop.store[.count] == 2)
    }
}
