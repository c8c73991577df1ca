import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension FileEngine {
    /// Whether the log has outgrown the snapshot, and no failed compaction asks to wait.
    ///
    /// The state is passed `inout`, though only read: passed by value, it would be copied whole
    /// after each append. Inlined into the append, where it is nearly always false, so that a
    /// write pays for no call.
    @inline(__always)
    func shouldCompact(_ state: inout State) -> Bool {
        guard state.logValidEnd > compactionEnd(state) else { return false }
        return mayRetryCompaction(&state)
    }

    /// Where the log's records may reach before a commit compacts it: as far as the snapshot is
    /// long, or ``compactionMinimumBytes`` when that is more.
    @inline(__always)
    func compactionEnd(_ state: borrowing State) -> Int {
        LogFile.recordsOffset + max(state.snapshotSize, compactionMinimumBytes)
    }

    /// Whether no failed compaction asks to wait before the next one.
    private func mayRetryCompaction(_ state: inout State) -> Bool {
        guard let failure = state.compactionFailure else { return true }
        return state.logValidEnd >= failure.retryAtLogSize || ContinuousClock.now >= failure.retryAfter
    }

    /// Compacts after a commit, which stands in the log whatever happens here.
    ///
    /// A compaction that cannot succeed (a full disk, a read-only folder) must not be retried, and
    /// reported, on every write: it is reported once per cause, and retried once the log has
    /// doubled or a minute has passed, when there is more to gain or the cause may have gone.
    ///
    /// - Returns: Problems to report.
    func compactOrBackOff(_ state: inout State, flushesToDisk: Bool) -> [PreferencesError] {
        var problems: [PreferencesError] = []
        do throws(PreferencesError) {
            try compact(&state, flushesToDisk: flushesToDisk, reporting: &problems)
            state.compactionFailure = nil
            return problems
        } catch {
            let cause = Self.cause(of: error)
            let isNew = state.compactionFailure?.cause != cause
            state.compactionFailure = CompactionFailure(
                cause: cause,
                retryAtLogSize: 2 * state.logValidEnd,
                retryAfter: .now + .seconds(60)
            )
            return problems + (isNew ? [error] : [])
        }
    }

    /// What makes two failures the same: the operation and the system's error, not the temporary
    /// file's name, which is new every time.
    private static func cause(of error: PreferencesError) -> String {
        if case .fileOperationFailed(_, let operation, let errorNumber) = error.detail {
            return "\(operation): \(errorNumber)"
        }
        return error.description
    }

    /// Folds the log into a new snapshot of the next generation, then starts a new log; first
    /// moves the log's records into the history file (``moveLogIntoHistory(_:flushesToDisk:reporting:)``).
    ///
    /// A crash before the snapshot's rename leaves the old snapshot and log; after it, the new
    /// snapshot and a log of the old generation, which opening ignores because the snapshot holds
    /// all of it. Either way nothing is lost. Call it holding the exclusive lock.
    ///
    /// In standard durability (`flushesToDisk` false) the snapshot is only ordered before its
    /// rename, not flushed to the medium, on Apple platforms (see ``FileSystem/Persistence/ordered``),
    /// and the new log is not flushed at all until a commit into it is (``FileSystem/Persistence/deferred``):
    /// two `fsync`s of a compaction's four on Linux.
    ///
    /// The snapshot's entries are decoded, and kept decoded, so that the next compaction need not
    /// decode them again. A value of the snapshot that does not decode is not written again: a copy
    /// of the snapshot is kept first, and the damage goes into `problems` whether or not the
    /// compaction then succeeds, since the entries no longer hold the value. Without a copy, the
    /// store refuses writes from then on, and the compaction throws, leaving the snapshot as it is.
    ///
    /// - Parameters:
    ///   - state: The engine's state, holding the exclusive lock.
    ///   - flushesToDisk: Whether the new files must reach the medium (synchronous durability).
    ///   - movesHistory: Whether the log's records go into the history file; `false` drops them,
    ///     for ``clearHistory()``.
    ///   - problems: Where problems go that the caller must report, thrown or not.
    /// - Throws: A ``PreferencesError`` if the files cannot be written, the copy of a snapshot
    ///   whose values do not all decode cannot be kept, or a key kept out of history cannot be
    ///   erased from the history file.
    func compact(
        _ state: inout State,
        flushesToDisk: Bool = true,
        movesHistory: Bool = true,
        reporting problems: inout [PreferencesError]
    ) throws(PreferencesError) {
        guard let lockFile else { return }
        // A store that refuses writes may hold the only copy of damaged files: nothing replaces them.
        guard state.refusal == nil else { throw refusal(state) }
        let generation = state.generation + 1
        if let unreadable = state.entries.takeInSnapshot() {
            let file = DamagedFile(
                path: location,
                bytes: unreadable.file.array,
                damage: unreadable.report(besides: state.entries.countUpperBound)
            )
            guard keepCopy(of: file, &state, reporting: &problems) else { throw refusal(state) }
        }
        if movesHistory {
            try moveLogIntoHistory(&state, flushesToDisk: flushesToDisk, reporting: &problems)
        }
        let bytes = SnapshotFile.encode(&state.entries, generation: generation, expectedSize: state.snapshotSize)
        if let warning = try fileSystem.replaceFile(
            at: location, with: bytes, ownedLike: logPath, persistence: flushesToDisk ? .flushed : .ordered)
        {
            problems.append(warning)
        }
        state.generation = generation
        state.snapshotSize = bytes.count
        // The log this replaces is stamped with this engine's page (see `stampLogAtPath`): here
        // through the mapping when there is one, which may be of a log read in since the lock was
        // confirmed; otherwise by `ensureLog`, through the file.
        let mappedStamp = state.mapping?.lockStamp
        if let mappedStamp {
            preferences_atomic_store(mappedStamp, lockFile.incarnation)
        }
        state.log = nil
        // Others must reload now, even if no new log can be started: theirs is stale.
        defer {
            state.seenCount = lockFile.publish(
                LockFile.Acknowledged(generation: generation, sequence: 0, committedEnd: LogFile.recordsOffset)
            )
        }
        problems += try ensureLog(
            &state, persistence: flushesToDisk ? .flushed : .deferred, outgoingLogIsStamped: mappedStamp != nil)
    }

    /// Starts a new, empty log of the current generation, unless one is open.
    ///
    /// A log that is not flushed now is flushed by the first commit into it that is (see
    /// ``FileEngine/State/logIsFlushed``).
    ///
    /// - Parameters:
    ///   - state: The engine's state, which takes the new log.
    ///   - persistence: How far the new log must reach stable storage.
    ///   - outgoingLogIsStamped: Whether the log at the path, which the new one replaces, was
    ///     stamped with this engine's lock page already, through its mapping.
    /// - Returns: Problems that did not stop the log from starting: a folder that could not be synced.
    /// - Throws: A ``PreferencesError`` if the log cannot be written or opened.
    func ensureLog(
        _ state: inout State,
        persistence: FileSystem.Persistence = .flushed,
        outgoingLogIsStamped: Bool = false
    ) throws(PreferencesError) -> [PreferencesError] {
        guard state.log == nil else { return [] }
        if !outgoingLogIsStamped {
            stampLogAtPath()
        }
        var problems: [PreferencesError] = []
        // Stamped with the page of the lock this engine holds, which it confirmed was the current one.
        let start = LogFile.start(generation: state.generation, lockStamp: lockFile?.incarnation ?? 0)
        if let warning = try fileSystem.replaceFile(
            at: logPath, with: start, ownedLike: location, persistence: persistence)
        {
            problems.append(warning)
        }
        guard let log = try fileSystem.openExisting(at: logPath, readOnly: false) else {
            throw PreferencesError(.fileOperationFailed(path: logPath, operation: "open", errorNumber: ENOENT))
        }
        state.log = log
        state.logVersion = FileHeader.Kind.log.currentVersion
        state.logIsFlushed = persistence == .flushed
        state.logValidEnd = LogFile.recordsOffset
        state.lastSequence = 0
        return problems
    }

    /// Stamps the log now at the path, which a new one is about to replace, with this engine's page.
    ///
    /// A writer still holding a lock file since deleted may be appending to that log through its
    /// mapping, its lock confirmed by the stamp (see ``LockFile/confirm(stampedAt:)``): stamped
    /// with another page, it checks by `fstat` at its next lock and moves to this engine's lock
    /// file, instead of going on writing into a file nobody reads any more. Best effort: a log that
    /// cannot be opened or written is no log such a writer has mapped either.
    private func stampLogAtPath() {
        guard let lockFile, let log = try? fileSystem.openExisting(at: logPath, readOnly: false),
            let start = try? fileSystem.contents(of: log, from: 0, limit: LogFile.recordsOffset),
            start.count == LogFile.recordsOffset, case .valid = FileHeader.check(start, expecting: .log)
        else { return }
        withUnsafeBytes(of: lockFile.incarnation.littleEndian) {
            try? fileSystem.store($0, in: log, at: LogFile.lockStampOffset)
        }
    }
}
