import Foundation

/// What ``PreferencesSync`` keeps in the store, beside the values it syncs, in a namespace reserved
/// for the library: committed with the values, so that a round killed part way leaves the store
/// and what it knows of the other devices in step.
///
/// - `device`: this store's device identifier, made by its first sync.
/// - `keys`: the keys the app last synced, as `namespace:name`: what `prefs sync` syncs.
/// - `joined`: present once a round has finished: from then on a value with no version synced is
///   a change made here, not one the store had before it ever synced.
/// - `namespace:name`, for each synced key: the ``SyncVersion`` the store holds, as data. A colon
///   is never part of a namespace or a key's name, so no key's entry can be named `device`, `keys`
///   or `joined`.
enum SyncState {
    static let namespace = "_preferences.sync"

    static let deviceKey = ResolvedKey(namespace: namespace, name: "device")
    static let keysKey = ResolvedKey(namespace: namespace, name: "keys")
    static let joinedKey = ResolvedKey(namespace: namespace, name: "joined")

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

    /// The version a stored entry holds; `nil` if it holds none that reads.
    static func version(in stored: StoredValue?) -> SyncVersion? {
        guard case .data(let data)? = stored else { return nil }
        let bytes = [UInt8](data)
        var reader = ByteReader(bytes, range: 0..<bytes.count)
        guard let version = try? SyncVersion(from: &reader), reader.isAtEnd else { return nil }
        return version
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
