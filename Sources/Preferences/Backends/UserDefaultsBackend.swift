import Foundation

/// The backend of a store that sits on a `UserDefaults` suite, for interoperation with code that
/// reads and writes the suite directly, such as `@AppStorage`.
///
/// A key in the global namespace is stored under its plain name; any other under
/// `namespace:name`. Direct types are stored natively; URLs, and on Linux dates, in a small
/// envelope (see ``PropertyListValue``); `Codable` values as JSON `Data`.
///
/// Writes made to the suite by other code reach the store when `UserDefaults` says so, with
/// `UserDefaults.didChangeNotification`: the next read reads the suite again, and observers hear of
/// it. Apple platforms post it for every change in the process; Foundation on Linux posts none.
///
/// `UserDefaults` gives weaker promises than the file engine, and on Linux weaker still: a batch is
/// written key by key, not atomically; other processes' writes are not seen; a damaged suite file
/// is read as empty. This backend cannot change that; it only says so.
final class UserDefaultsBackend: PreferencesBackend, @unchecked Sendable {
    // `@unchecked` because `UserDefaults` is not marked `Sendable`, although Foundation documents it
    // as thread-safe, and because of `observer`, set once in `init` and only read in `deinit`.
    let location: String
    private let defaults: UserDefaults
    private let domain: String
    /// The suite's values as the store knows them.
    ///
    /// A catch-up reads the suite and tells the store what differs. Held while committing, so that
    /// no catch-up sees a batch half written.
    private let known: Locked<[ResolvedKey: StoredValue]>
    private let notifications = Locked(Notifications())
    private var observer: (any NSObjectProtocol)?

    private struct Notifications {
        /// How many change notifications arrived: the backend's commit count.
        var count: UInt64 = 0
        /// Set while this backend writes, whose own notifications tell the store nothing.
        var isCommitting = false
        var onChange: (@Sendable () -> Void)?
    }

    private init(location: String, defaults: UserDefaults, domain: String, entries: [ResolvedKey: StoredValue]) {
        self.location = location
        self.defaults = defaults
        self.domain = domain
        known = Locked(entries)
        // Any `UserDefaults` object: code that writes the suite often makes an object of its own.
        observer = NotificationCenter.default.addObserver(
            forName: UserDefaults.didChangeNotification,
            object: nil,
            queue: nil
        ) { [notifications] _ in
            let onChange = notifications.withLock { state -> (@Sendable () -> Void)? in
                guard !state.isCommitting else { return nil }
                state.count &+= 1
                return state.onChange
            }
            // Later, on another thread: the notification may come in the middle of someone's write.
            if let onChange {
                DispatchQueue.global(qos: .utility).async(execute: onChange)
            }
        }
    }

    deinit {
        if let observer {
            NotificationCenter.default.removeObserver(observer)
        }
    }

    /// Opens a suite, and reads what it holds as stored entries.
    ///
    /// - Returns: The backend, and the suite's values as entries; values no stored entry can be made
    ///   of are left out, and named in the problems.
    static func open(suiteName: String?) -> (UserDefaultsBackend, [ResolvedKey: StoredValue], [PreferencesError]) {
        let defaults = suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
        let domain = domainName(suiteName: suiteName)
        let location = "UserDefaults suite '\(domain)'"
        let (entries, problems) = read(defaults, domain: domain, location: location)
        let backend = UserDefaultsBackend(location: location, defaults: defaults, domain: domain, entries: entries)
        return (backend, entries, problems)
    }

    /// The suite's values as stored entries, and a problem for each value none can be made of.
    private static func read(
        _ defaults: UserDefaults,
        domain: String,
        location: String
    ) -> ([ResolvedKey: StoredValue], [PreferencesError]) {
        var entries: [ResolvedKey: StoredValue] = [:]
        var problems: [PreferencesError] = []
        for (name, object) in defaults.persistentDomain(forName: domain) ?? [:] {
            if let value = PropertyListValue.candidates(for: object).first {
                entries[resolvedKey(forName: name)] = value
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
        return (entries, problems)
    }

    var commitCount: UInt64 {
        notifications.withLock { $0.count }
    }

    /// Nothing wakes for other processes: `UserDefaults` tells only of changes in this one.
    func makeCommitWatcher() -> CommitWatcher? { nil }

    func onChangesElsewhere(_ handler: @escaping @Sendable () -> Void) {
        notifications.withLock { $0.onChange = handler }
    }

    func catchUp(_ apply: (BackendUpdate) -> Void) throws(PreferencesError) {
        let count = commitCount
        known.withLock { known in
            // Values no entry can be made of stay out, as they did when the store opened and
            // reported them.
            let (current, _) = Self.read(defaults, domain: domain, location: location)
            let changes = EntryChange.differences(from: known, to: current)
            known = current
            apply(BackendUpdate(records: changes.isEmpty ? [] : [Record(changes: changes)], commitCount: count))
        }
    }

    func catchUpWithoutWaiting(_ apply: (BackendUpdate) -> Void) -> Bool {
        try? catchUp(apply)
        return true
    }

    func withExclusiveAccess<Result>(_ apply: (BackendUpdate) -> Void, _ body: () throws -> Result) throws -> Result {
        try catchUp(apply)
        return try body()
    }

    /// The name of the persistent domain a suite's own values are kept in: the suite's name, or for
    /// the standard defaults the bundle identifier (on Linux, where there is none, the process name).
    static func domainName(suiteName: String?) -> String {
        suiteName ?? Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    }

    /// The stored key for a name in the suite: `namespace:name`, or a plain name in the global namespace.
    static func resolvedKey(forName name: String) -> ResolvedKey {
        guard let separator = name.firstIndex(of: KeyValidation.separator) else {
            return ResolvedKey(namespace: "", name: name)
        }
        return ResolvedKey(namespace: String(name[..<separator]), name: String(name[name.index(after: separator)...]))
    }

    static func name(for key: ResolvedKey) -> String {
        key.namespace.isEmpty ? key.name : "\(key.namespace)\(KeyValidation.separator)\(key.name)"
    }

    func commit(
        _ record: Record,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        // Nothing is read in before the suite is written: a failure has nothing to hand over.
        apply(try commit(record), true)
    }

    private func commit(_ record: Record) throws(PreferencesError) -> BackendUpdate {
        notifications.withLock { $0.isCommitting = true }
        defer { notifications.withLock { $0.isCommitting = false } }
        return try known.withLock { (known: inout [ResolvedKey: StoredValue]) throws(PreferencesError) in
            for change in record.changes {
                let name = Self.name(for: change.key)
                if let value = change.value {
                    defaults.set(PropertyListValue.object(for: value), forKey: name)
                } else {
                    defaults.removeObject(forKey: name)
                }
            }
            record.apply(to: &known)
            // On Linux nothing reaches the disk without it; on Apple platforms it is a no-op.
            guard defaults.synchronize() else {
                throw PreferencesError(
                    .storeUnavailable(path: location, reason: "UserDefaults could not save the suite."))
            }
            return BackendUpdate(commitCount: commitCount)
        }
    }

    func flush() throws(PreferencesError) {
        guard defaults.synchronize() else {
            throw PreferencesError(.storeUnavailable(path: location, reason: "UserDefaults could not save the suite."))
        }
    }
}
