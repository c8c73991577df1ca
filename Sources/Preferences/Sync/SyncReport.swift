/// What a round of ``PreferencesSync`` did.
public struct SyncReport: Sendable, Hashable {
    /// The keys whose values the other devices' changes set, or removed.
    public let received: [StoredKey]

    /// The keys whose changes on this device the round offered to the others.
    public let sent: [StoredKey]

    /// What the round skipped or could not do, each reported once.
    ///
    /// A file in the folder, or an entry of iCloud's key-value store, that does not verify
    /// (``PreferencesError/Code/damagedFile``): it is read again next round, and this device's own
    /// file is written whole again. A write that would break a limit of iCloud's key-value store
    /// (``PreferencesError/Code/syncLimitExceeded``), offered again next round. A problem reading the
    /// history for when a change was made, which was then stamped with the round's time.
    public let problems: [PreferencesError]
}
