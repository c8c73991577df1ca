#if canImport(Darwin)
    public import Foundation
#else
    import Foundation
#endif

/// The calls sync makes of iCloud's key-value store: what `NSUbiquitousKeyValueStore` does on
/// Apple platforms, where it conforms.
///
/// The seam ``KeyValueSyncTransport`` stands on, so that everything but the few lines that call
/// Apple's class runs in the tests, on every platform.
protocol SyncKeyValueStore: AnyObject {
    func data(forKey key: String) -> Data?
    func set(_ data: Data?, forKey key: String)
    var dictionaryRepresentation: [String: Any] { get }
    @discardableResult func synchronize() -> Bool

    /// Calls `handler`, on any thread, with each change iCloud reports.
    ///
    /// - Returns: What stops the calls.
    func observeExternalChanges(_ handler: @escaping @Sendable (KeyValueStoreChange) -> Void) -> any SyncWatch
}

/// Why iCloud's key-value store changed, as its `didChangeExternallyNotification` says.
enum KeyValueStoreChange: Sendable, Equatable {
    /// Another device changed entries: read at the next round.
    case server
    /// The device synced with iCloud for the first time: read at the next round.
    case initialSync
    /// The app's entries are over Apple's limits, so iCloud took no more: reported at the next
    /// round (``PreferencesError/Code/syncLimitExceeded``).
    case quotaViolation
    /// Someone else signed in to iCloud: the entries are theirs now. The next round is a first
    /// round again: the store forgets the versions it synced, takes the account's values, and
    /// offers those the account does not have.
    case accountChange
}

#if canImport(Darwin) || PREFERENCES_APPLE_STAND_INS
    // Apple platforms; type-checked here against stand-ins by `Scripts/typecheck-apple-blocks`.
    // See CONTRIBUTING, "Code that only Apple platforms compile".
    extension NSUbiquitousKeyValueStore: SyncKeyValueStore {
        func observeExternalChanges(_ handler: @escaping @Sendable (KeyValueStoreChange) -> Void) -> any SyncWatch {
            let token = NotificationCenter.default.addObserver(
                forName: NSUbiquitousKeyValueStore.didChangeExternallyNotification, object: self, queue: nil
            ) { notification in
                switch notification.userInfo?[NSUbiquitousKeyValueStoreChangeReasonKey] as? Int {
                case NSUbiquitousKeyValueStoreInitialSyncChange: handler(.initialSync)
                case NSUbiquitousKeyValueStoreQuotaViolationChange: handler(.quotaViolation)
                case NSUbiquitousKeyValueStoreAccountChange: handler(.accountChange)
                default: handler(.server)
                }
            }
            return NotificationObservation(token: token)
        }
    }

    /// Removes a notification observer when cancelled.
    private struct NotificationObservation: SyncWatch, @unchecked Sendable {
        // `@unchecked` only because the token is not marked `Sendable`; `NotificationCenter` takes
        // it back from any thread.
        let token: any NSObjectProtocol

        func cancel() {
            NotificationCenter.default.removeObserver(token)
        }
    }

    extension PreferencesSync {
        /// Prepares to sync `keys` of `store` through iCloud's key-value store.
        ///
        /// ```swift
        /// let sync = try PreferencesSync(store: .standard, keys: [.theme, .fontSize], iCloud: .default)
        /// try sync.start()
        /// ```
        ///
        /// The app needs the iCloud key-value storage entitlement. Each synced key is one entry,
        /// named `namespace:name`. See <doc:Syncing> for Apple's limits and what each change iCloud
        /// reports does.
        ///
        /// - Parameters:
        ///   - store: The store whose keys sync.
        ///   - keys: The keys that sync; no others do.
        ///   - iCloud: The key-value store, `NSUbiquitousKeyValueStore.default` unless a test gives another.
        /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/notSyncable`` for a key
        ///   declared ``PreferenceKey/withoutHistory()``, or whose entry's name would be longer than
        ///   iCloud allows, or the error that kept the device identifier from being stored.
        public convenience init(store: PreferencesStore, keys: [PreferenceKeys], iCloud: NSUbiquitousKeyValueStore)
            throws
        {
            try self.init(store: store, keys: keys, keyValueStore: iCloud)
        }
    }
#endif
