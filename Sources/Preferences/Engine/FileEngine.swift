#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file engine: a checksummed snapshot, an append-only log of commits, and a lock file.
///
/// For a store at `P`: the snapshot is `P`, the log `P.log`, the lock `P.lock`.
///
/// - Each commit is one framed, numbered record appended to the log under the lock file's lock, so
///   it survives the process being killed the moment the call returns; in synchronous durability
///   it is also `fdatasync`ed, and survives power loss. On Linux the append is a copy into a
///   mapping of the log, whose space is allocated ahead (``LogMapping``), under the mutex in the
///   lock page, confirmed current by the log's lock stamp (``LockFile/confirm(stampedAt:)``): no
///   system call. Elsewhere it is one `pwrite(2)` under `flock`. The lock page then
///   records it as acknowledged: its generation, number and end. That is what marks a commit done,
///   and what tells a write cut short from damage, and a complete log from one missing commits.
/// - When the log outgrows the snapshot, compaction writes a new snapshot of the next
///   generation (temporary file, sync, rename, directory sync), then starts a new log of that
///   generation. A log older than the snapshot is one a crash left between those two steps, and
///   is ignored: its records are all in the snapshot.
/// - Before each commit, and before a read when the shared commit count changed, the engine
///   catches up with what other processes appended, or reloads after their compaction.
final class FileEngine: PreferencesBackend {
    let location: String
    let logPath: String
    /// Where compaction keeps the log's records, for the store's history.
    let historyPath: String
    let fileSystem: FileSystem
    /// `nil` when the lock file could not be opened: the store is then read-only.
    let lockFile: LockFile?
    /// The least log size worth compacting, so that a small store does not compact on every write.
    let compactionMinimumBytes: Int
    /// How much history compaction keeps (see ``HistoryFile``).
    let historyRetention: HistoryRetention
    /// This process's id, which every record it appends carries.
    let processID = CommitStamp.processID
    let state: Locked<State>

    struct State {
        /// Every entry, as the files hold them once this engine's own commits are in.
        var entries = StoredEntries()
        var generation: UInt64 = 0
        /// The log this engine appends to; `nil` when there is none yet or it must be replaced.
        var log: OpenFile? {
            didSet {
                mapping = nil
                logIsFlushed = false
                hasNamedProgram = false
            }
        }
        /// Whether this engine's records in `log` have named its program yet: the first does
        /// (see ``CommitStamp``).
        var hasNamedProgram = false
        /// Whether the history file, if there is one, is an earlier store's: this store had
        /// neither snapshot nor log when its files were last read, and has moved no log into the
        /// history since.
        var historyIsAnEarlierStores = false
        /// The format version of `log`'s header: one older than the current is compacted away
        /// before the first append, so that no older library finds records it cannot read in it.
        var logVersion = FileHeader.Kind.log.currentVersion
        /// Whether the log's name and header are known to be on stable storage.
        ///
        /// When they are, a synchronous commit need flush only the log's data. A new log of a
        /// compaction in standard durability is not (see ``FileSystem/Persistence/deferred``), nor
        /// is one another engine made.
        var logIsFlushed = false
        /// The mapping of `log` that appends go through, when the engine shares memory.
        var mapping: LogMapping?
        /// Where the last record that verifies ends: where the next append belongs.
        var logValidEnd = 0
        /// The number of the log's last commit.
        var lastSequence: UInt64 = 0
        var snapshotSize = 0
        /// The shared commit count as of the last catch-up or commit.
        var seenCount: UInt64 = 0
        /// Why writes are refused, when they are.
        var refusal: String?

        /// Whether writes are allowed and `mapping` has room for a frame's header at `logValidEnd`.
        var mappingHasRoomForHeader: Bool {
            guard let mapping, refusal == nil else { return false }
            return logValidEnd + RecordFrame.headerSize <= mapping.capacity
        }
        /// Damage found while catching up under a shared lock, to repair under the exclusive one.
        var pendingRepair: [DamagedFile] = []
        var exclusiveDepth = 0
        /// Why the last compaction failed, when it did, and when to try again.
        var compactionFailure: CompactionFailure?
    }

    /// A compaction that failed: reported once per cause, and retried only once the log has doubled
    /// or a minute has passed, not on every write.
    ///
    /// A class, so that ``State`` has a layout the compiler knows: `ContinuousClock.Instant`'s is
    /// known only at run time, and held in the state it would make every look at whether to
    /// compact find the type's metadata and make room for it on the stack first.
    final class CompactionFailure {
        let cause: String
        let retryAtLogSize: Int
        let retryAfter: ContinuousClock.Instant

        init(cause: String, retryAtLogSize: Int, retryAfter: ContinuousClock.Instant) {
            self.cause = cause
            self.retryAtLogSize = retryAtLogSize
            self.retryAfter = retryAfter
        }
    }

    /// Whether the lock file could not be made for lack of room: the store is read-only, and one
    /// opened again once there is room can write.
    let lockFileNeedsRoom: Bool

    var writesOnceReopened: Bool {
        lockFileNeedsRoom
    }

    init(
        path: String, fileSystem: FileSystem, lockFile: LockFile?, compactionMinimumBytes: Int,
        historyRetention: HistoryRetention = .standard, refusal: String?, lockFileNeedsRoom: Bool = false
    ) {
        self.historyRetention = historyRetention
        historyPath = path + ".history"
        self.lockFileNeedsRoom = lockFileNeedsRoom
        location = path
        logPath = path + ".log"
        self.fileSystem = fileSystem
        self.lockFile = lockFile
        self.compactionMinimumBytes = compactionMinimumBytes
        state = Locked(State(refusal: refusal))
    }

    var commitCount: UInt64 {
        lockFile?.commitCount ?? 0
    }

    func makeCommitWatcher() -> CommitWatcher? {
        lockFile.map(CommitWatcher.init(lockFile:))
    }

    func catchUp(_ apply: (BackendUpdate) -> Void) throws(PreferencesError) {
        guard let lockFile else { return apply(BackendUpdate(commitCount: 0)) }
        let (depth, seen) = state.withLock { ($0.exclusiveDepth, $0.seenCount) }
        // Inside exclusive access nobody else can commit: this engine is already current.
        if depth > 0 || lockFile.commitCount == seen {
            return apply(BackendUpdate(commitCount: seen))
        }
        try lockFile.lock(exclusive: false, confirmingName: false)
        defer { lockFile.unlock() }
        try whenConfirmed(lockFile) { (state: inout State) throws(PreferencesError) in
            apply(try catchUpLocked(&state, canRepair: false))
        }
    }

    func withExclusiveAccess<Result>(
        _ apply: (BackendUpdate) -> Void,
        _ body: () throws -> Result
    ) throws -> Result {
        guard let lockFile else {
            apply(BackendUpdate(commitCount: 0))
            return try body()
        }
        let isOutermost = state.withLock { state in
            state.exclusiveDepth += 1
            return state.exclusiveDepth == 1
        }
        defer {
            let isLast = state.withLock { state in
                state.exclusiveDepth -= 1
                return state.exclusiveDepth == 0
            }
            if isLast {
                lockFile.unlock()
            }
        }
        guard isOutermost else {
            apply(BackendUpdate(commitCount: state.withLock { $0.seenCount }))
            return try body()
        }
        try lockFile.lock(exclusive: true, confirmingName: false)
        try whenConfirmed(lockFile) { (state: inout State) throws(PreferencesError) in
            var update = BackendUpdate(commitCount: state.seenCount)
            // Even when the catch-up fails: what it read in is this engine's now, and the store's.
            defer { apply(update) }
            try catchUpExclusively(&state, into: &update)
        }
        return try body()
    }

    /// Runs `body` under the engine's own lock once the lock file's lock, just taken, is confirmed
    /// to be on the file at the path (``LockFile/confirm(stampedAt:)``); if that file lost its name,
    /// takes the lock of the one at the path instead and tries again.
    ///
    /// Before anything is read, repaired or appended: under a lock file that lost its name, another
    /// process may be writing at the same moment. Always inlined, so that each of the three locks
    /// that share it runs `body` directly rather than through a closure on every write.
    @inline(__always)
    private func whenConfirmed<Result>(
        _ lockFile: LockFile,
        _ body: (inout State) throws(PreferencesError) -> Result
    ) throws(PreferencesError) -> Result {
        while true {
            let result = try state.withLock { (state: inout State) throws(PreferencesError) -> Result? in
                guard lockFile.confirm(stampedAt: state.mapping?.lockStamp) else { return nil }
                return try body(&state)
            }
            if let result {
                return result
            }
            // Outside the engine's own lock, which reads take: this waits for other processes.
            try lockFile.moveToFileAtPath()
        }
    }

    /// Catches up under the exclusive lock, once it is confirmed, and repairs what needs it.
    ///
    /// What it reads in goes into `update` as it goes, so that a failure part way leaves there
    /// what this engine has taken in already.
    private func catchUpExclusively(_ state: inout State, into update: inout BackendUpdate) throws(PreferencesError) {
        update = try catchUpLocked(&state, canRepair: true)
        // Before anything is read, a commit the page never announced (made under a lock file since
        // replaced, or by a writer that died mid-copy) is read in or cut off. With `pwrite`, the
        // append's own check of the log's size does that.
        if fileSystem.sharesMemory, try logNeedsChecking(&state) {
            try checkLog(&state, into: &update)
            update.commitCount = state.seenCount
        }
    }

    func commit(
        _ record: Record,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        try state.withLock { (state: inout State) throws(PreferencesError) in
            try appendAndReport(
                record, flushesToDisk: flushesToDisk, catchingUpFirst: false,
                through: lockFile, &state, apply)
        }
    }

    /// Locks, catches up, appends and lets go taking the engine's own lock once, where
    /// ``withExclusiveAccess(_:_:)`` around a commit takes it four times, passes two closures and
    /// makes an update for a catch-up that found nothing.
    ///
    /// Call it holding the store's write lock, outside ``withExclusiveAccess(_:_:)``: the lock is
    /// not recursive. Reads that catch up meanwhile without waiting
    /// (``catchUpWithoutWaiting(_:)``) find it current, or take what it has not yet taken, under
    /// the engine's own lock; either way before its change, which reaches the store's memory before
    /// anyone else can commit.
    ///
    /// `apply` is called once: after the commit, with what was caught up with and what the append
    /// found before it; or, when either fails, with what they had read in by then.
    func commitExclusively(
        _ change: EntryChange,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        guard let lockFile else {
            // Read-only: the append refuses the change, saying why.
            return try commit(Record(changes: [change]), flushesToDisk: flushesToDisk, apply)
        }
        try lockFile.lock(exclusive: true, confirmingName: false)
        defer { lockFile.unlock() }
        try whenConfirmed(lockFile) { (state: inout State) throws(PreferencesError) in
            // The common case: nobody committed since this engine last did, and nothing waits to be
            // repaired. Nothing to catch up with, then (the append checks the log's end itself).
            let isBehind = lockFile.commitCount != state.seenCount || !state.pendingRepair.isEmpty
            try appendAndReport(
                change, flushesToDisk: flushesToDisk, catchingUpFirst: isBehind, through: lockFile, &state, apply)
        }
    }

    /// Catches up first if asked, appends, and calls `apply` once, committed or not, with what was
    /// read in on the way (see ``append(_:flushesToDisk:_:into:)``): the one way both commits report.
    @inline(__always)
    private func appendAndReport(
        _ content: some LogContent,
        flushesToDisk: Bool,
        catchingUpFirst: Bool,
        through lockFile: LockFile?,
        _ state: inout State,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        var update = BackendUpdate(commitCount: state.seenCount)
        var isCommitted = false
        defer { apply(update, isCommitted) }
        if catchingUpFirst {
            try catchUpExclusively(&state, into: &update)
        }
        try append(content, flushesToDisk: flushesToDisk, through: lockFile, &state, into: &update)
        isCommitted = true
    }

    /// Appends a commit to the log, framed and numbered, then records it in the lock page as
    /// acknowledged; compacts when the log has outgrown the snapshot.
    ///
    /// Into `update` go the records found in the log past its known end, which come before this
    /// commit (see ``adoptUnseenRecords(_:in:size:into:)``), problems to report, and, once
    /// committed, the commit count. The records are there even when the append then fails: this
    /// engine has them, and the store must too. `lockFile` is the engine's own; `nil` when the
    /// store is read-only, which refuses the append.
    private func append(
        _ content: some LogContent,
        flushesToDisk: Bool,
        through lockFile: LockFile?,
        _ state: inout State,
        into update: inout BackendUpdate
    ) throws(PreferencesError) {
        guard let lockFile, state.refusal == nil else { throw refusal(state) }
        try prepareAppend(&state, into: &update)
        if state.logVersion < FileHeader.Kind.log.currentVersion {
            // An older library reading this log would take the new records for damage: fold it
            // into the snapshot and start a log of the current version, which it refuses to read.
            try compact(&state, flushesToDisk: flushesToDisk, reporting: &update.problems)
            try prepareAppend(&state, into: &update)
        }
        // Numbered and stamped as it is encoded: copying the record to number it would copy its
        // optional strings through the generic `Optional`'s value witnesses on every write.
        let sequence = state.lastSequence + 1
        let stamp = CommitStamp(
            time: CommitStamp.now(), processID: processID, program: state.hasNamedProgram ? nil : CommitStamp.program)
        let frameSize: Int
        do throws(PreferencesError) {
            if state.mapping != nil {
                frameSize = try appendThroughMapping(content, numbered: sequence, stamp: stamp, &state)
            } else {
                frameSize = try RecordFrame.withFrame(of: content, numbered: sequence, stamp: stamp) {
                    (frame) throws(PreferencesError) -> Int in
                    try fileSystem.store(frame, in: openLog(state), at: state.logValidEnd)
                    return frame.count
                }
            }
            if flushesToDisk {
                try flushLog(openLog(state), &state)
            }
        } catch {
            // Take back what may have reached the file: nothing past `logValidEnd` is anyone's while
            // this engine holds the lock. Should this fail too, the next append's check of the log
            // (`prepareAppend`) cuts it off; either way nobody reads past `logValidEnd` a record that
            // does not verify.
            if let mapping = state.mapping {
                mapping.clear(at: state.logValidEnd, count: mapping.capacity - state.logValidEnd)
            } else {
                try? fileSystem.truncate(openLog(state), to: state.logValidEnd)
            }
            throw error
        }
        state.logValidEnd += frameSize
        state.lastSequence += 1
        state.hasNamedProgram = true
        content.apply(to: &state.entries)
        let acknowledged = LockFile.Acknowledged(
            generation: state.generation,
            sequence: state.lastSequence,
            committedEnd: state.logValidEnd
        )
        state.seenCount = lockFile.publish(acknowledged)
        update.commitCount = state.seenCount
        if shouldCompact(&state) || content.compactsAtOnce {
            update.problems += compactOrBackOff(&state, flushesToDisk: flushesToDisk)
        }
    }

    /// The log `prepareAppend` left open: looked up only where a write needs it, since holding it
    /// for the whole append would cost a retain and a release.
    private func openLog(_ state: State) -> OpenFile {
        guard let log = state.log else { preconditionFailure("prepareAppend leaves a log open or throws") }
        return log
    }

    /// Opens the log to append to, if none is, and makes sure it ends where this engine thinks it does.
    ///
    /// Records this engine had not seen (see ``adoptUnseenRecords(_:in:size:into:)``), and
    /// problems to report, go into `update` as they are found.
    private func prepareAppend(_ state: inout State, into update: inout BackendUpdate) throws(PreferencesError) {
        // Checked here first: a log is open on all but the first append, and the call returned an
        // empty array to release.
        if state.log == nil {
            update.problems += try ensureLog(&state)
        }
        guard try logNeedsChecking(&state) else { return }
        try checkLog(&state, into: &update)
        try ensureMapping(&state)
    }

    /// Whether the log may hold bytes past `logValidEnd`: records committed under a lock file
    /// since deleted or replaced, or one a writer killed mid-append left half made.
    ///
    /// Through a mapping, that is a look at the bytes where the next record goes (they are zeros
    /// unless someone wrote there) and at whether the mutex's last holder died. With `pwrite`,
    /// only the file's size tells, so it is always checked. Call it holding the exclusive lock.
    private func logNeedsChecking(_ state: inout State) throws(PreferencesError) -> Bool {
        // `ensureMapping` only when the mapping lacks room: the reference it returns would cost each
        // of a write's two checks a retain and a release.
        if !state.mappingHasRoomForHeader, try ensureMapping(&state) == nil {
            return state.log != nil && !fileSystem.sharesMemory
        }
        guard let mapping = state.mapping else { preconditionFailure("ensureMapping leaves a mapping or none") }
        let holderDied = lockFile?.takeHolderDied() ?? false
        return holderDied || !mapping.isZero(at: state.logValidEnd, count: RecordFrame.headerSize)
    }

    /// The mapping of the log to append through, with room for a frame's header at its end, when
    /// the engine shares memory and has a log.
    @discardableResult
    func ensureMapping(_ state: inout State) throws(PreferencesError) -> LogMapping? {
        // The common case, first: a mapping with room already.
        if state.mappingHasRoomForHeader, let mapping = state.mapping {
            return mapping
        }
        guard fileSystem.sharesMemory, state.refusal == nil, let log = state.log else { return nil }
        let mapping = state.mapping ?? newMapping(of: log, state)
        state.mapping = mapping
        try mapping.reserve(state.logValidEnd + RecordFrame.headerSize)
        return mapping
    }

    /// Why the store takes no write: the refusal it holds, or having no lock file.
    func refusal(_ state: borrowing State) -> PreferencesError {
        PreferencesError(.storeUnavailable(path: location, reason: state.refusal ?? "it is read-only"))
    }

    /// A mapping of `log`, which allocates as far as a frame past where the log will be compacted.
    private func newMapping(of log: OpenFile, _ state: borrowing State) -> LogMapping {
        LogMapping(
            file: log, fileSystem: fileSystem,
            allocationTarget: compactionEnd(state) + LogMapping.inPlaceFrameLimit)
    }

    /// The mapping of the log as far as the file already reaches, for its lock stamp, when the
    /// engine shares memory and has a log; `nil` when the file does not reach past its header.
    ///
    /// For opening, which must change no file: ``ensureMapping(_:)`` allocates room for appends.
    func mapAllocatedLog(_ state: inout State) throws(PreferencesError) -> LogMapping? {
        guard fileSystem.sharesMemory, state.refusal == nil, let log = state.log else { return nil }
        let mapping = state.mapping ?? newMapping(of: log, state)
        guard try mapping.reserveAllocated(LogFile.recordsOffset) else { return nil }
        state.mapping = mapping
        return mapping
    }

    /// Reads in, or cuts off, what the log holds past `logValidEnd`; reads the files again if the
    /// log was replaced.
    ///
    /// What it reads in goes into `update` before anything else can fail.
    private func checkLog(_ state: inout State, into update: inout BackendUpdate) throws(PreferencesError) {
        guard let log = state.log else { return }
        let status = try fileSystem.status(of: log)
        if status.linkCount == 0 {
            // Deleted or replaced by a compaction this engine never saw, under a lock file that was
            // itself replaced: read the files again rather than append to a log nobody reads.
            let loaded = try load(readOnly: false, acknowledged: lockFile?.acknowledged)
            update.records.append(Record(changes: state.entries.changes(to: loaded.entries)))
            state.install(loaded)
            state.pendingRepair += loaded.damaged
            update.problems += try ensureLog(&state)
        } else if status.size != state.logValidEnd {
            try adoptUnseenRecords(&state, in: log, size: status.size, into: &update.records)
        }
    }

    /// Writes a commit's frame into the log's mapping at its end, `logValidEnd`: encoded in place
    /// when it is small (``LogMapping/appendInPlace(_:numbered:stamp:at:)``), else encoded apart and
    /// copied in (``LogMapping/append(_:at:)``).
    ///
    /// - Returns: The frame's size.
    private func appendThroughMapping(
        _ content: some LogContent,
        numbered sequence: UInt64,
        stamp: borrowing CommitStamp,
        _ state: inout State
    ) throws(PreferencesError) -> Int {
        guard let mapping = state.mapping else { preconditionFailure("appending through no mapping") }
        let offset = state.logValidEnd
        try mapping.reserve(offset + LogMapping.inPlaceFrameLimit)
        var inPlace: Int?
        try fileSystem.check(.write, logPath) {
            inPlace = mapping.appendInPlace(content, numbered: sequence, stamp: stamp, at: offset)
            return 0
        }
        if let inPlace {
            return inPlace
        }
        return try RecordFrame.withFrame(of: content, numbered: sequence, stamp: stamp) {
            (frame) throws(PreferencesError) -> Int in
            try mapping.reserve(offset + frame.count)
            if !mapping.isZero(at: offset, count: frame.count) {
                // Behind a header of zeros (see `logNeedsChecking`): what a writer killed mid-copy left.
                mapping.clear(at: offset, count: mapping.capacity - offset)
            }
            mapping.append(frame, at: offset)
            return frame.count
        }
    }

    /// Deals with bytes past the log's last known record before an append.
    ///
    /// A record cut short by a writer killed mid-append is skipped when reading; it is cut off so
    /// that the new record is not written behind it. Records that verify are never cut off: they
    /// were committed by a writer that held another lock file (this one was deleted or replaced
    /// while it was in use), so they are adopted as if caught up with.
    ///
    /// The records adopted go into `records`, for the store to apply before its own commit.
    private func adoptUnseenRecords(
        _ state: inout State,
        in log: OpenFile,
        size: Int,
        into records: inout [Record]
    ) throws(PreferencesError) {
        let tail = try fileSystem.contents(of: log, from: state.logValidEnd)
        var position = 0
        while let (record, next) = RecordFrame.record(in: tail, at: position) {
            record.apply(to: &state.entries)
            state.lastSequence = record.sequence ?? state.lastSequence
            records.append(record)
            position = next
        }
        state.logValidEnd += position
        guard tail[position...].contains(where: { $0 != 0 }) else { return }
        if let mapping = state.mapping {
            // Cut by clearing, not by shortening the file: others' mappings of it must stay whole.
            try mapping.reserve(max(size, state.logValidEnd))
            mapping.clear(at: state.logValidEnd, count: mapping.capacity - state.logValidEnd)
        } else {
            try fileSystem.truncate(log, to: state.logValidEnd)
        }
    }

    func flush() throws(PreferencesError) {
        try state.withLock { (state: inout State) throws(PreferencesError) in
            if let log = state.log {
                try flushLog(log, &state)
            }
        }
    }

    /// Flushes the log's data to stable storage, and its name too the first time.
    private func flushLog(_ log: OpenFile, _ state: inout State) throws(PreferencesError) {
        try fileSystem.synchronize(log)
        if !state.logIsFlushed {
            try fileSystem.synchronizeFolder(of: logPath)
            state.logIsFlushed = true
        }
    }
}
