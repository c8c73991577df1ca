import Foundation

@testable import Preferences

/// A device of the sync tests: a store of its own, syncing some keys through a shared folder, or
/// through a ``Cloud`` standing in for iCloud's key-value store.
struct SyncDevice {
    let directory: TemporaryDirectory
    let store: PreferencesStore
    let sync: PreferencesSync
    /// Its view of the cloud; `nil` for a device that syncs through a folder.
    let cloudValues: CloudDevice?

    static let keys: [PreferenceKeys] = [.count, .title, .nickname]

    init(folder: URL, keys: [PreferenceKeys] = Self.keys, overrides: [OverrideLayer] = []) throws {
        directory = try TemporaryDirectory()
        store = try PreferencesStore(fileURL: directory.storeURL, overrides: overrides)
        sync = try PreferencesSync(store: store, keys: keys, folder: folder)
        cloudValues = nil
    }

    init(cloud: Cloud, keys: [PreferenceKeys] = Self.keys) throws {
        directory = try TemporaryDirectory()
        store = try PreferencesStore(fileURL: directory.storeURL)
        let values = cloud.device()
        sync = try PreferencesSync(store: store, keys: keys, keyValueStore: values)
        cloudValues = values
    }

    /// The same store with another set of synced keys: a newer version of the app.
    init(upgrading device: SyncDevice, keys: [PreferenceKeys], folder: URL) throws {
        directory = device.directory
        store = device.store
        sync = try PreferencesSync(store: store, keys: keys, folder: folder)
        cloudValues = nil
    }

    /// A new device that has run its first round.
    static func joining(_ folder: URL) throws -> SyncDevice {
        let device = try SyncDevice(folder: folder)
        try device.synchronize()
        return device
    }

    /// Its view of the cloud, for a device made with one.
    var values: CloudDevice {
        guard let cloudValues else { preconditionFailure("a device that syncs through a folder has no cloud") }
        return cloudValues
    }

    @discardableResult
    func synchronize() throws -> SyncReport {
        try sync.synchronize()
    }
}
