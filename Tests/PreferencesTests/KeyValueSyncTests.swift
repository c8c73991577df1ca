import Foundation
import Testing

@testable import Preferences

extension PreferenceKeys {
    fileprivate static let longName = PreferenceKey<Int>(
        String(repeating: "n", count: 70), default: 0, in: .custom("com.example"))
}

/// Sync through iCloud's key-value store: what wins when iCloud keeps an older version, Apple's
/// limits checked before a write, and each change iCloud reports.
@Suite struct KeyValueSyncTests {
    @Test func aChangeReachesTheOtherDeviceThroughItsEntry() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        let laptop = try SyncDevice(cloud: cloud)
        phone.store[.count] = 7
        #expect(try phone.synchronize().sent.map(\.name) == ["count"])
        #expect(phone.values.dictionaryRepresentation.keys.sorted() == ["app:count"])
        cloud.deliver()

        let report = try laptop.synchronize()
        #expect(report.received.map(\.name) == ["count"])
        #expect(laptop.store[.count] == 7)
        #expect(try laptop.store.history(for: .count).map(\.cause) == [.sync(device: phone.sync.deviceID)])
        #expect(laptop.sync.folder == nil)
        // Nothing goes back.
        #expect(try laptop.synchronize().sent.isEmpty)
    }

    @Test func aNewerVersionWinsEvenWhenICloudKeepsAnOlderOneLast() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        let laptop = try SyncDevice(cloud: cloud)
        try phone.synchronize()
        try laptop.synchronize()
        phone.store[.count] = 1
        try phone.synchronize()
        // Later by a few milliseconds: changes are stamped by the millisecond.
        Thread.sleep(forTimeInterval: 0.003)
        laptop.store[.count] = 2
        try laptop.synchronize()
        // The laptop's later change reaches iCloud first, the phone's earlier one last, and stays.
        cloud.deliver(uploading: [laptop.values, phone.values])
        #expect(laptop.values.data(forKey: "app:count") == phone.values.data(forKey: "app:count"))

        try laptop.synchronize()  // finds an older version in the entry, and writes its own again
        cloud.deliver()
        try phone.synchronize()
        try laptop.synchronize()
        #expect(phone.store[.count] == 2)
        #expect(laptop.store[.count] == 2)
    }

    @Test func aKeyWhoseEntryNameIsTooLongCannotSync() throws {
        let cloud = Cloud()
        let store = try PreferencesStore(fileURL: TemporaryDirectory().storeURL)
        #expect {
            try PreferencesSync(store: store, keys: [.count, .longName], keyValueStore: cloud.device())
        } throws: { error in
            let error = error as? PreferencesError
            return error?.code == .notSyncable && error?.key?.namespace == .custom("com.example")
                && error?.description.contains("64") == true
        }
    }

    @Test func aWriteThatWouldBreakALimitIsRefusedReportedAndOfferedAgainOnceItFits() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        // The app keeps 1,023 entries of its own, and a large one.
        for index in 0..<1023 {
            phone.values.setForeignEntry(Data([1]), forKey: "other-\(index)")
        }
        phone.store[.count] = 1
        phone.store[.title] = "one too many"
        let report = try phone.synchronize()
        #expect(report.problems.map(\.code) == [.syncLimitExceeded])
        #expect(report.problems.first?.description.contains("'app:title' was not written") == true)
        #expect(phone.values.data(forKey: "app:count") != nil)
        #expect(phone.values.data(forKey: "app:title") == nil)
        // Still on the device, and refused again at the next round that offers it.
        #expect(phone.store[.title] == "one too many")
        #expect(try phone.synchronize().problems.map(\.code) == [.syncLimitExceeded])

        let big = try SyncDevice(cloud: cloud)
        big.values.setForeignEntry(Data(count: 999_990), forKey: "big")
        big.store[.count] = 5
        let bigReport = try big.synchronize()
        #expect(bigReport.problems.map(\.code) == [.syncLimitExceeded])
        #expect(bigReport.problems.first?.description.contains("megabyte") == true)
    }

    @Test func iCloudsQuotaViolationIsReported() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        try phone.synchronize()
        phone.values.post(.quotaViolation)
        let report = try phone.synchronize()
        #expect(report.problems.map(\.code) == [.syncLimitExceeded])
        #expect(report.problems.first?.description.contains("over its quota") == true)
        #expect(try phone.synchronize().problems.isEmpty)
    }

    @Test func afterAnAccountChangeTheAccountsValuesWinAndItGetsTheOthers() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        phone.store[.count] = 5
        phone.store[.title] = "mine"
        try phone.synchronize()

        // Another account, whose store has a count an older device wrote long ago, and no title.
        let otherCloud = Cloud()
        let other = try SyncDevice(cloud: otherCloud)
        other.store[.count] = 9
        try other.synchronize()
        let entries = ["app:count": try #require(other.values.data(forKey: "app:count"))]
        cloud.signInAnotherAccount(on: phone.values, entries: entries)

        let report = try phone.synchronize()
        #expect(phone.store[.count] == 9)
        #expect(report.received.map(\.name) == ["count"])
        #expect(report.sent.map(\.name) == ["title"])
        #expect(phone.values.data(forKey: "app:title") != nil)
    }

    @Test func anEntryThatDoesNotReadIsReportedOnceSkippedAndLeftAsItIs() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        phone.store[.count] = 3
        try phone.synchronize()
        phone.values.setForeignEntry(Data([9, 9, 9]), forKey: "app:count")
        let report = try phone.synchronize()
        #expect(report.problems.map(\.code) == [.damagedFile])
        #expect(report.problems.first?.description.contains("'app:count'") == true)
        #expect(report.problems.first?.description.contains("format version 9") == true)
        #expect(phone.store[.count] == 3)
        #expect(try phone.synchronize().problems.isEmpty)
        #expect(phone.values.data(forKey: "app:count") == Data([9, 9, 9]))
    }

    @Test func anEntryThatDoesNotReadIsNotWrittenOverByADeviceThatStartsAgain() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        phone.store[.count] = 3
        try phone.synchronize()
        // A newer version of the library, on another device, wrote the entry.
        let newer = Data([2, 1, 2, 3])
        phone.values.setForeignEntry(newer, forKey: "app:count")
        let restarted = try PreferencesSync(store: phone.store, keys: [.count], keyValueStore: phone.values)
        let report = try restarted.synchronize()
        #expect(report.problems.map(\.code) == [.damagedFile])
        #expect(phone.values.data(forKey: "app:count") == newer)
        phone.store[.count] = 4
        try restarted.synchronize()
        #expect(phone.values.data(forKey: "app:count") == newer)
    }

    @Test func anEntryThatDoesNotReadHoldsBackOnlyItsOwnKey() throws {
        let cloud = Cloud()
        let tablet = try SyncDevice(cloud: cloud)
        tablet.values.setForeignEntry(Data([2, 0]), forKey: "app:count")
        tablet.store[.count] = 1
        tablet.store[.title] = "the tablet's"
        let report = try tablet.synchronize()
        // The count may be in the entry that does not read: it waits. The title is offered.
        #expect(report.sent.map(\.name) == ["title"])
        #expect(tablet.values.data(forKey: "app:count") == Data([2, 0]))
        #expect(tablet.values.synchronizeCount >= 2)
    }

    @Test func entriesDeletedInICloudAreWrittenAgainFromTheStore() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        phone.store[.count] = 6
        try phone.synchronize()
        cloud.deliver()
        try phone.sync.start()
        defer { phone.sync.stop() }
        cloud.eraseEverything()
        let deadline = Date().addingTimeInterval(10)
        while phone.values.data(forKey: "app:count") == nil && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        let laptop = try SyncDevice(cloud: cloud)
        cloud.deliver()
        try laptop.synchronize()
        #expect(laptop.store[.count] == 6)
    }

    @Test func startedSyncAppliesWhatICloudDelivers() throws {
        let cloud = Cloud()
        let phone = try SyncDevice(cloud: cloud)
        let laptop = try SyncDevice(cloud: cloud)
        try laptop.sync.start()
        defer { laptop.sync.stop() }
        phone.store[.nickname] = "from the phone"
        try phone.synchronize()
        cloud.deliver()
        let deadline = Date().addingTimeInterval(10)
        while laptop.store[.nickname] != "from the phone" && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        #expect(laptop.store[.nickname] == "from the phone")
        // The laptop's change, written to its entry as soon as it is made.
        laptop.store[.title] = "from the laptop"
        while laptop.values.data(forKey: "app:title") == nil && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.002)
        }
        cloud.deliver()
        try phone.synchronize()
        #expect(phone.store[.title] == "from the laptop")
    }
}
