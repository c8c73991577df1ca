import Foundation

/// A file that did not verify, with the bytes it held, for the copy kept beside it.
struct DamagedFile {
    var path: String
    var bytes: [UInt8]
    var damage: DamageReport
}

extension FileEngine {
    /// What opening found: the engine, the entries it loaded, and problems to report.
    struct Opened {
        var engine: FileEngine
        var entries: [StorageKey: StoredValue]
        var problems: [PreferencesError]
    }

    /// The state the files describe, read under the lock.
    struct Loaded {
        var entries: [StorageKey: StoredValue] = [:]
        var generation: UInt64 = 0
        var log: OpenFile?
        var logValidEnd = 0
        var snapshotSize = 0
        var damaged: [DamagedFile] = []
    }

    static func open(
        path: String,
        ifDamaged handling: PreferencesStore.DamageHandling,
        fileSystem: FileSystem,
        compactionMinimumBytes: Int
    ) throws(PreferencesError) -> Opened {
        var problems: [PreferencesError] = []
        var lockFile: LockFile?
        var refusal: String?
        do throws(PreferencesError) {
            try fileSystem.createDirectory(at: (path as NSString).deletingLastPathComponent)
            lockFile = try LockFile(path: path + ".lock", fileSystem: fileSystem)
        } catch {
            // The values can still be read, but not written without the lock.
            refusal = "its lock file could not be opened, so it is read-only (\(error))"
            problems.append(error)
        }
        let engine = FileEngine(
            path: path,
            fileSystem: fileSystem,
            lockFile: lockFile,
            compactionMinimumBytes: compactionMinimumBytes,
            refusal: refusal
        )
        try lockFile?.lock(exclusive: true)
        defer { lockFile?.unlock() }
        if lockFile != nil {
            fileSystem.removeTemporaryFiles(of: path)
            fileSystem.removeTemporaryFiles(of: engine.logPath)
        }
        let entries = try engine.state.withLock { (state: inout State) throws(PreferencesError) in
            let loaded = try engine.load(readOnly: lockFile == nil)
            if handling == .throwError, let first = loaded.damaged.first {
                throw PreferencesError(.damagedFile(path: first.path, damage: first.damage))
            }
            state.install(loaded)
            state.seenCount = lockFile?.commitCount ?? 0
            if lockFile == nil {
                problems += loaded.damaged.map { PreferencesError(.damagedFile(path: $0.path, damage: $0.damage)) }
            } else if !loaded.damaged.isEmpty {
                problems += engine.repair(&state, loaded.damaged)
            }
            return state.entries
        }
        return Opened(engine: engine, entries: entries, problems: problems)
    }

    /// Reads the snapshot and the log that goes with it.
    func load(readOnly: Bool) throws(PreferencesError) -> Loaded {
        var loaded = Loaded()
        if let bytes = try fileSystem.readFile(at: location) {
            let snapshot: SnapshotFile.Contents
            do throws(UnsupportedVersion) {
                snapshot = try SnapshotFile.decode(bytes)
            } catch {
                throw unsupported(location, error)
            }
            loaded.entries = snapshot.entries
            loaded.generation = snapshot.generation
            loaded.snapshotSize = bytes.count
            if let damage = snapshot.damage {
                loaded.damaged.append(DamagedFile(path: location, bytes: bytes, damage: damage))
            }
        }
        guard let log = try fileSystem.openExisting(at: logPath, readOnly: readOnly) else { return loaded }
        let bytes = try fileSystem.contents(of: log, from: 0)
        let replay: LogFile.Replay
        do throws(UnsupportedVersion) {
            replay = try LogFile.replay(bytes)
        } catch {
            throw unsupported(logPath, error)
        }
        if let damage = replay.damage {
            loaded.damaged.append(DamagedFile(path: logPath, bytes: bytes, damage: damage))
        }
        if !replay.headerIsValid || replay.generation == loaded.generation {
            for record in replay.records {
                record.apply(to: &loaded.entries)
            }
            if replay.headerIsValid {
                loaded.log = log
                loaded.logValidEnd = replay.validEnd
            }
        } else if replay.generation > loaded.generation {
            // The log continues a snapshot newer than the one here: the snapshot was lost or
            // replaced by an older copy. Its records are still the newest values there are.
            for record in replay.records {
                record.apply(to: &loaded.entries)
            }
            let damage = DamageReport(
                recoveredRecords: replay.records.count,
                damagedRanges: [],
                reason: "the log continues snapshot generation \(replay.generation), "
                    + "but the snapshot is generation \(loaded.generation)",
                copyPath: nil
            )
            loaded.damaged.append(DamagedFile(path: logPath, bytes: bytes, damage: damage))
        }
        // A log older than the snapshot was left by a crash during compaction; the snapshot holds
        // all of it, and the next commit replaces it.
        return loaded
    }

    /// Brings `state` up to date with commits made elsewhere.
    ///
    /// Call it holding the lock; with the exclusive lock it also repairs damage found.
    func catchUpLocked(_ state: inout State, canRepair: Bool) throws(PreferencesError) -> BackendUpdate {
        guard let lockFile else { return BackendUpdate(commitCount: 0) }
        let count = lockFile.commitCount
        var update = BackendUpdate(commitCount: count)
        if count != state.seenCount {
            if let log = state.log, fileSystem.identity(at: logPath) == log.identity {
                // The same log: replay what others appended to it.
                let tail = try fileSystem.contents(of: log, from: state.logValidEnd)
                let replay = LogFile.records(in: tail, from: 0)
                for record in replay.records {
                    record.apply(to: &state.entries)
                }
                update.records = replay.records
                if var damage = replay.damage {
                    damage.damagedRanges = damage.damagedRanges.map {
                        ($0.lowerBound + state.logValidEnd)..<($0.upperBound + state.logValidEnd)
                    }
                    let bytes = try fileSystem.contents(of: log, from: 0)
                    state.pendingRepair.append(DamagedFile(path: logPath, bytes: bytes, damage: damage))
                }
                state.logValidEnd += replay.validEnd
            } else {
                // Another process compacted, or started the first log: read everything again.
                let loaded = try load(readOnly: false)
                update.records = [Record(changes: Self.differences(from: state.entries, to: loaded.entries))]
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
            var damage = file.damage
            do throws(PreferencesError) {
                damage.copyPath = try keepCopy(of: file.bytes, beside: file.path)
                problems.append(PreferencesError(.damagedFile(path: file.path, damage: damage)))
            } catch {
                state.refusal = "its file '\(file.path)' is damaged and no copy of it could be kept (\(error))"
                problems.append(PreferencesError(.damagedFile(path: file.path, damage: damage)))
                problems.append(error)
                return problems
            }
        }
        do throws(PreferencesError) {
            problems += try compact(&state)
        } catch {
            // The copies are safe, so a later compaction may still replace the damaged files.
            problems.append(error)
        }
        return problems
    }

    private func keepCopy(of bytes: [UInt8], beside path: String) throws(PreferencesError) -> String {
        let stamp = Int(Date().timeIntervalSince1970)
        var candidate = "\(path).damaged-\(stamp)"
        var suffix = 1
        while fileSystem.fileExists(at: candidate) {
            candidate = "\(path).damaged-\(stamp)-\(suffix)"
            suffix += 1
        }
        try fileSystem.createFile(at: candidate, with: bytes)
        return candidate
    }

    private func unsupported(_ path: String, _ error: UnsupportedVersion) -> PreferencesError {
        PreferencesError(
            .unsupportedFormatVersion(path: path, found: error.version, supported: FileHeader.currentVersion)
        )
    }

    /// The changes that turn `old` into `new`.
    static func differences(
        from old: [StorageKey: StoredValue],
        to new: [StorageKey: StoredValue]
    ) -> [EntryChange] {
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

extension FileEngine.State {
    mutating func install(_ loaded: FileEngine.Loaded) {
        entries = loaded.entries
        generation = loaded.generation
        log = loaded.log
        logValidEnd = loaded.logValidEnd
        snapshotSize = loaded.snapshotSize
    }
}
