import Dispatch
import Foundation

/// Sync through iCloud's key-value store: one entry per synced key, named `namespace:name`,
/// holding the key's latest version.
///
/// iCloud keeps one value per entry, the one it received last, which may be an older version
/// than one a device wrote before it: the latest version of a key is what its entry holds now,
/// and a device holding a newer one offers it again.
///
/// Apple's limits are checked before a write: an entry's name of at most 64 bytes, at most
/// 1,024 entries, and a megabyte in all (counted here as a million bytes, names included). A
/// version that would break one is not written, and the round reports it
/// (``PreferencesError/Code/syncLimitExceeded``); it is offered again at later rounds, and
/// reported each time. What iCloud says of the store (``KeyValueStoreChange``) is taken in at the
/// next round: an account change makes it a first round again.
final class KeyValueSyncTransport: SyncTransport {
    static let maximumNameBytes = 64
    static let maximumEntries = 1024
    static let maximumBytes = 1_000_000
    /// What an entry's value begins with: the version of this format.
    private static let formatVersion: UInt8 = 1

    private let store: any SyncKeyValueStore
    private let keys: [ResolvedKey]
    /// The version each entry held when last read or written, and the bytes it was read from.
    private var latest: [ResolvedKey: (version: SyncVersion, data: Data)] = [:]
    /// The entries that did not read, as they were then: reported once each.
    private var unreadable: [ResolvedKey: Data] = [:]
    /// What iCloud said since the last read, and whom to tell that it said something.
    private let reported = Locked(Reported())
    private var externalChanges: (any SyncWatch)?

    private struct Reported {
        var quotaViolated = false
        var accountChanged = false
        var onChange: (@Sendable () -> Void)?
    }

    init(store: any SyncKeyValueStore, keys: [ResolvedKey]) {
        self.store = store
        self.keys = keys
        let reported = reported
        externalChanges = store.observeExternalChanges { change in
            let onChange = reported.withLock { reported in
                switch change {
                case .server, .initialSync: break
                case .quotaViolation: reported.quotaViolated = true
                case .accountChange: reported.accountChanged = true
                }
                return reported.onChange
            }
            onChange?()
        }
        store.synchronize()
    }

    deinit {
        externalChanges?.cancel()
    }

    /// The entry's name for `key`.
    static func entryName(of key: ResolvedKey) -> String {
        "\(key.namespace):\(key.name)"
    }

    func version(of key: ResolvedKey) -> SyncVersion? {
        latest[key]?.version
    }

    func readChanges() throws(PreferencesError) -> SyncArrivals {
        var arrivals = SyncArrivals()
        let (quotaViolated, accountChanged) = reported.withLock { reported in
            defer {
                reported.quotaViolated = false
                reported.accountChanged = false
            }
            return (reported.quotaViolated, reported.accountChanged)
        }
        if accountChanged {
            latest = [:]
            arrivals.startsOver = true
        }
        if quotaViolated {
            arrivals.problems.append(
                PreferencesError(
                    .syncLimitExceeded(
                        key: nil,
                        reason:
                            "iCloud reported that the app's key-value store is over its quota (1,024 entries, a megabyte "
                            + "in all), so changes this device wrote since may not reach the others until they are "
                            + "made again")))
        }
        // Every key each round: the store is a dictionary in memory, and a change iCloud delivered
        // while nothing watched raised no notification this transport saw.
        for key in keys {
            let data = store.data(forKey: Self.entryName(of: key))
            guard data != latest[key]?.data else { continue }
            guard let data else {
                // Gone (the user deleted the app's iCloud data): what the store holds is offered again.
                latest[key] = nil
                unreadable[key] = nil
                arrivals.changedKeys.insert(key)
                continue
            }
            let version: SyncVersion
            do throws(FormatError) {
                version = try Self.version(in: data)
            } catch {
                // Skipped until it changes, and left as it is: a newer version of the library may
                // have written it. Reported once.
                arrivals.skippedKeys.insert(key)
                if unreadable[key] != data {
                    unreadable[key] = data
                    let reason =
                        switch error {
                        case .malformed(let what, _):
                            "its \(data.count) bytes do not read as a synced version (\(what))"
                        case .truncated: "its \(data.count) bytes end before a synced version does"
                        }
                    arrivals.problems.append(
                        PreferencesError(
                            .unreadableSyncedVersion(
                                place: "iCloud's key-value store, entry '\(Self.entryName(of: key))'", reason: reason)))
                }
                continue
            }
            unreadable[key] = nil
            latest[key] = (version, data)
            arrivals.latestStamp = max(arrivals.latestStamp, version.stamp)
            arrivals.changedKeys.insert(key)
        }
        return arrivals
    }

    func offer(_ offered: [SyncFile.Entry], held: () -> [SyncFile.Entry]) throws(PreferencesError)
        -> [PreferencesError]
    {
        guard !offered.isEmpty else { return [] }
        var usage = Usage(store.dictionaryRepresentation)
        var refused: [PreferencesError] = []
        for entry in offered {
            let name = Self.entryName(of: entry.key)
            if let unreadable = unreadable[entry.key], store.data(forKey: name) == unreadable {
                // Left as it is, as reported when read: a newer version of the library may have
                // written it, and the version here may be older.
                continue
            }
            let data = Self.data(of: entry.version)
            if let reason = usage.refusal(writing: data.count, at: name) {
                refused.append(
                    PreferencesError(.syncLimitExceeded(key: nil, reason: "'\(name)' was not written: \(reason)")))
                continue
            }
            store.set(data, forKey: name)
            usage.record(writing: data.count, at: name)
            latest[entry.key] = (entry.version, data)
        }
        store.synchronize()
        return refused
    }

    func watch(on queue: DispatchQueue, _ onChange: @escaping @Sendable () -> Void) throws(PreferencesError)
        -> any SyncWatch
    {
        reported.withLock { $0.onChange = onChange }
        return StopsReporting(reported: reported)
    }

    private struct StopsReporting: SyncWatch {
        let reported: Locked<Reported>

        func cancel() {
            reported.withLock { $0.onChange = nil }
        }
    }

    private static func data(of version: SyncVersion) -> Data {
        var writer = ByteWriter()
        writer.append(formatVersion)
        version.write(to: &writer)
        return Data(writer.bytes)
    }

    /// The version an entry holds.
    private static func version(in data: Data) throws(FormatError) -> SyncVersion {
        let bytes = [UInt8](data)
        guard let first = bytes.first else { throw .truncated(at: 0) }
        guard first == formatVersion else { throw .malformed("format version \(first)", at: 0) }
        return try SyncVersion(filling: bytes, from: 1)
    }

    /// How much of Apple's limits the store's entries take.
    private struct Usage {
        private var sizes: [String: Int]
        private var total: Int

        init(_ entries: [String: Any]) {
            sizes = entries.mapValues(Self.size(of:))
            total = sizes.reduce(0) { $0 + $1.key.utf8.count + $1.value }
        }

        /// Why writing `byteCount` bytes at `name` would break a limit; `nil` if it would not.
        func refusal(writing byteCount: Int, at name: String) -> String? {
            let nameBytes = name.utf8.count
            if nameBytes > KeyValueSyncTransport.maximumNameBytes {
                return "its name is \(nameBytes) bytes, and iCloud's key-value store takes names of at most "
                    + "\(KeyValueSyncTransport.maximumNameBytes)"
            }
            let existing = sizes[name]
            if existing == nil && sizes.count >= KeyValueSyncTransport.maximumEntries {
                return "the key-value store holds \(sizes.count) entries, its most"
            }
            let newTotal = total - (existing.map { $0 + nameBytes } ?? 0) + nameBytes + byteCount
            if newTotal > KeyValueSyncTransport.maximumBytes {
                return "the key-value store would hold \(newTotal) bytes, more than its megabyte"
            }
            return nil
        }

        mutating func record(writing byteCount: Int, at name: String) {
            total += byteCount - (sizes[name] ?? -name.utf8.count)
            sizes[name] = byteCount
        }

        /// The bytes a value takes, as near as can be told without the format iCloud keeps it in:
        /// a property list's binary encoding for what is neither data nor a string.
        private static func size(of value: Any) -> Int {
            switch value {
            case let data as Data: return data.count
            case let string as String: return string.utf8.count
            default:
                let encoded = try? PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
                // What is not a property list is nothing iCloud's store can hold; counted at its description.
                return encoded?.count ?? "\(value)".utf8.count
            }
        }
    }
}
