import Foundation

/// What ``PreferencesSync`` keeps in the store, beside the values it syncs, in a namespace reserved
/// for the library: committed with the values, so that a round killed part way leaves the store
/// and what it knows of the other devices in step.
///
/// - `device`: this store's device identifier, made by its first sync.
/// - `keys`: the keys with no version that a round has looked at with nothing there left unread,
///   as `namespace:name`. For a key with no version and not in the list, a value is one the store
///   had before it synced the key, which takes the others' version if there is one; for a key in
///   it, such a value is a change made here. `prefs sync` syncs these keys and those with versions.
/// - `namespace:name`, for each key synced: the ``SyncVersion`` the store holds, as data. A colon
///   is never part of a namespace or a key's name, so no key's entry can be named `device` or
///   `keys`.
enum SyncState {
    static let namespace = "_preferences.sync"

    static let deviceKey = ResolvedKey(namespace: namespace, name: "device")
    static let keysKey = ResolvedKey(namespace: namespace, name: "keys")

    /// Where the version of `key` is kept.
    static func versionKey(for key: ResolvedKey) -> ResolvedKey {
        ResolvedKey(namespace: namespace, name: "\(key.namespace):\(key.name)")
    }

    /// The key a version entry stands for, if `name` names one.
    static func syncedKey(fromVersionName name: String) -> ResolvedKey? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        return ResolvedKey(namespace: String(name[..<colon]), name: String(name[name.index(after: colon)...]))
    }

    static func stored(_ version: SyncVersion) -> StoredValue {
        var writer = ByteWriter()
        version.write(to: &writer)
        return .data(Data(writer.bytes))
    }

    /// The version a version entry holds; `nil` if there is no entry.
    ///
    /// - Throws: Why an entry there does not read: only another program can write one so.
    static func version(in stored: StoredValue?, of key: ResolvedKey) throws(PreferencesError) -> SyncVersion? {
        guard let stored else { return nil }
        guard case .data(let data) = stored else {
            throw unreadable(key, "it holds \(withArticle(stored.kindDescription)), not data")
        }
        do throws(FormatError) {
            return try SyncVersion(filling: [UInt8](data))
        } catch {
            throw unreadable(key, "\(error)")
        }
    }

    private static func unreadable(_ key: ResolvedKey, _ reason: String) -> PreferencesError {
        PreferencesError(
            .unreadableSyncedVersion(
                place: "the store's entry '\(namespace):\(key.namespace):\(key.name)'", reason: reason))
    }

    static func stored(keys: [ResolvedKey]) -> StoredValue {
        .array(keys.map { .string("\($0.namespace):\($0.name)") })
    }

    /// The keys a `keys` entry lists.
    static func keys(in stored: StoredValue?) -> [ResolvedKey] {
        guard case .array(let items)? = stored else { return [] }
        return items.compactMap { item in
            guard case .string(let name) = item else { return nil }
            return syncedKey(fromVersionName: name)
        }
    }
}

extension PreferencesStore {
    /// The version the store holds of `key`; `nil` if it holds none.
    ///
    /// - Throws: Why the entry holding it does not read.
    func syncedVersion(of key: ResolvedKey) throws(PreferencesError) -> SyncVersion? {
        try SyncState.version(in: storedValue(at: SyncState.versionKey(for: key)), of: key)
    }

    /// Every version the store holds, of any key, and why those that do not read do not.
    func syncedVersions() -> (versions: [SyncFile.Entry], problems: [PreferencesError]) {
        var versions: [SyncFile.Entry] = []
        var problems: [PreferencesError] = []
        for (key, stored) in syncedVersionEntries() {
            do throws(PreferencesError) {
                if let version = try SyncState.version(in: stored, of: key) {
                    versions.append(SyncFile.Entry(key: key, version: version))
                }
            } catch {
                problems.append(error)
            }
        }
        return (versions, problems)
    }

    /// The keys the store holds versions of, read or not.
    func keysWithSyncedVersions() -> [ResolvedKey] {
        syncedVersionEntries().map(\.key)
    }

    /// Each version entry, by the key it is the version of, in order.
    private func syncedVersionEntries() -> [(key: ResolvedKey, stored: StoredValue)] {
        catchUpForRead()
        let entries = state.withLock { state in
            state.everySlot().compactMap { key, slot -> (ResolvedKey, StoredValue)? in
                guard key.namespace == SyncState.namespace, let stored = slot.stored else { return nil }
                return (key, stored)
            }
        }
        return entries.sorted { $0.0 < $1.0 }.compactMap { entry, stored in
            SyncState.syncedKey(fromVersionName: entry.name).map { ($0, stored) }
        }
    }
}

extension PreferencesTransaction {
    /// Moves what the store knows of the synced versions of `old` to `new`, as a rename moves its
    /// value: the value keeps its place among the other devices' versions (see <doc:Syncing>).
    mutating func moveSyncVersion(from old: ResolvedKey, to new: ResolvedKey) {
        let oldEntry = SyncState.versionKey(for: old)
        guard let version = storedValue(at: oldEntry) else { return }
        setStoredValue(version, at: SyncState.versionKey(for: new))
        setStoredValue(nil, at: oldEntry)
    }
}
