public import Foundation

#if canImport(Observation)
    import Observation
#endif

/// A thread-safe store of typed preferences, read from memory and kept durably by its backend.
///
/// Subscript a store with a key declared in ``PreferenceKeys``:
///
/// ```swift
/// let store = PreferencesStore.standard
/// store[.prefersLargeText] = true
/// if store[.prefersLargeText] { ... }
///
/// try store.update(.launchCount) { $0 += 1 }
/// try store.transaction { preferences in
///     preferences[.theme] = .dark
///     preferences[.accentColor] = "indigo"
/// }
/// ```
///
/// Reads are served from memory. A read that finds another process committed since reads what it
/// appended, without waiting for any lock that process may hold, and leaves delivering the change to
/// observers to another thread. Every write goes to the backend before
/// the store's memory changes, so what you read is always what is stored. A write of an identical
/// value is no change: not written at all, unless another process committed since the store last
/// caught up, and never delivered to observers.
///
/// The subscript never throws: when what is stored cannot be read as the key's type it returns the
/// key's default and reports the problem through ``errors``; when a value cannot be written the
/// old value stays and the problem is reported the same way. The throwing methods,
/// ``value(for:)-(PreferenceKey<Value>)``, ``setValue(_:for:)`` and the rest, throw a
/// ``PreferencesError`` instead.
///
/// A store is `Sendable`: use it from any thread or task. Its locks are never held while your
/// code runs, except for the body of ``transaction(durability:writeIdentifier:_:)`` and ``update(_:_:)``, which must not wait
/// for another thread that writes to the same store.
public final class PreferencesStore: Sendable {
    /// The name the app's own namespace, ``PreferenceNamespace/app``, is stored under in this store.
    public let appNamespace: String

    /// Whether ``appNamespace`` is the default, so that each key's own resolved key serves.
    let hasDefaultAppNamespace: Bool

    /// The file the store keeps its values in, or `nil` for an in-memory store.
    ///
    /// A file store keeps two more files beside it: a log of recent commits (`.log`) and a lock
    /// that processes sharing the store coordinate through (`.lock`).
    public let fileURL: URL?

    /// How far each write goes before it returns, unless a transaction says otherwise.
    public let durability: Durability

    let backend: any PreferencesBackend
    let state: Locked<StoreState>
    /// The lock that makes writers go one at a time.
    ///
    /// Held for the whole of a commit, and for a transaction's body. Readers never take it: they take
    /// the lock of `state`, and to catch up, the backend's own short lock. Recursive, so that a
    /// transaction's body can write.
    let writeLock: WriteLock
    let errorChannel: ErrorChannel
    /// The observers, and the committed changes on their way to them.
    let changeHub: ChangeHub
    /// Tells of other stores' and processes' commits while anyone observes; `nil` for a store whose
    /// backend cannot be written by another.
    let commitWatcher: CommitWatcher?
    #if canImport(Observation)
        /// Tracks, for the Observation framework, which keys a view or model read.
        let observationRegistrar = ObservationRegistrar()
    #endif
    /// The layers read above the stored values; `nil` when the store reads none.
    let overrideLayers: OverrideLayers?
    /// Tells of changes to the managed settings, while the store reads them.
    private let managedSettingsWatcher = Locked<ManagedSettingsWatcher?>(nil)
    /// How the store learns of changes to the managed settings, for a test to report when one went
    /// unseen; `nil` when it reads none.
    var managedSettingsDiagnosis: String? { managedSettingsWatcher.withLock { $0?.diagnosis } }
    /// Held while the override layers are read and applied, so that readings apply in order.
    let overrideReading = Locked(())

    /// The app namespace a store uses unless told otherwise: `"app"`.
    ///
    /// It is a constant, not the bundle identifier, so an app and its extensions that open the same
    /// file see the same values, and it is never empty on Linux, where there is no bundle identifier.
    public static let defaultAppNamespace = PreferenceNamespace.defaultAppNamespace

    init(
        backend: any PreferencesBackend,
        entries: StoredEntries,
        appNamespace: String,
        fileURL: URL?,
        durability: Durability = .standard,
        overrides: [OverrideLayer] = [],
        problems: [PreferencesError] = []
    ) {
        KeyValidation.validate(appNamespace: appNamespace)
        self.backend = backend
        self.appNamespace = appNamespace
        hasDefaultAppNamespace = appNamespace == Self.defaultAppNamespace
        self.fileURL = fileURL
        self.durability = durability
        let commitWatcher = backend.makeCommitWatcher()
        self.commitWatcher = commitWatcher
        state = Locked(StoreState(loaded: entries, seenCommitCount: backend.commitCount, commitWatcher: commitWatcher))
        overrideLayers = overrides.isEmpty ? nil : OverrideLayers(overrides)
        errorChannel = ErrorChannel()
        let changeHub = ChangeHub()
        self.changeHub = changeHub
        writeLock = WriteLock()
        errorChannel.report(problems)
        commitWatcher?.setHandler { [weak self] in self?.catchUpIfNeeded() ?? false }
        backend.onChangesElsewhere { [weak self] in self?.catchUpIfNeeded() }
        if let overrideLayers {
            // Watching first, so that no change made while the layers are read goes unseen.
            let watcher = overrideLayers.watch { [weak self] in self?.readOverrides() }
            managedSettingsWatcher.withLock { $0 = watcher }
            readOverrides()
        }
    }

    /// The problems the store reports rather than throws: values that could not be read or written
    /// through the subscript, keys used with two types, a damaged file found on opening.
    ///
    /// Each access returns a new stream that receives every error reported from then on. Errors
    /// reported while no stream exists (such as damage found while the store opened) are kept, up
    /// to 100, and delivered to the next stream.
    ///
    /// ```swift
    /// Task {
    ///     for await error in store.errors {
    ///         logger.error("\(error)")
    ///     }
    /// }
    /// ```
    public var errors: AsyncStream<PreferencesError> {
        errorChannel.subscribe()
    }

    /// Runs `body` with the write lock held, then, once the outermost hold lets go, delivers what
    /// was committed to observers.
    func withWriteLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        try writeLock.withLock(body) { changeHub.deliverPending(announcingThrough: self) }
    }

    func resolvedKey<Value>(for key: PreferenceKey<Value>) -> ResolvedKey {
        guard key.isInAppNamespace, !hasDefaultAppNamespace else { return key.defaultResolvedKey }
        return key.resolvedKey(inAppNamespace: appNamespace)
    }

    func resolvedKey(for key: StoredKey) -> ResolvedKey {
        ResolvedKey(namespace: key.namespace.resolved(appNamespace: appNamespace), name: key.name)
    }

    func storedKey(for key: ResolvedKey) -> StoredKey {
        StoredKey(key.name, in: PreferenceNamespace(stored: key.namespace, appNamespace: appNamespace))
    }
}
