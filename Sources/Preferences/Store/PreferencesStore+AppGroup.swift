import Foundation

extension PreferencesStore {
    /// Opens the store an app shares with its extensions, in the container of an app group they
    /// all belong to.
    ///
    /// ```swift
    /// let shared = try PreferencesStore(appGroup: "group.com.example.reader")
    /// ```
    ///
    /// The app, its widgets and its other extensions then read and write the same values, each
    /// seeing the others' writes at its next read. Keys in the ``PreferenceNamespace/app``
    /// namespace agree between them: the namespace is stored under one name whatever the bundle.
    ///
    /// The file is `Library/Application Support/Preferences/preferences.store` in the group's
    /// container, in a folder of its own, so that the Data Protection the store removes from its
    /// folder (see <doc:ChoosingWhereValuesLive>) is not removed from files the app keeps beside
    /// it. On Linux, which has no app groups, it is `preferences.store` in a folder named after the
    /// group beside the standard store's, under `$XDG_CONFIG_HOME` (`~/.config` when unset), so that
    /// a program and its helpers can share a store the same way.
    ///
    /// On tvOS, which keeps no file of an app's past a purge of its caches, the store keeps its
    /// values in the group's `UserDefaults` suite instead
    /// (``init(userDefaultsSuite:appNamespace:overrides:)``), and `durability`, `handling` and
    /// `excludedFromBackup` do not apply.
    ///
    /// iOS ends a suspended app that holds a lock on a file in a shared container. The store holds
    /// its lock file's lock only while it commits a write or catches up with one, and while the
    /// closure of an ``update(_:_:)`` or a transaction runs, never across an `await`: see
    /// <doc:DurabilityAndSeveralProcesses>.
    ///
    /// - Parameters:
    ///   - identifier: The app group, as the App Groups entitlement lists it: `group.com.example.reader`.
    ///   - durability: How far each write goes before it returns; see ``Durability``.
    ///   - handling: What to do if the file is damaged.
    ///   - overrides: The layers read above the stored values; none unless you say. See ``OverrideLayer``.
    ///   - excludedFromBackup: Whether to keep the store's files out of backups; see
    ///     ``init(fileURL:appNamespace:durability:ifDamaged:overrides:excludedFromBackup:history:)``.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/storeUnavailable`` if the
    ///   group has no container or its identifier cannot name a folder; otherwise as
    ///   ``init(fileURL:appNamespace:durability:ifDamaged:overrides:excludedFromBackup:history:)``. On iOS,
    ///   watchOS and visionOS a group the entitlements do not list has no container; on macOS,
    ///   Apple documents that a container is returned even for such a group, so the store opens
    ///   where no other program of the group looks.
    public convenience init(
        appGroup identifier: String,
        durability: Durability = .standard,
        ifDamaged handling: DamageHandling = .recover,
        overrides: [OverrideLayer] = [],
        excludedFromBackup: Bool = false
    ) throws {
        #if os(tvOS)
            // tvOS only, and so never compiled on the project's Linux machines: the suite backend,
            // which the tests cover. Listed in CONTRIBUTING.md.
            self.init(userDefaultsSuite: identifier, overrides: overrides)
        #else
            try self.init(
                fileURL: try Self.fileURL(inAppGroup: identifier) { Self.appGroupFolder($0) },
                durability: durability,
                ifDamaged: handling,
                overrides: overrides,
                excludedFromBackup: excludedFromBackup
            )
        #endif
    }

    /// Where an app group's store is, in the folder `folder` gives for the group.
    ///
    /// - Throws: ``PreferencesError/Code/storeUnavailable`` if the identifier cannot name a folder,
    ///   or `folder` gives none.
    static func fileURL(
        inAppGroup identifier: String,
        folder: (String) -> URL?
    ) throws(PreferencesError) -> URL {
        let isFolderName =
            !identifier.isEmpty && identifier != "." && identifier != ".." && !identifier.contains("/")
            && !identifier.contains("\0")
        guard isFolderName else {
            throw PreferencesError(
                .storeUnavailable(
                    path: identifier, reason: "'\(identifier)' is no app group's identifier: it cannot name a folder"))
        }
        guard let folder = folder(identifier) else {
            throw PreferencesError(
                .storeUnavailable(
                    path: identifier,
                    reason: "the app group '\(identifier)' has no container: list it in the App Groups "
                        + "entitlement of the app and of each extension that opens the store"))
        }
        return folder.appendingPathComponent("preferences.store", isDirectory: false)
    }

    /// The folder an app group's store is kept in: in the group's container on Apple platforms, and
    /// a folder named after the group beside the standard store's elsewhere.
    static func appGroupFolder(
        _ identifier: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> URL? {
        #if canImport(Darwin)
            // Apple platforms only: `containerURL(forSecurityApplicationGroupIdentifier:)` (macOS 10.8,
            // iOS 7), `nil` for a group the entitlements do not list. Listed in CONTRIBUTING.md.
            return FileManager.default.containerURL(forSecurityApplicationGroupIdentifier: identifier)?
                .appendingPathComponent("Library/Application Support/Preferences", isDirectory: true)
        #else
            return standardDirectory(environment: environment).appendingPathComponent(identifier, isDirectory: true)
        #endif
    }
}
