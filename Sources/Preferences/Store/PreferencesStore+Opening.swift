public import Foundation

extension PreferencesStore {
    /// What opening a store does when its file is damaged.
    public enum DamageHandling: Sendable, Hashable {
        /// Load every record that verifies, keep a copy of the damaged file beside it, open, and
        /// report the damage through ``PreferencesStore/errors``. A file in which nothing verifies
        /// opens empty, with its copy kept. The default.
        case recover

        /// Throw a ``PreferencesError/Code/damagedFile`` error and leave the file exactly as it is.
        case throwError
    }

    /// Opens the store kept in a file, creating the file on the first write.
    ///
    /// A damaged file is never taken for an empty one and never overwritten unread: see
    /// ``DamageHandling``. A file that cannot be read at all, or that a newer version of this
    /// library wrote, makes this initialiser throw.
    ///
    /// - Parameters:
    ///   - fileURL: The store's file. Its folder is created when needed, and the log and lock files
    ///     are kept beside it.
    ///   - appNamespace: The name under which ``PreferenceNamespace/app`` keys are stored.
    ///   - durability: How far each write goes before it returns; see ``Durability``.
    ///   - handling: What to do if the file is damaged.
    ///   - overrides: The layers read above the stored values; none unless you say. See ``OverrideLayer``.
    ///   - excludedFromBackup: Whether to keep the store's files out of backups (iCloud and the
    ///     computer's), on Apple platforms: for settings the app can rebuild, or that belong to this
    ///     device only. Its lock file is always excluded. Elsewhere it changes nothing.
    ///   - history: How much history to keep across compactions, in a file beside the store
    ///     (``HistoryRetention/off`` keeps none).
    /// - Throws: A ``PreferencesError``: ``PreferencesError/Code/fileOperationFailed`` if the file
    ///   cannot be read, ``PreferencesError/Code/unsupportedFormatVersion`` if a newer version wrote it,
    ///   ``PreferencesError/Code/damagedFile`` if it is damaged and `handling` is ``DamageHandling/throwError``.
    public convenience init(
        fileURL: URL,
        appNamespace: String = PreferencesStore.defaultAppNamespace,
        durability: Durability = .standard,
        ifDamaged handling: DamageHandling = .recover,
        overrides: [OverrideLayer] = [],
        excludedFromBackup: Bool = false,
        history: HistoryRetention = .standard
    ) throws {
        try self.init(
            fileURL: fileURL,
            appNamespace: appNamespace,
            durability: durability,
            ifDamaged: handling,
            overrides: overrides,
            excludedFromBackup: excludedFromBackup,
            fileSystem: FileSystem(),
            history: history
        )
    }

    /// Opens a file store with the engine's compaction threshold set, for the package's harness.
    ///
    /// - Parameters:
    ///   - fileURL: The store's file.
    ///   - durability: How far each write goes before it returns.
    ///   - compactionMinimumBytes: The least log size that is compacted; smaller makes compaction
    ///     frequent, for tests that must catch it in the act.
    /// - Throws: A ``PreferencesError`` if the store cannot be opened.
    package convenience init(
        fileURL: URL,
        durability: Durability = .standard,
        compactionMinimumBytes: Int
    ) throws(PreferencesError) {
        try self.init(
            fileURL: fileURL,
            durability: durability,
            fileSystem: FileSystem(),
            compactionMinimumBytes: compactionMinimumBytes
        )
    }

    convenience init(
        fileURL: URL,
        appNamespace: String = PreferencesStore.defaultAppNamespace,
        durability: Durability = .standard,
        ifDamaged handling: DamageHandling = .recover,
        overrides: [OverrideLayer] = [],
        excludedFromBackup: Bool = false,
        fileSystem: FileSystem,
        compactionMinimumBytes: Int = PreferencesStore.defaultCompactionMinimumBytes,
        history: HistoryRetention = .standard
    ) throws(PreferencesError) {
        var fileSystem = fileSystem
        fileSystem.excludesStoreFilesFromBackup = excludedFromBackup
        let opened = try FileEngine.open(
            path: fileURL.path,
            throwsIfDamaged: handling == .throwError,
            fileSystem: fileSystem,
            compactionMinimumBytes: compactionMinimumBytes,
            historyRetention: history
        )
        self.init(
            backend: opened.engine,
            entries: opened.entries,
            appNamespace: appNamespace,
            fileURL: fileURL,
            durability: durability,
            overrides: overrides,
            problems: opened.problems
        )
    }

    /// The least log size worth compacting: small stores compact at 64 KiB of log, larger ones
    /// when the log outgrows the snapshot.
    ///
    /// A compaction's two flushes and two renames cost the same whatever the store's size: 64 KiB
    /// of log is about 2,000 small writes to spread them over (see `BENCHMARKS.md`). A larger log
    /// would spread them further, but opening replays the whole log, and the files of a store
    /// smaller than the log hold more than twice its data.
    package static let defaultCompactionMinimumBytes = 64 * 1024

    /// Opens a store that keeps its values in a `UserDefaults` suite, for code that reads the suite
    /// directly, such as `@AppStorage`.
    ///
    /// Keys in the ``PreferenceNamespace/global`` namespace are stored under their plain names,
    /// which is what `@AppStorage("name", store: UserDefaults(suiteName: …))` reads; others as
    /// `namespace:name`. Direct types are stored natively, `Codable` values as JSON `Data`, and URLs
    /// (and on Linux, dates) in a small dictionary of their own, because a property list cannot hold
    /// them exactly there.
    ///
    /// `UserDefaults` promises less than a file store: a transaction is written key by key, a value
    /// written by another process is not seen, and on Linux a damaged suite file reads as empty. Use
    /// a file store unless the suite itself is the point. See <doc:ChoosingWhereValuesLive>.
    ///
    /// - Parameters:
    ///   - suiteName: The suite's name; `nil` for the app's standard defaults.
    ///   - appNamespace: The name under which ``PreferenceNamespace/app`` keys are stored.
    ///   - overrides: The layers read above the stored values; none unless you say. See ``OverrideLayer``.
    public convenience init(
        userDefaultsSuite suiteName: String?,
        appNamespace: String = PreferencesStore.defaultAppNamespace,
        overrides: [OverrideLayer] = []
    ) {
        let (backend, entries, problems) = UserDefaultsBackend.open(suiteName: suiteName)
        self.init(
            backend: backend, entries: StoredEntries(entries), appNamespace: appNamespace, fileURL: nil,
            overrides: overrides,
            problems: problems)
    }

    /// Creates a store that keeps its values in memory only, for tests and previews.
    ///
    /// - Parameters:
    ///   - appNamespace: The name under which ``PreferenceNamespace/app`` keys are stored.
    ///   - overrides: The layers read above the stored values; none unless you say. See ``OverrideLayer``.
    /// - Returns: An empty store whose values last as long as it does.
    public static func inMemory(
        appNamespace: String = PreferencesStore.defaultAppNamespace,
        overrides: [OverrideLayer] = []
    ) -> PreferencesStore {
        PreferencesStore(
            backend: InMemoryBackend(), entries: StoredEntries(), appNamespace: appNamespace, fileURL: nil,
            overrides: overrides)
    }

    /// The store in the platform's usual place for this program's settings: ``standardFileURL``.
    ///
    /// It reads ``standardOverrides`` above its stored values: the launch arguments, so that
    /// `-name value` works as it does with `UserDefaults` (and in UI tests), and the settings an
    /// administrator manages. Open a store yourself to choose other layers.
    ///
    /// It opens on first use. If its file cannot be opened (on iOS, for instance, a folder that is
    /// not readable yet), it still returns a store, so that code using it keeps working: reads
    /// return defaults, every write fails with ``PreferencesError/Code/storeUnavailable``, and the
    /// reason is reported through ``errors``. A later access, a second or more after the failure,
    /// tries to open the file again and, once it can, returns the working store from then on. So
    /// ask for `standard` again rather than keeping a store it returned while it could not open.
    /// The same goes for a store opened for the first time on a full disk, which reads but has no
    /// room for its lock file to write under: once there is room, a later access opens one that
    /// writes. Observers and ``errors`` subscriptions stay with the store they were made on: make
    /// them again on the store `standard` returns then.
    /// Open a store with ``init(fileURL:appNamespace:durability:ifDamaged:overrides:excludedFromBackup:history:)`` to handle that case
    /// yourself.
    ///
    /// On tvOS, which keeps no local file past a purge of the app's caches, it keeps its values in
    /// `UserDefaults.standard` instead (``init(userDefaultsSuite:appNamespace:overrides:)``), where
    /// settings last: tvOS warns an app past 512 KB of defaults and ends it past 1 MB.
    public static var standard: PreferencesStore {
        #if os(tvOS)
            // tvOS only, and so never compiled on the project's Linux machines: the suite backend,
            // which the tests cover. Listed in CONTRIBUTING.md.
            StandardStore.userDefaults
        #else
            StandardStore.shared.current()
        #endif
    }

    /// The layers ``standard`` reads above its stored values: ``OverrideLayer/launchArguments``
    /// and ``OverrideLayer/managed``.
    public static var standardOverrides: [OverrideLayer] {
        [.launchArguments, .managed]
    }

    /// Where ``standard`` keeps its file; on tvOS, where it keeps none (see ``standard``), where it
    /// would.
    ///
    /// On Apple platforms, `Application Support/<bundle identifier>/preferences.store`. On Linux,
    /// `$XDG_CONFIG_HOME/<name>/preferences.store`, or `~/.config/<name>/preferences.store` when
    /// `XDG_CONFIG_HOME` is unset, where the name is the bundle identifier if there is one and the
    /// process name otherwise. To share values between an app and its extensions, open the app
    /// group's store with ``init(appGroup:durability:ifDamaged:overrides:excludedFromBackup:)`` instead.
    public static var standardFileURL: URL {
        standardFileURL(identifier: Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName)
    }

    /// Where the standard store of the program with this bundle identifier or process name is:
    /// how a tool finds another program's store.
    package static func standardFileURL(identifier: String) -> URL {
        standardDirectory().appendingPathComponent(identifier, isDirectory: true)
            .appendingPathComponent("preferences.store", isDirectory: false)
    }

    /// The folder the standard store's folder is in, given the process's environment.
    static func standardDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL {
        #if canImport(Darwin)
            return FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        #else
            if let configuration = environment["XDG_CONFIG_HOME"], configuration.hasPrefix("/") {
                return URL(fileURLWithPath: configuration, isDirectory: true)
            }
            return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config", isDirectory: true)
        #endif
    }
}

/// The standard store, opened on first use and opened again after a failure.
private final class StandardStore: Sendable {
    static let shared = StandardStore()

    #if os(tvOS)
        /// The standard store on tvOS: `UserDefaults.standard`, which a suite always opens.
        static let userDefaults = PreferencesStore(
            userDefaultsSuite: nil, overrides: PreferencesStore.standardOverrides)
    #endif

    private struct State {
        var store: PreferencesStore?
        /// When opening last failed, or opened a store that cannot write until it is opened again;
        /// `nil` once a store that writes opened.
        var failedAt: ContinuousClock.Instant?
    }

    private let state = Locked(State())

    func current() -> PreferencesStore {
        state.withLock { state in
            if let store = state.store {
                guard let failedAt = state.failedAt, ContinuousClock.now - failedAt >= .seconds(1) else { return store }
            }
            let url = PreferencesStore.standardFileURL
            do throws(PreferencesError) {
                let store = try PreferencesStore(
                    fileURL: url, overrides: PreferencesStore.standardOverrides, fileSystem: FileSystem())
                // A new store on a full disk has no lock file to write under: it is opened again,
                // as one that failed to open is, until there is room for one.
                state = State(store: store, failedAt: store.backend.writesOnceReopened ? .now : nil)
            } catch {
                let store = PreferencesStore(
                    backend: InMemoryBackend(location: url.path, refusal: error),
                    entries: StoredEntries(),
                    appNamespace: PreferencesStore.defaultAppNamespace,
                    fileURL: url,
                    overrides: PreferencesStore.standardOverrides,
                    problems: [error]
                )
                state = State(store: store, failedAt: .now)
            }
            return state.store!
        }
    }
}
