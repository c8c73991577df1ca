import Foundation

/// Where a store's entries live: a small protocol over tagged entries.
///
/// A store keeps every entry in memory and serves reads from there; a backend makes committed
/// changes durable and tells the store about changes committed elsewhere: by another store on the
/// same files, in this process or another. The store calls ``commit(_:flushesToDisk:_:)``,
/// ``withExclusiveAccess(_:_:)`` and ``catchUp(_:)`` with its write lock held.
///
/// Backends are classes: the store holds one as an existential, and calls on a class existential
/// copy one reference, where a struct's box would be copied and destroyed on every write and read.
protocol PreferencesBackend: AnyObject, Sendable {
    /// A path or name for messages.
    var location: String { get }

    /// What tells the store, while something observes it, of commits made elsewhere; `nil` when
    /// nobody else can commit to these entries. Change detection lives here, with the files that change.
    func makeCommitWatcher() -> CommitWatcher?

    /// How many commits have been made on these entries, by anyone; cheap enough for every read.
    ///
    /// When it differs from the count a store last saw, ``catchUp()`` has something to deliver.
    var commitCount: UInt64 { get }

    /// Catches up with the changes committed elsewhere since the last catch-up.
    ///
    /// Calls `apply` with them, in commit order, while still holding the backend's own lock, so
    /// that the store's memory takes commits in the order the backend does and a read never finds
    /// the backend current and the store's memory behind.
    func catchUp(_ apply: (BackendUpdate) -> Void) throws(PreferencesError)

    /// Catches up as ``catchUp(_:)`` does, for a read: without waiting for the lock another process
    /// or a transaction may hold, and without reporting or repairing anything.
    ///
    /// - Returns: `false` when that cannot be done just now, for a ``catchUp(_:)`` to do instead.
    func catchUpWithoutWaiting(_ apply: (BackendUpdate) -> Void) -> Bool

    /// Runs `body` with writers everywhere else locked out, after catching up with them.
    ///
    /// The changes it caught up with go to `apply`, as for ``catchUp(_:)``; `body` commits with
    /// ``commit(_:flushesToDisk:_:)``. Calls may nest; the lock is released when the outermost returns.
    func withExclusiveAccess<Result>(_ apply: (BackendUpdate) -> Void, _ body: () throws -> Result) throws -> Result

    /// Makes a batch of changes durable, all or nothing. Called inside ``withExclusiveAccess(_:_:)``.
    ///
    /// With `flushesToDisk`, the commit is on stable storage when this returns; without, it is in
    /// the system's hands, safe from the process being killed.
    ///
    /// Once committed, calls `apply` with `isCommitted` true and the commit count after the
    /// commit, problems that did not stop it, and, rarely, commits made elsewhere that catching up
    /// could not see (their writer held a lock file that was since replaced), which come before
    /// this one. A backend that read such commits in and then failed calls `apply` with them and
    /// `isCommitted` false before it throws: they are the backend's now, and must reach the
    /// store's memory all the same.
    ///
    /// - Throws: Why nothing was committed.
    func commit(
        _ record: Record,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError)

    /// Makes one change durable with writers everywhere else locked out: what
    /// ``withExclusiveAccess(_:_:)`` around ``commit(_:flushesToDisk:_:)`` does, for a write of one
    /// key, which a backend can do in one step and without building a record.
    ///
    /// Calls `apply`, while writers elsewhere are still locked out, with what it caught up with
    /// (`isCommitted` false) and then with what the commit reported (`isCommitted` true); it may
    /// hand both over in the one call after the commit. When the commit fails, `apply` has had
    /// what was caught up with and read in before the failure, and nothing was committed.
    func commitExclusively(
        _ change: EntryChange,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError)

    /// Sets what to call, on some thread, when the backend learns of a change made elsewhere without
    /// a commit watcher: a `UserDefaults` suite written by other code. Most backends never call it.
    func onChangesElsewhere(_ handler: @escaping @Sendable () -> Void)

    /// Forces every commit so far to stable storage.
    func flush() throws(PreferencesError)

    /// Whether the backend refuses writes for a reason that opening it again may cure: a lock
    /// file that a full disk had no room for.
    var writesOnceReopened: Bool { get }

    /// How much history the backend keeps; ``HistoryRetention/off`` for one that keeps none.
    var historyRetention: HistoryRetention { get }

    /// The records of past commits the backend keeps, in commit order, and the damage found
    /// reading them, to report. Takes no lock: no writer waits for it.
    func history() throws(PreferencesError) -> (records: [HistoryRecord], problems: [PreferencesError])

    /// Drops every record of past commits the backend keeps. Called inside ``withExclusiveAccess(_:_:)``.
    ///
    /// - Returns: Problems that did not stop it.
    func clearHistory(flushesToDisk: Bool) throws(PreferencesError) -> [PreferencesError]

    /// Writes the records of past commits again with what verifies, keeping a copy first, if they
    /// are damaged. Called inside ``withExclusiveAccess(_:_:)``.
    ///
    /// - Returns: The damage found, with where the copy was kept.
    func repairHistory(flushesToDisk: Bool) throws(PreferencesError) -> [PreferencesError]
}

extension PreferencesBackend {
    func onChangesElsewhere(_ handler: @escaping @Sendable () -> Void) {}

    var writesOnceReopened: Bool { false }

    var historyRetention: HistoryRetention { .off }

    func history() throws(PreferencesError) -> (records: [HistoryRecord], problems: [PreferencesError]) {
        ([], [])
    }

    func clearHistory(flushesToDisk: Bool) throws(PreferencesError) -> [PreferencesError] {
        []
    }

    func repairHistory(flushesToDisk: Bool) throws(PreferencesError) -> [PreferencesError] {
        []
    }

    func commitExclusively(
        _ change: EntryChange,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        do {
            try withExclusiveAccess(
                { apply($0, false) },
                { try commit(Record(changes: [change]), flushesToDisk: flushesToDisk, apply) }
            )
        } catch let error as PreferencesError {
            throw error
        } catch {
            preconditionFailure("a commit throws only PreferencesError, not \(error)")
        }
    }
}

/// What a backend reports to its store after catching up or committing.
struct BackendUpdate {
    /// Commits made elsewhere, in commit order, for the store to apply to its memory.
    var records: [Record] = []
    /// The commit count the store has now seen.
    var commitCount: UInt64
    /// Problems to report that did not stop the operation.
    var problems: [PreferencesError] = []
}

/// One change in a committed batch: a new value for a key, or its removal.
struct EntryChange: Equatable, Sendable {
    var key: ResolvedKey
    /// `nil` removes the entry.
    var value: StoredValue?

    /// The changes that turn `old` into `new`.
    static func differences(from old: [ResolvedKey: StoredValue], to new: [ResolvedKey: StoredValue]) -> [EntryChange] {
        var changes: [EntryChange] = []
        for (key, value) in new where old[key] != value {
            changes.append(EntryChange(key: key, value: value))
        }
        for key in old.keys where new[key] == nil {
            changes.append(EntryChange(key: key, value: nil))
        }
        return changes
    }
}
