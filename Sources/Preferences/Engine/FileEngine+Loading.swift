import Foundation

/// A file that did not verify, with the bytes it held, for the copy kept beside it.
struct DamagedFile {
    var path: String
    /// What the file held; `nil` when there is no file to copy, as for a missing log.
    var bytes: [UInt8]?
    var damage: DamageReport
}

extension FileEngine {
    /// What opening found: the engine, the entries it loaded, and problems to report.
    struct Opened {
        var engine: FileEngine
        var entries: StoredEntries
        var problems: [PreferencesError]
    }

    /// The state the files describe, read under the lock.
    struct Loaded {
        var entries = StoredEntries()
        var generation: UInt64 = 0
        var log: OpenFile?
        var logValidEnd = 0
        var lastSequence: UInt64 = 0
        /// The format version of the log's header.
        var logVersion = FileHeader.Kind.log.currentVersion
        /// How many bytes a write cut short left after the log's last record.
        var tornBytes = 0
        var snapshotSize = 0
        var damaged: [DamagedFile] = []
        /// Whether there was neither a snapshot nor a log: a history file beside them is then an
        /// earlier store's.
        var isNew = false
        /// Why writes must be refused, when a file can be read but not written.
        var refusal: String?
    }

    static func open(
        path: String,
        throwsIfDamaged: Bool,
        fileSystem: FileSystem,
        compactionMinimumBytes: Int,
        historyRetention: HistoryRetention = .standard
    ) throws(PreferencesError) -> Opened {
        // Resolved once, so that the log and lock live beside the real file, not beside a link to it.
        let path = fileSystem.resolvingLinks(path)
        var problems: [PreferencesError] = []
        var lockFile: LockFile?
        var refusal: String?
        var lockFileNeedsRoom = false
        do throws(PreferencesError) {
            try fileSystem.createDirectory(at: FileSystem.folder(of: path))
            lockFile = try LockFile(path: path + ".lock", fileSystem: fileSystem, ownedLike: [path, path + ".log"])
        } catch {
            // The values can still be read, but not written without the lock.
            refusal = "its lock file could not be opened, so it is read-only (\(error))"
            lockFileNeedsRoom = error.isNoSpace
            problems.append(error)
        }
        let engine = FileEngine(
            path: path,
            fileSystem: fileSystem,
            lockFile: lockFile,
            compactionMinimumBytes: compactionMinimumBytes,
            historyRetention: historyRetention,
            refusal: refusal,
            lockFileNeedsRoom: lockFileNeedsRoom
        )
        // Files written before the store was opened to be excluded from backups: the snapshot and
        // log written from now on are excluded as they are written.
        if fileSystem.excludesStoreFilesFromBackup {
            for file in [path, engine.logPath, engine.historyPath] where fileSystem.fileExists(at: file) {
                fileSystem.excludeFromBackup(file)
            }
        }
        // Opening waits for no writer: an app launched while its extension is suspended in the
        // middle of a commit opens and reads. With the lock free, opening also tidies and repairs.
        if let lockFile, try !lockFile.lockIfFree(exclusive: true) {
            if let (loaded, count) = try engine.loadWithoutTheLock(lockFile) {
                let entries = engine.state.withLock { (state: inout State) in
                    state.installOpened(loaded, seenCount: count)
                    return state.entries
                }
                return Opened(engine: engine, entries: entries, problems: problems)
            }
            // Damage, or a compaction in the way: what to make of it needs the lock.
            try lockFile.lock(exclusive: true)
        }
        defer { lockFile?.unlock() }
        if lockFile != nil {
            fileSystem.removeTemporaryFiles(of: [path, engine.logPath, engine.historyPath])
        }
        let entries = try engine.state.withLock { (state: inout State) throws(PreferencesError) in
            let loaded = try engine.load(readOnly: lockFile == nil, acknowledged: lockFile?.acknowledged)
            if throwsIfDamaged, let first = loaded.damaged.first {
                throw PreferencesError(.damagedFile(path: first.path, damage: first.damage))
            }
            state.installOpened(loaded, seenCount: lockFile?.commitCount ?? 0)
            if lockFile == nil || loaded.refusal != nil {
                problems += loaded.damaged.map { PreferencesError(.damagedFile(path: $0.path, damage: $0.damage)) }
            } else if !loaded.damaged.isEmpty {
                problems += engine.repair(&state, loaded.damaged)
            }
            // Stamped as it opens: a process still writing under a lock file this one replaced
            // learns it at its next lock, before it commits where this one's readers never look.
            // A lock file deleted since the lock above found it is left to the next lock to move
            // from. Mapped only as far as the log reaches: opening allocates nothing.
            if let lockFile, state.refusal == nil, state.log != nil {
                _ = lockFile.confirm(stampedAt: try engine.mapAllocatedLog(&state)?.lockStamp)
            }
            return state.entries
        }
        return Opened(engine: engine, entries: entries, problems: problems)
    }

    /// Reads the files while another process holds the lock, as a read that catches up does:
    /// changing nothing, and cutting nothing off.
    ///
    /// What it reads is whole if the commit count did not move while it read, nothing read as
    /// damaged (a compaction that renamed its files meanwhile shows as one or the other), and the
    /// log ends exactly where the lock page's last acknowledged commit does: a record past that
    /// point may be one a writer is still making, or one it will take back if its flush fails.
    ///
    /// - Returns: What it read and the commit count it is current with; `nil` when three tries
    ///   found no whole view, for the caller to read under the lock.
    private func loadWithoutTheLock(_ lockFile: LockFile) throws(PreferencesError) -> (Loaded, UInt64)? {
        for _ in 0..<3 {
            let count = lockFile.commitCount
            guard let acknowledged = lockFile.acknowledged else { return nil }
            let loaded = try load(readOnly: false, acknowledged: acknowledged)
            let endsAtTheAcknowledgedCommit =
                loaded.log != nil && acknowledged.generation == loaded.generation
                && acknowledged.committedEnd == loaded.logValidEnd
            if loaded.damaged.isEmpty && endsAtTheAcknowledgedCommit && lockFile.commitCount == count {
                return (loaded, count)
            }
        }
        return nil
    }

    /// Reads the snapshot and the log that goes with it.
    ///
    /// - Parameters:
    ///   - readOnly: Whether to open the log for reading only.
    ///   - acknowledged: The last commit the lock page records, to tell a complete log from one
    ///     that lost commits, and a write in progress from damage.
    /// - Returns: The entries, the log to append to, and the damage found.
    /// - Throws: A ``PreferencesError`` if a file cannot be read or a newer version wrote it.
    func load(readOnly: Bool, acknowledged: LockFile.Acknowledged?) throws(PreferencesError) -> Loaded {
        var loaded = Loaded()
        let snapshotBytes = try fileSystem.readOnlyBytes(at: location)
        if let file = snapshotBytes {
            let snapshot: SnapshotFile.Contents
            do throws(UnsupportedVersion) {
                snapshot = try SnapshotFile.decode(file)
            } catch {
                throw unsupported(location, error)
            }
            loaded.entries = snapshot.entries
            loaded.generation = snapshot.generation
            loaded.snapshotSize = file.count
            if let damage = snapshot.damage {
                loaded.damaged.append(DamagedFile(path: location, bytes: file.array, damage: damage))
            }
        }
        let log: OpenFile?
        (log, loaded.refusal) = try openLog(readOnly: readOnly)
        guard let log else {
            loaded.isNew = snapshotBytes == nil
            // Every compaction writes a snapshot of generation 1 or more and starts a log beside it:
            // without one, the commits made since are gone, unless the lock page shows there were none.
            let nothingCommitted = acknowledged.map { $0.generation == loaded.generation && $0.sequence == 0 } ?? false
            if loaded.generation > 0 && !nothingCommitted {
                let damage = DamageReport(
                    recoveredRecords: loaded.entries.all.count,
                    damagedRanges: [],
                    reason: "the log beside the snapshot is missing, so the commits made after the snapshot "
                        + "was written are lost",
                    copyPath: nil
                )
                loaded.damaged.append(DamagedFile(path: logPath, bytes: nil, damage: damage))
            }
            return loaded
        }
        let bytes = try fileSystem.contents(of: log, from: 0)
        let replay: LogFile.Replay
        do throws(UnsupportedVersion) {
            replay = try LogFile.replay(bytes, acknowledged: acknowledged)
        } catch {
            throw unsupported(logPath, error)
        }
        if !replay.headerIsValid || replay.generation >= loaded.generation {
            for record in replay.records {
                record.apply(to: &loaded.entries)
            }
            if replay.headerIsValid {
                loaded.log = log
                loaded.logVersion = replay.version
                loaded.logValidEnd = replay.validEnd
                loaded.lastSequence = replay.lastSequence
                loaded.tornBytes = replay.tornBytes
            }
        }
        var damage = replay.damage
        if replay.headerIsValid && replay.generation > loaded.generation {
            // The log continues a snapshot newer than the one here: the snapshot was lost or
            // replaced by an older copy. Its records are still the newest values there are.
            damage.add(
                "the log continues snapshot generation \(replay.generation), "
                    + "but the snapshot is generation \(loaded.generation)",
                recovered: replay.records.count
            )
        }
        if replay.headerIsValid && replay.generation >= loaded.generation {
            for reason in Self.missingCommits(replay, acknowledged: acknowledged) {
                damage.add(reason, recovered: replay.records.count)
            }
        }
        // A log older than the snapshot was left by a crash during compaction; the snapshot holds
        // all of it, and the next commit replaces it.
        if let damage {
            loaded.damaged.append(DamagedFile(path: logPath, bytes: bytes, damage: damage))
        }
        return loaded
    }

    /// Opens the log for reading and, unless `readOnly`, writing.
    ///
    /// A log that can be read but not written opens read-only, as a read-only lock file does: the
    /// values can be read, and writes are refused with the reason.
    private func openLog(readOnly: Bool) throws(PreferencesError) -> (OpenFile?, refusal: String?) {
        if readOnly {
            return (try fileSystem.openExisting(at: logPath, readOnly: true), nil)
        }
        do throws(PreferencesError) {
            return (try fileSystem.openExisting(at: logPath, readOnly: false), nil)
        } catch  where error.isPermissionDenied {
            let log = try fileSystem.openExisting(at: logPath, readOnly: true)
            return (log, "its log can be read but not written, so it is read-only (\(error))")
        }
    }

    /// Why commits that were acknowledged are not in a log: numbers missing between its records,
    /// or a log that ends before the last commit the lock page acknowledged for it.
    static func missingCommits(_ replay: LogFile.Replay, acknowledged: LockFile.Acknowledged?) -> [String] {
        var reasons = replay.missingSequences.map {
            $0.count == 1
                ? "commit \($0.lowerBound) is missing from the log"
                : "commits \($0.lowerBound) to \($0.upperBound) are missing from the log"
        }
        guard let acknowledged else { return reasons }
        if acknowledged.generation == replay.generation && replay.lastSequence < acknowledged.sequence {
            let count = acknowledged.sequence - replay.lastSequence
            reasons.append(
                "the log ends at commit \(replay.lastSequence), but commits up to \(acknowledged.sequence) were "
                    + "acknowledged: the last \(count == 1 ? "commit is" : "\(count) commits are") missing "
                    + "(the log was cut short or replaced by an older copy, or, in standard durability, "
                    + "the system lost power before writing it to disk)"
            )
        } else if acknowledged.generation > replay.generation {
            reasons.append(
                "the log is of generation \(replay.generation), but generation \(acknowledged.generation) "
                    + "was already in use: the files were replaced by older copies, and the commits made "
                    + "since are missing"
            )
        }
        return reasons
    }

    /// Brings `state` up to date with commits made elsewhere: all of them, or, when it throws, none.
    ///
    /// Call it holding the lock; with the exclusive lock it also repairs damage found.
    func catchUpLocked(_ state: inout State, canRepair: Bool) throws(PreferencesError) -> BackendUpdate {
        guard let lockFile else { return BackendUpdate(commitCount: 0) }
        let count = lockFile.commitCount
        var update = BackendUpdate(commitCount: count)
        if count != state.seenCount {
            let acknowledged = lockFile.acknowledged
            if let log = state.log, fileSystem.identity(at: logPath) == log.identity {
                // The same log: replay what others appended to it.
                let base = state.logValidEnd
                let tail = try fileSystem.contents(of: log, from: base)
                var replay = LogFile.records(
                    in: tail,
                    from: 0,
                    after: state.lastSequence,
                    committedEnd: acknowledged.flatMap {
                        $0.generation == state.generation ? $0.committedEnd - base : nil
                    }
                )
                replay.generation = state.generation
                var damage = replay.damage.map { damage in
                    var damage = damage
                    damage.damagedRanges = damage.damagedRanges.map { ($0.lowerBound + base)..<($0.upperBound + base) }
                    return damage
                }
                for reason in Self.missingCommits(replay, acknowledged: acknowledged) {
                    damage.add(reason, recovered: replay.records.count)
                }
                // The whole log read for the damaged file's copy before anything is taken in, so
                // that a failure leaves the state as it was (the next catch-up reads it all again).
                if let damage {
                    let bytes = try fileSystem.contents(of: log, from: 0)
                    state.pendingRepair.append(DamagedFile(path: logPath, bytes: bytes, damage: damage))
                }
                for record in replay.records {
                    record.apply(to: &state.entries)
                }
                update.records = replay.records
                state.logValidEnd += replay.validEnd
                state.lastSequence = replay.lastSequence
            } else {
                // Another process compacted, or started the first log: read everything again.
                let loaded = try load(readOnly: false, acknowledged: acknowledged)
                update.records = [
                    Record(changes: state.entries.changes(to: loaded.entries))
                ]
                state.install(loaded)
                state.pendingRepair += loaded.damaged
            }
            state.seenCount = count
        }
        if canRepair && !state.pendingRepair.isEmpty {
            let damaged = state.pendingRepair
            state.pendingRepair = []
            update.problems += repair(&state, damaged)
            update.commitCount = state.seenCount
        } else if !state.pendingRepair.isEmpty {
            update.problems += state.pendingRepair.map {
                PreferencesError(.damagedFile(path: $0.path, damage: $0.damage))
            }
        }
        return update
    }

    /// Keeps a copy of each damaged file, then compacts.
    ///
    /// Afterwards the files hold what verified, so the damage is reported once. Without a copy
    /// nothing is replaced, and writes are refused.
    func repair(_ state: inout State, _ damaged: [DamagedFile]) -> [PreferencesError] {
        var problems: [PreferencesError] = []
        for file in damaged {
            guard keepCopy(of: file, &state, reporting: &problems) else { return problems }
        }
        do throws(PreferencesError) {
            try compact(&state, reporting: &problems)
        } catch {
            // The copies are safe, so a later compaction may still replace the damaged files.
            problems.append(error)
        }
        return problems
    }

    /// Keeps a copy of a damaged file beside it, and reports the damage with where the copy is.
    ///
    /// A copy that cannot be kept refuses writes from then on, so that no compaction replaces the
    /// only copy of what the file holds.
    ///
    /// - Returns: Whether the copy was kept, or there was no file to copy.
    func keepCopy(of file: DamagedFile, _ state: inout State, reporting problems: inout [PreferencesError]) -> Bool {
        var damage = file.damage
        do throws(PreferencesError) {
            if let bytes = file.bytes {
                damage.copyPath = try keepCopy(of: bytes, beside: file.path)
            }
            problems.append(PreferencesError(.damagedFile(path: file.path, damage: damage)))
            return true
        } catch {
            state.refusal = "its file '\(file.path)' is damaged and no copy of it could be kept (\(error))"
            problems.append(PreferencesError(.damagedFile(path: file.path, damage: damage)))
            problems.append(error)
            return false
        }
    }

    func keepCopy(of bytes: [UInt8], beside path: String) throws(PreferencesError) -> String {
        let stamp = Int(Date().timeIntervalSince1970)
        var candidate = "\(path).damaged-\(stamp)"
        var suffix = 1
        while fileSystem.fileExists(at: candidate) {
            candidate = "\(path).damaged-\(stamp)-\(suffix)"
            suffix += 1
        }
        try fileSystem.createFile(at: candidate, with: bytes, ownedLike: path)
        return candidate
    }

    func unsupported(_ path: String, _ error: UnsupportedVersion) -> PreferencesError {
        PreferencesError(
            .unsupportedFormatVersion(path: path, found: error.version, supported: error.supported)
        )
    }
}

extension FileEngine.State {
    /// Takes in what opening read, current with commit count `seenCount`, refusing writes if the
    /// files said to.
    mutating func installOpened(_ loaded: FileEngine.Loaded, seenCount: UInt64) {
        install(loaded)
        self.seenCount = seenCount
        if let reason = loaded.refusal, refusal == nil {
            refusal = reason
        }
    }

    mutating func install(_ loaded: FileEngine.Loaded) {
        entries = loaded.entries
        generation = loaded.generation
        log = loaded.log
        logVersion = loaded.logVersion
        historyIsAnEarlierStores = loaded.isNew
        logValidEnd = loaded.logValidEnd
        lastSequence = loaded.lastSequence
        snapshotSize = loaded.snapshotSize
    }
}

extension DamageReport? {
    /// Adds a reason to the report, starting one if there is none.
    mutating func add(_ reason: String, recovered: Int) {
        if var report = self {
            report.reason += "; " + reason
            self = report
        } else {
            self = DamageReport(recoveredRecords: recovered, damagedRanges: [], reason: reason, copyPath: nil)
        }
    }
}
