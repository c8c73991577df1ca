import Foundation

/// The backend of a store that sits on a `UserDefaults` suite, for interoperation with code that
/// reads the suite directly, such as `@AppStorage`.
///
/// A key in the global namespace is stored under its plain name; any other under
/// `namespace:name`. Direct types are stored natively; URLs, and on Linux dates, in a small
/// envelope (see ``PropertyListValue``); `Codable` values as JSON `Data`.
///
/// `UserDefaults` gives weaker promises than the file engine, and on Linux weaker still: a batch is
/// written key by key, not atomically; other processes' writes are not seen; a damaged suite file
/// is read as empty. This backend cannot change that; it only says so.
final class UserDefaultsBackend: UnsharedBackend, @unchecked Sendable {
    // `@unchecked` because `UserDefaults` is not marked `Sendable`, although Foundation documents it
    // as thread-safe; this backend also only touches it with the store's write lock held.
    let location: String
    private let defaults: UserDefaults

    private init(location: String, defaults: UserDefaults) {
        self.location = location
        self.defaults = defaults
    }

    /// Opens a suite, and reads what it holds as stored entries.
    ///
    /// - Returns: The backend, and the suite's values as entries; values no stored entry can be made
    ///   of are left out, and named in the problems.
    static func open(suiteName: String?) -> (UserDefaultsBackend, [StorageKey: StoredValue], [PreferencesError]) {
        let defaults = suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
        let domain = domainName(suiteName: suiteName)
        let location = "UserDefaults suite '\(domain)'"
        var entries: [StorageKey: StoredValue] = [:]
        var problems: [PreferencesError] = []
        for (name, object) in defaults.persistentDomain(forName: domain) ?? [:] {
            let key = storageKey(forName: name)
            if let value = PropertyListValue.candidates(for: object).first {
                entries[key] = value
            } else {
                problems.append(
                    PreferencesError(
                        .storeUnavailable(
                            path: location,
                            reason: "its value '\(name)', a \(type(of: object)), cannot be read and was left as it is."
                        )
                    )
                )
            }
        }
        return (UserDefaultsBackend(location: location, defaults: defaults), entries, problems)
    }

    /// The name of the persistent domain a suite's own values are kept in: the suite's name, or for
    /// the standard defaults the bundle identifier (on Linux, where there is none, the process name).
    static func domainName(suiteName: String?) -> String {
        suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    }

    /// The stored key for a name in the suite: `namespace:name`, or a plain name in the global namespace.
    static func storageKey(forName name: String) -> StorageKey {
        guard let separator = name.firstIndex(of: KeyValidation.separator) else {
            return StorageKey(namespace: "", name: name)
        }
        return StorageKey(namespace: String(name[..<separator]), name: String(name[name.index(after: separator)...]))
    }

    static func name(for key: StorageKey) -> String {
        key.namespace.isEmpty ? key.name : "\(key.namespace)\(KeyValidation.separator)\(key.name)"
    }

    func commit(_ record: Record, flushesToDisk: Bool) throws(PreferencesError) -> BackendUpdate {
        for change in record.changes {
            let name = Self.name(for: change.key)
            if let value = change.value {
                defaults.set(PropertyListValue.object(for: value), forKey: name)
            } else {
                defaults.removeObject(forKey: name)
            }
        }
        // On Linux nothing reaches the disk without it; on Apple platforms it is a no-op.
        guard defaults.synchronize() else {
            throw PreferencesError(.storeUnavailable(path: location, reason: "UserDefaults could not save the suite."))
        }
        return BackendUpdate(commitCount: 0)
    }

    func flush() throws(PreferencesError) {
        guard defaults.synchronize() else {
            throw PreferencesError(.storeUnavailable(path: location, reason: "UserDefaults could not save the suite."))
        }
    }
}
