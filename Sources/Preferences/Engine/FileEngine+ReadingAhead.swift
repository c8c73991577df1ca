extension FileEngine {
    /// Catches up for a read without taking the file lock; `false` if that cannot be done now.
    ///
    /// The lock page says how far committed records reach (``LockFile/Acknowledged``), and
    /// committed bytes never change: a log is only appended to, and a compaction writes new files
    /// and renames them in. So a read of the log up to the committed end needs no lock, and nor does
    /// a read of a snapshot and log of the generation the page names, once both are in place.
    /// Anything unexpected (a compaction half done, bytes that do not verify, commits missing)
    /// gives `false`: the catch-up under the lock deals with it, and reports what needs reporting.
    func catchUpWithoutWaiting(_ apply: (BackendUpdate) -> Void) -> Bool {
        guard let lockFile else { return true }
        // The count before the page's other words: they may already describe a later commit, and
        // the next read then finds nothing more to read.
        let count = lockFile.commitCount
        return state.withLock { state -> Bool in
            // Holding the exclusive lock, this engine is current, and so is the store's memory,
            // which took what the lock's catch-up found before the lock's holder went on.
            guard count != state.seenCount, state.exclusiveDepth == 0 else { return true }
            guard state.pendingRepair.isEmpty, let acknowledged = lockFile.acknowledged else { return false }
            let records: [Record]?
            if acknowledged.generation == state.generation, let log = state.log {
                records = readAppended(&state, from: log, upTo: acknowledged)
            } else {
                records = reloadWithoutLock(&state, acknowledged: acknowledged)
            }
            guard let records else { return false }
            state.seenCount = count
            apply(BackendUpdate(records: records, commitCount: count))
            return true
        }
    }

    /// The records appended to this engine's log up to the committed end.
    private func readAppended(
        _ state: inout State,
        from log: OpenFile,
        upTo acknowledged: LockFile.Acknowledged
    ) -> [Record]? {
        let base = state.logValidEnd
        guard acknowledged.committedEnd >= base else { return nil }
        guard acknowledged.committedEnd > base else { return [] }
        guard let tail = try? fileSystem.contents(of: log, from: base) else { return nil }
        let committed = Array(tail.prefix(acknowledged.committedEnd - base))
        let replay = LogFile.records(in: committed, from: 0, after: state.lastSequence, committedEnd: nil)
        guard replay.damage == nil, replay.validEnd == acknowledged.committedEnd - base,
            replay.missingSequences.isEmpty, replay.lastSequence == acknowledged.sequence
        else { return nil }
        for record in replay.records {
            record.apply(to: &state.entries)
        }
        state.logValidEnd = acknowledged.committedEnd
        state.lastSequence = replay.lastSequence
        return replay.records
    }

    /// Reads the files of the generation the page names, after another process compacted.
    private func reloadWithoutLock(_ state: inout State, acknowledged: LockFile.Acknowledged) -> [Record]? {
        guard let loaded = try? load(readOnly: false, acknowledged: acknowledged), loaded.damaged.isEmpty,
            loaded.refusal == nil, loaded.log != nil, loaded.lastSequence >= acknowledged.sequence,
            loaded.logValidEnd >= acknowledged.committedEnd,
            loaded.generation == acknowledged.generation || loaded.snapshotSize == 0
        else { return nil }
        let changes = state.entries.changes(to: loaded.entries)
        state.install(loaded)
        return [Record(changes: changes)]
    }
}
