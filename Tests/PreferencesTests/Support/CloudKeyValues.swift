import Foundation

@testable import Preferences

/// iCloud's key-value store as the sync tests need it, which Linux does not have: the one part of
/// the tests that is not the real thing.
///
/// Each device's store keeps its entries in memory, as Apple's does; ``deliver(uploading:)`` moves
/// what the devices wrote to the server, the last write to arrive winning as iCloud's does, then
/// gives every device the server's entries and tells each whose entries changed.
final class Cloud: @unchecked Sendable {
    // `@unchecked`: every property is touched only under `lock`.
    private let lock = NSLock()
    private var server: [String: Data] = [:]
    private var devices: [CloudDevice] = []

    /// A device signed in to this cloud, with no entries until the first delivery.
    func device() -> CloudDevice {
        let device = CloudDevice()
        lock.withLock { devices.append(device) }
        return device
    }

    /// Uploads what `order` wrote, device by device in that order (every device's, in the order
    /// they were made, by default), then gives every device the server's entries.
    func deliver(uploading order: [CloudDevice]? = nil) {
        let all = lock.withLock { devices }
        for device in order ?? all {
            for (name, data) in device.takeWrites() {
                lock.withLock { server[name] = data }
            }
        }
        let entries = lock.withLock { server }
        for device in all {
            device.receive(entries, as: .server)
        }
    }

    /// The user deletes the app's data in iCloud: every entry goes, on the server and every device.
    func eraseEverything() {
        let all = lock.withLock {
            server = [:]
            return devices
        }
        for device in all {
            _ = device.takeWrites()
            device.receive([:], as: .server, replacing: true)
        }
    }

    /// Another account signs in on `device`: its entries are now `entries`.
    func signInAnotherAccount(on device: CloudDevice, entries: [String: Data]) {
        _ = device.takeWrites()
        device.receive(entries, as: .accountChange, replacing: true)
    }
}

/// One device's view of the ``Cloud``: what `NSUbiquitousKeyValueStore` is on a device.
final class CloudDevice: SyncKeyValueStore, @unchecked Sendable {
    // `@unchecked`: every property is touched only under `lock`.
    private let lock = NSLock()
    private var entries: [String: Data] = [:]
    private var writes: [(String, Data?)] = []
    private var handlers: [Int: @Sendable (KeyValueStoreChange) -> Void] = [:]
    private var nextHandler = 0
    private(set) var synchronizeCount = 0

    func data(forKey key: String) -> Data? {
        lock.withLock { entries[key] }
    }

    func set(_ data: Data?, forKey key: String) {
        lock.withLock {
            entries[key] = data
            writes.append((key, data))
        }
    }

    var dictionaryRepresentation: [String: Any] {
        lock.withLock { entries }
    }

    func synchronize() -> Bool {
        lock.withLock { synchronizeCount += 1 }
        return true
    }

    func observeExternalChanges(_ handler: @escaping @Sendable (KeyValueStoreChange) -> Void) -> any SyncWatch {
        let id = lock.withLock {
            defer { nextHandler += 1 }
            handlers[nextHandler] = handler
            return nextHandler
        }
        return Stop { [weak self] in
            guard let self else { return }
            _ = self.lock.withLock { self.handlers.removeValue(forKey: id) }
        }
    }

    /// An entry another app, or another version of this one, keeps in the store.
    func setForeignEntry(_ data: Data, forKey key: String) {
        lock.withLock { entries[key] = data }
    }

    /// Tells the device's observers of a change iCloud reports.
    func post(_ change: KeyValueStoreChange) {
        for handler in lock.withLock({ Array(handlers.values) }) {
            handler(change)
        }
    }

    fileprivate func takeWrites() -> [(String, Data?)] {
        lock.withLock {
            defer { writes = [] }
            return writes
        }
    }

    fileprivate func receive(_ server: [String: Data], as change: KeyValueStoreChange, replacing: Bool = false) {
        let changed = lock.withLock {
            let before = entries
            if replacing {
                entries = server
            } else {
                entries.merge(server) { $1 }
            }
            return before != entries
        }
        if changed || change == .accountChange {
            post(change)
        }
    }

    private struct Stop: SyncWatch {
        let stop: @Sendable () -> Void
        func cancel() { stop() }
    }
}
