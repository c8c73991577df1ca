/// What a round of ``PreferencesSync`` did.
public struct SyncReport: Sendable, Hashable {
    /// The keys whose values the other devices' changes set, or removed.
    public let received: [StoredKey]

    /// The keys whose changes on this device the round offered to the others.
    public let sent: [StoredKey]

    /// The files in the folder skipped because they do not verify, each reported once.
    ///
    /// Another device's file is damaged, or still being copied into the folder: it is read again
    /// next round. This device's own file is written whole again.
    public let problems: [PreferencesError]
}
