import Dispatch

/// Where synced versions travel between devices: a shared folder (``SyncFolder``), or iCloud's
/// key-value store (``KeyValueSyncTransport``).
///
/// A round (``PreferencesSync``) reads what arrived, compares each key's version there with the
/// store's, and offers the versions that are newer here. The transport keeps, for each key, the
/// latest version it knows to be there. Not thread-safe: a round calls it under the sync's lock,
/// with the store's writers locked out.
protocol SyncTransport: AnyObject {
    /// Takes in what arrived since the last read.
    func readChanges() throws(PreferencesError) -> SyncArrivals

    /// The latest version of `key` there, as far as known.
    func version(of key: ResolvedKey) -> SyncVersion?

    /// Offers versions: the new ones of this round, and those the store holds that are not there.
    ///
    /// - Parameters:
    ///   - offered: The versions to offer.
    ///   - held: Every version the store holds, with `offered` in place, for a transport that
    ///     writes them all again.
    /// - Returns: What was not offered, and why: a limit of the transport, which the round
    ///   reports; what was offered is now ``version(of:)``.
    /// - Throws: A ``PreferencesError`` if nothing could be offered.
    func offer(_ offered: [SyncFile.Entry], held: () -> [SyncFile.Entry]) throws(PreferencesError)
        -> [PreferencesError]

    /// Calls `onChange`, on `queue` or any other thread, whenever something may have arrived.
    ///
    /// - Returns: What stops the calls.
    func watch(on queue: DispatchQueue, _ onChange: @escaping @Sendable () -> Void) throws(PreferencesError)
        -> any SyncWatch
}

/// What stops a transport's calls: ``SyncTransport/watch(on:_:)``.
protocol SyncWatch: Sendable {
    func cancel()
}

/// What a transport took in.
struct SyncArrivals {
    /// The keys whose version there changed, for the round to look at.
    var changedKeys: Set<ResolvedKey> = []
    /// The latest stamp read, of any key, for the clock.
    var latestStamp: UInt64 = 0
    /// What was skipped, each reported once: a file that does not verify, a limit exceeded.
    var problems: [PreferencesError] = []
    /// Whether everything there was read: `false` when a file was skipped, which may hold a version
    /// of any key.
    var isComplete = true
    /// The keys whose entry was skipped, where a transport keeps each key apart.
    var skippedKeys: Set<ResolvedKey> = []

    /// Whether a version of `key` may be in what was skipped.
    func mayHaveSkipped(_ key: ResolvedKey) -> Bool {
        !isComplete || skippedKeys.contains(key)
    }
    /// Whether the versions there belong to someone else now (another iCloud account): the store
    /// forgets the versions it synced, and the round is a first round again.
    var startsOver = false
}
