import Foundation
import Testing

@testable import Preferences

extension PreferenceKeys {
    fileprivate static let secret = PreferenceKey<String?>("secret").withoutHistory()
    fileprivate static let oldName = PreferenceKey<Int>("oldName", default: 0)
    fileprivate static let newName = PreferenceKey<Int>("newName", default: 0)
}

/// Two and three devices, each a store of its own, sharing a folder in one process.
///
/// What wins, what is sent and what is not, damage, and versions of the app that differ. The same
/// with separate processes is in ``SyncProcessTests``.
@Suite struct SyncTests {
    @Test func aChangeOnOneDeviceReachesTheOtherWithItsDeviceAsOrigin() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice(folder: folder.url)
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
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice(folder: folder.url)
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
        let devices = try (0..<3).map { _ in try SyncDevice(folder: folder.url) }
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
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice(folder: folder.url)
        phone.store[.nickname] = "first"
        try phone.synchronize()
        try laptop.synchronize()
        #expect(laptop.store[.nickname] == "first")

        // The laptop writes, then the phone, which has not seen the write, removes: the removal is
        // later (changes are stamped by the millisecond) and wins on both.
        laptop.store[.nickname] = "second"
        try laptop.synchronize()
        Thread.sleep(forTimeInterval: 0.003)
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
        let phone = try SyncDevice(folder: folder.url)
        phone.store[.count] = 5
        try phone.synchronize()

        let tablet = try SyncDevice(folder: folder.url)
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
        let phone = try SyncDevice(folder: folder.url)
        phone.store[.count] = 5
        try phone.synchronize()

        // Set before this device first synced: another device's value wins, so that a first
        // launch cannot overwrite what the user chose elsewhere.
        let tablet = try SyncDevice(folder: folder.url)
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
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice.joining(folder.url)
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
        let error = #expect(throws: PreferencesError.self) {
            try PreferencesSync(store: store, keys: [.count, .secret], folder: folder.url)
        }
        #expect(error?.code == .notSyncable)
        #expect(
            error?.description
                == "Key 'app:secret' cannot sync: it is declared withoutHistory(), and what is kept out of the "
                + "history stays on the device.")
        #expect(try folder.fileNames().isEmpty)
    }

    @Test func aForcedKeyIsNeitherSentNorChanged() throws {
        let folder = try TemporaryDirectory()
        let settingsFolder = try TemporaryDirectory()
        let settings = settingsFolder.url.appendingPathComponent("managed.json")
        try Data(#"{"count": 12}"#.utf8).write(to: settings)
        let phone = try SyncDevice(folder: folder.url)
        let managed = try SyncDevice(folder: folder.url, overrides: [.managed(fileURL: settings)])
        try managed.synchronize()

        phone.store[.count] = 3
        try phone.synchronize()
        let report = try managed.synchronize()
        #expect(report.received.isEmpty)
        #expect(managed.store[.count] == 12)
        #expect(!managed.store.contains(.count))
    }

    @Test func aKeyNewlySyncedByAnUpdateTakesTheValueADeviceUpdatedFirstOffered() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice(folder: folder.url, keys: [.count])
        let laptop = try SyncDevice(folder: folder.url, keys: [.count])
        try phone.synchronize()
        try laptop.synchronize()
        // Set on each device before the version of the app that syncs the title.
        laptop.store[.title] = "the laptop's"
        Thread.sleep(forTimeInterval: 0.003)
        phone.store[.title] = "the phone's"

        let newPhone = try SyncDevice(upgrading: phone, keys: [.count, .title], folder: folder.url)
        #expect(try newPhone.synchronize().sent.map(\.name) == ["title"])
        let newLaptop = try SyncDevice(upgrading: laptop, keys: [.count, .title], folder: folder.url)
        let report = try newLaptop.synchronize()
        #expect(report.received.map(\.name) == ["title"])
        #expect(report.sent.isEmpty)
        #expect(newLaptop.store[.title] == "the phone's")
    }

    @Test func aChangeMadeBeforeALaterOneElsewhereLosesToItWhenItsDeviceSyncsLast() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice(folder: folder.url)
        try phone.synchronize()
        try laptop.synchronize()
        phone.store[.count] = 1
        Thread.sleep(forTimeInterval: 0.003)
        laptop.store[.count] = 2
        try laptop.synchronize()
        // The phone syncs last, but its change was made first.
        let report = try phone.synchronize()
        #expect(report.sent.isEmpty)
        #expect(report.received.map(\.name) == ["count"])
        #expect(phone.store[.count] == 2)
        #expect(try laptop.synchronize().received.isEmpty)
        #expect(laptop.store[.count] == 2)
    }

    @Test func aFirstRoundThatSkipsAHalfCopiedFileOffersNothingTheStoreNeverSynced() throws {
        let folder = try TemporaryDirectory()
        let elsewhere = try TemporaryDirectory()
        let phone = try SyncDevice(folder: elsewhere.url)
        phone.store[.title] = "the phone's"
        try phone.synchronize()
        let name = phone.sync.deviceID + ".prefsync"
        let whole = try Data(contentsOf: elsewhere.url.appendingPathComponent(name))
        try whole.prefix(whole.count - 5).write(to: folder.url.appendingPathComponent(name))

        let tablet = try SyncDevice(folder: folder.url)
        tablet.store[.title] = "the tablet's, from before it synced"
        tablet.store[.count] = 3
        let first = try tablet.synchronize()
        #expect(first.problems.map(\.code) == [.damagedFile])
        #expect(first.sent.isEmpty)
        #expect(tablet.store[.title] == "the tablet's, from before it synced")

        try whole.write(to: folder.url.appendingPathComponent(name))
        let second = try tablet.synchronize()
        #expect(tablet.store[.title] == "the phone's")
        // The count, which the phone's file has no version of, is the tablet's to offer.
        #expect(second.sent.map(\.name) == ["count"])
    }

    @Test func twoProcessesOfOneDeviceSyncingDifferentKeysKeepEachOthersVersionsInTheirFile() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice(folder: folder.url, keys: [.count])
        // The phone's widget: the same store, another set of keys.
        let widgetStore = try PreferencesStore(fileURL: phone.directory.storeURL)
        let widget = try PreferencesSync(store: widgetStore, keys: [.nickname], folder: folder.url)
        #expect(widget.deviceID == phone.sync.deviceID)
        phone.store[.count] = 5
        try phone.synchronize()
        // Enough changes that the widget writes the device's file whole, many times over.
        for index in 0..<300 {
            widgetStore[.nickname] = "name \(index)"
            try widget.synchronize()
        }
        let tablet = try SyncDevice.joining(folder.url)
        #expect(tablet.store[.count] == 5)
        #expect(tablet.store[.nickname] == "name 299")
    }

    @Test func aStampFarAheadStaysWithItsKeyAndMovesNoClock() throws {
        let folder = try TemporaryDirectory()
        let laptop = try SyncDevice.joining(folder.url)
        let farAhead = HybridClock.reading(at: (CommitStamp.now() ?? 0) + 5 * 365 * 24 * 3_600_000)
        var writer = ByteWriter()
        let count = ResolvedKey(namespace: "app", name: "count")
        SyncFile.appendFrame(
            [
                SyncFile.Entry(
                    key: count, version: SyncVersion(stamp: farAhead, device: "broken-clock", value: .signed(99)))
            ],
            to: &writer)
        try Data(SyncFile.header(generation: 1) + writer.bytes)
            .write(to: folder.url.appendingPathComponent("broken-clock.prefsync"))

        // Every device compares stamps alike: the version is taken, as it is everywhere.
        let report = try laptop.synchronize()
        #expect(report.received.map(\.name) == ["count"])
        #expect(laptop.store[.count] == 99)
        // A change of another key is stamped from the clock, not from the far-ahead stamp ...
        laptop.store[.title] = "now"
        try laptop.synchronize()
        let title = try #require(try laptop.store.syncedVersion(of: ResolvedKey(namespace: "app", name: "title")))
        #expect(title.stamp < farAhead)
        // ... and a change of the key itself, made after the version it replaces, wins over it.
        laptop.store[.count] = 1
        try laptop.synchronize()
        #expect(try laptop.store.syncedVersion(of: count)?.stamp == farAhead + 1)
        let tablet = try SyncDevice.joining(folder.url)
        #expect(tablet.store[.count] == 1)
    }

    @Test func thisDevicesFileInANewerFormatStopsTheRound() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice.joining(folder.url)
        let url = folder.url.appendingPathComponent(phone.sync.deviceID + ".prefsync")
        try Data(FileHeader(kind: .syncChanges, version: 2, generation: 1).encoded()).write(to: url)
        phone.store[.count] = 1
        let error = #expect(throws: PreferencesError.self) { try phone.synchronize() }
        #expect(error?.code == .unsupportedFormatVersion)
        #expect(error?.filePath == url.path)
        #expect(try Data(contentsOf: url).count == FileHeader.size)
    }

    @Test func aFailedRoundLeavesEveryKeyToTheNext() throws {
        let folder = try TemporaryDirectory()
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let operations = FileOperationLog()
        let keys = [PreferenceKeys.count, .title].map { $0.resolvedKey(appNamespace: store.appNamespace) }
        let sync = try PreferencesSync(
            store: store, resolvedKeys: keys, folder: folder.url, fileSystem: operations.fileSystem)
        try sync.synchronize()

        // The count's change is noticed, the title's is not (made while nothing watched).
        store[.count] = 4
        sync.noteChanged([EntryChange(key: keys[0], value: .signed(4))], origin: .thisStore)
        store[.title] = "unnoticed"
        // The round gets as far as offering, and fails there.
        operations.fail(.write, with: ENOSPC) { $0.hasSuffix(".prefsync") }
        let error = #expect(throws: PreferencesError.self) { try sync.runRound(lookingAtEveryKey: false) }
        #expect(error?.code == .fileOperationFailed)
        operations.fail(.write, with: nil)
        // Nothing noticed since; the round looks at every key all the same, and finds the title.
        #expect(try sync.runRound(lookingAtEveryKey: false).sent.map(\.name) == ["title"])
        let laptop = try SyncDevice.joining(folder.url)
        #expect(laptop.store[.count] == 4)
        #expect(laptop.store[.title] == "unnoticed")
    }

    @Test func aNoticeThatComesAfterItsRoundSendsNothingBack() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice.joining(folder.url)
        let laptop = try SyncDevice.joining(folder.url)
        laptop.store[.title] = "the laptop's"
        try laptop.synchronize()
        try phone.synchronize()
        #expect(phone.store[.title] == "the laptop's")
        // An observer's notice of the title, delivered after the round that applied it.
        let title = ResolvedKey(namespace: "app", name: "title")
        phone.sync.noteChanged([EntryChange(key: title, value: .string("the laptop's"))], origin: .thisStore)
        #expect(try phone.sync.runRound(lookingAtEveryKey: false).sent.isEmpty)
        #expect(try phone.store.syncedVersion(of: title)?.device == laptop.sync.deviceID)
    }

    @Test func aRoundThatFailsToOfferRecordedItsVersionsAndTheNextOffersThem() throws {
        let folder = try TemporaryDirectory()
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        // An earlier version of the app synced the title only: the device's file is there.
        store[.title] = "earlier"
        try PreferencesSync(store: store, keys: [.title], folder: folder.url).synchronize()
        let operations = FileOperationLog()
        let keys = [PreferenceKeys.count].map { $0.resolvedKey(appNamespace: store.appNamespace) }
        let sync = try PreferencesSync(
            store: store, resolvedKeys: keys, folder: folder.url, fileSystem: operations.fileSystem)

        store[.count] = 8
        operations.fail(.write, with: ENOSPC) { $0.contains(".prefsync") }
        #expect(throws: PreferencesError.self) { try sync.synchronize() }
        #expect(try store.syncedVersion(of: keys[0])?.value == .signed(8))
        operations.fail(.write, with: nil)
        // A device's file half copied, which never verifies, holds back no key that has a version.
        try Data(SyncFile.header(generation: 7) + [1, 2, 3])
            .write(to: folder.url.appendingPathComponent("gone.prefsync"))
        let retry = try sync.synchronize()
        #expect(retry.sent.isEmpty)
        #expect(retry.problems.map(\.code) == [.damagedFile])
        let laptop = try SyncDevice.joining(folder.url)
        #expect(laptop.store[.count] == 8)
    }

    @Test func aHalfCopiedFileIsSkippedAndReportedUntilItVerifies() throws {
        let folder = try TemporaryDirectory()
        let elsewhere = try TemporaryDirectory()
        let phone = try SyncDevice(folder: elsewhere.url)
        let laptop = try SyncDevice(folder: folder.url)
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
        let phone = try SyncDevice(folder: folder.url)
        phone.store[.count] = 4
        try phone.synchronize()
        let url = folder.url.appendingPathComponent(phone.sync.deviceID + ".prefsync")
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 3] ^= 0xFF
        try bytes.write(to: url)

        let restarted = try SyncDevice(upgrading: phone, keys: [.count, .title, .nickname], folder: folder.url)
        let report = try restarted.synchronize()
        #expect(report.problems.map(\.code) == [.damagedFile])
        let laptop = try SyncDevice.joining(folder.url)
        #expect(laptop.store[.count] == 4)
    }

    @Test func renamingAKeyKeepsItsPlaceAmongTheOtherDevicesChanges() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice(folder: folder.url, keys: [.oldName])
        let laptop = try SyncDevice(folder: folder.url, keys: [.oldName])
        phone.store[.oldName] = 5
        try phone.synchronize()
        try laptop.synchronize()

        // The phone updates first: its rename moves the value and its place, and syncs the new name.
        try phone.store.runMigrations(MigrateName(from: .oldName, to: .newName))
        let newPhone = try SyncDevice(upgrading: phone, keys: [.newName], folder: folder.url)
        try newPhone.synchronize()
        // The laptop, still on the old version, changes the old name, which the phone no longer syncs.
        laptop.store[.oldName] = 7
        try laptop.synchronize()
        try newPhone.synchronize()
        #expect(newPhone.store[.newName] == 5)

        // Then the laptop updates: its later change, moved by its own rename, wins on both.
        try laptop.store.runMigrations(MigrateName(from: .oldName, to: .newName))
        let newLaptop = try SyncDevice(upgrading: laptop, keys: [.newName], folder: folder.url)
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
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice(folder: folder.url)
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
        let phone = try SyncDevice(folder: folder.url)
        let managed = try SyncDevice(folder: folder.url, overrides: [.managed(fileURL: settings)])
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

    @Test func stoppedSyncWatchesNothing() throws {
        let folder = try TemporaryDirectory()
        let phone = try SyncDevice(folder: folder.url)
        let laptop = try SyncDevice(folder: folder.url)
        try laptop.sync.start()
        phone.store[.count] = 1
        try phone.synchronize()
        #expect(eventually { laptop.store[.count] == 1 })
        laptop.sync.stop()
        #expect(!laptop.sync.isStarted)
        #expect(!laptop.store.changeHub.hasObservers)
        // A round asked for by hand still runs.
        phone.store[.count] = 2
        try phone.synchronize()
        try laptop.synchronize()
        #expect(laptop.store[.count] == 2)
    }

    @Test func aStartedSyncThatIsReleasedStops() throws {
        let folder = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: TemporaryDirectory().storeURL)
        var sync: PreferencesSync? = try PreferencesSync(store: store, keys: [.count], folder: folder.url)
        try sync?.start()
        weak let released = sync
        sync = nil
        #expect(eventually { released == nil })
        #expect(!store.changeHub.hasObservers)
    }

    @Test func problemsWhileStartedReachTheStoresErrors() throws {
        let folder = try TemporaryDirectory()
        let laptop = try SyncDevice(folder: folder.url)
        try laptop.sync.start()
        defer { laptop.sync.stop() }
        try Data("not a sync file at all, but long enough to have a header's room".utf8)
            .write(to: folder.url.appendingPathComponent("another-device.prefsync"))
        var reported: [PreferencesError] = []
        #expect(
            eventually {
                reported += laptop.store.errorChannel.takeBacklog()
                return !reported.isEmpty
            })
        // Once, or once more if a round read the file while it was being written.
        #expect(
            reported.allSatisfy { $0.code == .damagedFile && $0.filePath?.hasSuffix("another-device.prefsync") == true }
        )
    }
}
