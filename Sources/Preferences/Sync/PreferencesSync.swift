public import Foundation

/// Keeps chosen keys of a store the same on every device of a user, through a shared folder or
/// iCloud's key-value store.
///
/// ```swift
/// let sync = try PreferencesSync(store: store, keys: [.theme, .fontSize], folder: sharedFolder)
/// try sync.start()   // a round now, then one whenever a synced key or what the others wrote changes
/// ```
///
/// Through a folder, each device appends its changes to a file of its own, and reads the other
/// devices' files: the program that moves the folder between devices (iCloud Drive, Dropbox,
/// Syncthing, a network home folder) never sees two devices change one file. On Apple platforms,
/// `PreferencesSync(store:keys:iCloud:)` syncs through `NSUbiquitousKeyValueStore` instead, one
/// entry per key.
///
/// Each change is stamped with a hybrid logical clock, from when it was committed, and the device
/// that made it; for each key the latest change wins on every device, a removal as much as a
/// write. A change that arrives is committed through the store like any other, with the origin
/// ``ChangeOrigin/sync(device:)``: observers, the Observation framework and the history see it.
///
/// Only the keys given sync. A key the store has never synced takes the other devices' version
/// before offering its own, so that a new device, or an update that syncs one more key, cannot
/// overwrite what the user chose elsewhere; no round offers a value the store only has by
/// default. A key a managed setting forces is left alone while it is forced. See <doc:Syncing>.
///
/// Several processes of one device may sync the same store: a round runs with the store's writers
/// locked out, everywhere.
public final class PreferencesSync: Sendable {
    /// The store whose keys sync.
    public let store: PreferencesStore

    /// The folder the devices share; `nil` when they sync through iCloud's key-value store.
    public let folder: URL?

    /// This store's device identifier: made by the store's first sync, and kept in the store.
    ///
    /// Each device's file in the folder is named after it; ``ChangeOrigin/sync(device:)`` and
    /// ``HistoryCause/sync(device:)`` name the device a change came from by it.
    public let deviceID: String

    /// The keys that sync, as the store stores them, in order.
    let keys: [ResolvedKey]
    let keySet: Set<ResolvedKey>

    /// What a session keeps between rounds.
    struct Session {
        var transport: any SyncTransport
        var clock = HybridClock()
        /// Keys to look at in the next round, changed in the store or no longer forced; `nil` until a
        /// round looked at them all.
        var changedKeys: Set<ResolvedKey>?
        /// When this process changed each key since the last round, in milliseconds since 1970.
        ///
        /// As the watcher saw it: what a change made here is stamped with. Another process's
        /// change reaches this one later, and its time is the history's.
        var noticedTimes: [ResolvedKey: Int64] = [:]
    }

    let session: Locked<Session>
    let watching = Locked<SyncWatcher?>(nil)

    /// Prepares to sync `keys` of `store` through `folder`, giving the store a device identifier if
    /// it has none.
    ///
    /// Nothing is read from or written to the folder until the first round.
    ///
    /// - Parameters:
    ///   - store: The store whose keys sync.
    ///   - keys: The keys that sync; no others do.
    ///   - folder: A folder every device can reach, created if missing.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/notSyncable`` for a key
    ///   declared ``PreferenceKey/withoutHistory()`` (what is kept out of the history is kept on
    ///   the device), or the error that kept the device identifier from being stored.
    public convenience init(store: PreferencesStore, keys: [PreferenceKeys], folder: URL) throws {
        try self.init(store: store, resolvedKeys: Self.resolved(keys, in: store), folder: folder)
    }

    /// Prepares to sync `keys` of `store` through `keyValueStore`: iCloud's, or a test's.
    convenience init(store: PreferencesStore, keys: [PreferenceKeys], keyValueStore: any SyncKeyValueStore) throws {
        let resolved = try Self.resolved(keys, in: store)
        for key in resolved {
            let name = KeyValueSyncTransport.entryName(of: key)
            guard name.utf8.count <= KeyValueSyncTransport.maximumNameBytes else {
                throw PreferencesError(
                    .notSyncable(
                        key: store.storedKey(for: key),
                        reason:
                            "its entry in iCloud's key-value store, '\(name)', would be named with \(name.utf8.count) "
                            + "bytes, and iCloud takes at most \(KeyValueSyncTransport.maximumNameBytes)"))
            }
        }
        try self.init(store: store, resolvedKeys: resolved, folder: nil) { _, keys in
            KeyValueSyncTransport(store: keyValueStore, keys: keys)
        }
    }

    /// The keys as `store` stores them.
    ///
    /// - Throws: ``PreferencesError/Code/notSyncable`` for a key declared without history.
    private static func resolved(_ keys: [PreferenceKeys], in store: PreferencesStore) throws -> [ResolvedKey] {
        try keys.map { key in
            let place = key.resolvedKey(appNamespace: store.appNamespace)
            if place.keepsNoHistory {
                throw PreferencesError(
                    .notSyncable(
                        key: store.storedKey(for: place),
                        reason:
                            "it is declared withoutHistory(), and what is kept out of the history stays on the device"
                    ))
            }
            return place
        }
    }

    /// Prepares to sync `keys` of `store` through `folder`, reached through `fileSystem`.
    convenience init(
        store: PreferencesStore,
        resolvedKeys keys: [ResolvedKey],
        folder: URL,
        fileSystem: FileSystem = FileSystem()
    ) throws {
        try self.init(store: store, resolvedKeys: keys, folder: folder) { device, keys in
            SyncFolder(
                path: folder.path, device: device, keyCount: keys.count, ownedLike: store.backend.location,
                fileSystem: fileSystem)
        }
    }

    /// Prepares to sync the keys the store has synced: what `prefs sync` does.
    package convenience init(syncingRecordedKeysOf store: PreferencesStore, folder: URL) throws {
        let keys =
            SyncState.keys(in: store.storedValue(at: SyncState.keysKey)) + store.syncedVersions().versions.map(\.key)
        guard !keys.isEmpty else {
            throw PreferencesError(
                .notSyncable(key: nil, reason: "this store has never synced, so it records no keys to sync"))
        }
        try self.init(store: store, resolvedKeys: keys, folder: folder)
    }

    /// Prepares to sync `keys` of `store` through what `makeTransport` makes, given the device
    /// identifier and the keys; `folder` is the folder it syncs through, if it does.
    init(
        store: PreferencesStore,
        resolvedKeys: [ResolvedKey],
        folder: URL?,
        makeTransport: (_ device: String, _ keys: [ResolvedKey]) -> any SyncTransport
    ) throws {
        let keys = Array(Set(resolvedKeys)).sorted()
        let device = try store.withWriteLock {
            try store.withExclusiveAccess { () throws -> String in
                var changes: [PendingChange] = []
                var device: String
                if case .string(let stored)? = store.storedValue(at: SyncState.deviceKey),
                    SyncFile.isDeviceIdentifier(stored)
                {
                    device = stored
                } else {
                    device = UUID().uuidString
                    changes.append(PendingChange(key: SyncState.deviceKey, value: .string(device), valueType: nil))
                }
                if !changes.isEmpty {
                    try store.commit(changes)
                }
                return device
            }
        }
        self.store = store
        self.folder = folder
        self.keys = keys
        keySet = Set(keys)
        deviceID = device
        session = Locked(Session(transport: makeTransport(device, keys)))
    }

    deinit {
        watching.withLock { $0 }?.stop()
    }

    /// Runs one round now: reads what the other devices changed, applies the changes that win, and
    /// offers this device's.
    ///
    /// - Returns: What the round received and sent, and what it skipped.
    /// - Throws: A ``PreferencesError`` if the folder, iCloud's key-value store or the store could
    ///   not be read or written. What a round committed before it failed stays, and the next round
    ///   looks at every key again and finishes the rest.
    @discardableResult
    public func synchronize() throws -> SyncReport {
        try runRound(lookingAtEveryKey: true)
    }

    /// Syncs from now on.
    ///
    /// A round now, then one whenever a synced key changes in the store, in any process, or what
    /// the other devices wrote changes. Problems are reported through the store's
    /// ``PreferencesStore/errors``; a round that fails is tried again, looking at every key, at the
    /// next change.
    ///
    /// A folder is watched with the platform's file events (inotify on Linux, Dispatch sources on
    /// Apple platforms), iCloud's key-value store with its notification; nothing polls. Calling it
    /// again while syncing does nothing.
    ///
    /// - Throws: A ``PreferencesError`` if the folder cannot be watched, or the first round fails.
    public func start() throws {
        let watcher = watching.withLock { (watcher: inout SyncWatcher?) -> SyncWatcher? in
            guard watcher == nil else { return nil }
            watcher = SyncWatcher(sync: self)
            return watcher
        }
        guard let watcher else { return }
        do {
            // Watching first: a change made during the first round asks for another.
            try watcher.run()
            try synchronize()
        } catch {
            stop()
            throw error
        }
    }

    /// Stops syncing.
    ///
    /// A round under way finishes first, so do not call it inside a transaction of the store, which
    /// the round would wait for. The store and what the others wrote keep what was synced. Called
    /// when the sync is released.
    public func stop() {
        watching.withLock { watcher in
            defer { watcher = nil }
            return watcher
        }?.stop()
    }

    /// Whether ``start()`` was called, and ``stop()`` not since.
    var isStarted: Bool {
        watching.withLock { $0 != nil }
    }

    /// What the store has changed since the last round, for the next round to look at, and when,
    /// for a change this process made.
    ///
    /// Whether a key changed here is the round's to tell, from its value and the version synced: a
    /// notice may come after a round that already took the change in.
    func noteChanged(_ changes: [EntryChange], origin: ChangeOrigin) {
        let now = origin == .thisStore ? CommitStamp.now() : nil
        session.withLock { session in
            for change in changes {
                session.changedKeys?.insert(change.key)
                if let now {
                    session.noticedTimes[change.key] = now
                }
            }
        }
    }
}
