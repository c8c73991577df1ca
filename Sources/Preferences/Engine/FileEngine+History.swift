#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A record of the store's history, with the generation of the log it was committed to and the
/// program its process named.
struct HistoryRecord {
    var generation: UInt64
    var record: Record
    /// The program the record's process named in the record's log, if it named one.
    var program: String?
}

extension FileEngine {
    /// Moves the log's records into the history file, before a compaction replaces the log.
    ///
    /// Changes of keys kept out of history are left out, and a record that changes such a key has
    /// the history rewritten without that key. Other problems go into `problems`, and the
    /// compaction goes on: the values are in the new snapshot whatever happens to their history.
    ///
    /// - Throws: A ``PreferencesError`` when the history could not be rewritten without a key kept
    ///   out of history: the compaction must not go on, since the log it replaces holds the only
    ///   marks saying which key to erase. It is tried again with the next.
    func moveLogIntoHistory(
        _ state: inout State,
        flushesToDisk: Bool,
        reporting problems: inout [PreferencesError]
    ) throws(PreferencesError) {
        guard let log = state.log, state.logValidEnd > LogFile.recordsOffset else { return }
        // Thrown: a log that cannot be read may hold marks of keys to erase.
        let records = try fileSystem.contents(
            of: log, from: LogFile.recordsOffset, limit: state.logValidEnd - LogFile.recordsOffset)
        let moved = Self.historyEntries(of: records, generation: state.generation)
        let erasing = moved.erasing
        do throws(PreferencesError) {
            guard historyRetention.keepsHistory || !erasing.isEmpty else { return }
            try appendToHistory(
                historyRetention.keepsHistory ? moved.entries : [], generation: state.generation,
                isAnEarlierStores: state.historyIsAnEarlierStores, erasing: erasing, flushesToDisk: flushesToDisk,
                reporting: &problems)
            state.historyIsAnEarlierStores = false
        } catch {
            guard erasing.isEmpty else { throw error }
            problems.append(error)
        }
    }

    /// The log's records as the history file holds them, after a marker of the log's generation
    /// (``HistoryFile``), and the keys of the changes left out, as a record holds a key.
    ///
    /// Each frame is checked again, since a log repaired after damage may still hold bytes that do
    /// not verify, then copied as it is. Written through a pointer into memory of the log's size
    /// and a marker's, as a snapshot is: an array appended to byte by byte would cost a compaction
    /// hundreds of instructions a record.
    static func historyEntries(
        of records: [UInt8],
        generation: UInt64
    ) -> (entries: [UInt8], erasing: Set<ArraySlice<UInt8>>) {
        var erasing: Set<ArraySlice<UInt8>> = []
        let entries = [UInt8](unsafeUninitializedCapacity: records.count + 64) { buffer, count in
            var writer = UnsafeByteWriter(UnsafeMutableRawBufferPointer(buffer))
            HistoryFile.appendMarker(generation: generation, to: &writer)
            var position = 0
            while position < records.count {
                guard let payload = RecordFrame.payload(in: records, at: position, verifyChecksum: true) else {
                    position += 1
                    continue
                }
                let frame = position..<payload.upperBound
                position = payload.upperBound
                guard records[payload.lowerBound] & Record.Flag.keepsNoHistory != 0 else {
                    records.withUnsafeBytes { writer.append(UnsafeRawBufferPointer(rebasing: $0[frame])) }
                    continue
                }
                // Written again without the changes kept out of history: never longer than it was.
                // Kept with no change at all when it names its process's program, which the
                // process's later records in this log do not.
                var reader = ByteReader(records, range: payload)
                guard var record = try? Record(payload: &reader) else { continue }
                for change in record.changes where change.key.keepsNoHistory {
                    erasing.insert(HistoryPruning.keyBytes(change.key)[...])
                }
                record.changes.removeAll { $0.key.keepsNoHistory }
                if !record.changes.isEmpty || record.stamp.program != nil {
                    RecordFrame.append(record, to: &writer)
                }
            }
            precondition(!writer.overflowed, "the history's frames outgrew the log's")
            count = writer.count
        }
        return (entries, erasing)
    }

    /// Appends entries to the history file, after the last whole append, then counts them in its
    /// header; prunes the file when it has outgrown its limit or keys must be erased from it.
    ///
    /// The file is flushed only in synchronous durability, as the new log is: in standard
    /// durability a power loss may leave it damaged, which reading it reports, and which never
    /// touches a value.
    ///
    /// A file that does not go with the store's snapshot and log, which were replaced since it was
    /// written, is kept as a copy and started again: one the engine found with neither
    /// (`isAnEarlierStores`), or whose header names a later generation than `generation` (the
    /// header records the generation of the last log appended).
    private func appendToHistory(
        _ entries: [UInt8],
        generation: UInt64,
        isAnEarlierStores: Bool,
        erasing: Set<ArraySlice<UInt8>>,
        flushesToDisk: Bool,
        reporting problems: inout [PreferencesError]
    ) throws(PreferencesError) {
        guard let file = try fileSystem.openExisting(at: historyPath, readOnly: false) else {
            guard !entries.isEmpty else { return }
            let bytes = HistoryFile.header(bodyLength: entries.count, generation: generation) + entries
            return try replaceHistory(with: bytes, flushesToDisk: flushesToDisk, &problems)
        }
        let header = try fileSystem.contents(of: file, from: 0, limit: FileHeader.size)
        let end: Int?
        let appendedGeneration: UInt64?
        do throws(UnsupportedVersion) {
            (end, appendedGeneration) = try HistoryFile.bodyEnd(ofHeader: header)
        } catch {
            // A newer library's history: left alone, as a newer snapshot or log is.
            throw unsupported(historyPath, error)
        }
        let size = try fileSystem.status(of: file).size
        guard let end, end <= size else {
            // A header that does not verify, or counts more than the file holds: read what does.
            let bytes = try fileSystem.contents(of: file, from: 0)
            return try rewriteHistory(
                bytes, appending: entries, generation: generation, erasing: erasing, flushesToDisk, &problems)
        }
        if isAnEarlierStores || (appendedGeneration ?? 0) > generation {
            let bytes = try fileSystem.contents(of: file, from: 0)
            let damage = DamageReport(
                recoveredRecords: 0, damagedRanges: [],
                reason: "the history does not go with the store's snapshot and log, which were replaced since it was "
                    + "written (deleted, restored from an older backup, or salvaged after damage); it was started again",
                copyPath: nil)
            try reportReplacing(bytes, damage, erasing: erasing, &problems)
            let fresh = HistoryFile.header(bodyLength: entries.count, generation: generation) + entries
            return try replaceHistory(with: fresh, flushesToDisk: flushesToDisk, &problems)
        }
        if size > end {
            // An append a crash cut short, whose records the log still held and now brings again.
            try fileSystem.truncate(file, to: end)
        }
        try fileSystem.store(entries, in: file, at: end)
        if flushesToDisk {
            try fileSystem.synchronize(file)
        }
        let bodyLength = end + entries.count - FileHeader.size
        try fileSystem.store(HistoryFile.header(bodyLength: bodyLength, generation: generation), in: file, at: 0)
        if flushesToDisk {
            try fileSystem.synchronize(file)
        }
        if bodyLength > 2 * historyRetention.maximumBytes || !erasing.isEmpty {
            let bytes = try fileSystem.contents(of: file, from: 0, limit: FileHeader.size + bodyLength)
            try rewriteHistory(bytes, appending: [], generation: generation, erasing: erasing, flushesToDisk, &problems)
        }
    }

    /// Writes the history file again, pruned (``HistoryPruning``), from `bytes` as it held them and
    /// `entries` to append; keeps a copy of a file that did not all verify, and reports it.
    ///
    /// No copy is kept while keys are being erased: it would hold their values.
    private func rewriteHistory(
        _ bytes: [UInt8],
        appending entries: [UInt8],
        generation: UInt64?,
        erasing: Set<ArraySlice<UInt8>>,
        _ flushesToDisk: Bool,
        _ problems: inout [PreferencesError]
    ) throws(PreferencesError) {
        // Read with the entries after it: a file read in this way has a header that does not
        // verify, or counts more than the file holds, and is scanned to its end.
        let contents: HistoryFile.Contents
        do throws(UnsupportedVersion) {
            contents = try HistoryFile.read(entries.isEmpty ? bytes : bytes + entries)
        } catch {
            throw unsupported(historyPath, error)
        }
        // With history off, a rewrite only erases: it keeps what the file held.
        let pruning = HistoryPruning(
            retention: historyRetention.keepsHistory ? historyRetention : .unpruned, erasing: erasing)
        var (file, undecodable) = pruning.prune(contents)
        if let generation {
            file.replaceSubrange(
                0..<FileHeader.size,
                with: HistoryFile.header(bodyLength: file.count - FileHeader.size, generation: generation))
        }
        if let damage = contents.damage ?? (undecodable > 0 ? .undecodableHistory(undecodable) : nil) {
            try reportReplacing(bytes, damage, erasing: erasing, &problems)
        }
        try replaceHistory(with: file, flushesToDisk: flushesToDisk, &problems)
    }

    /// Reports a history file about to be replaced, after keeping a copy of what it held.
    ///
    /// What did not verify may be all someone has. No copy is kept while keys are being erased
    /// from it, since it would hold their values.
    private func reportReplacing(
        _ bytes: [UInt8],
        _ damage: DamageReport,
        erasing: Set<ArraySlice<UInt8>>,
        _ problems: inout [PreferencesError]
    ) throws(PreferencesError) {
        var damage = damage
        if erasing.isEmpty {
            damage.copyPath = try keepCopy(of: bytes, beside: historyPath)
        } else {
            damage.reason += "; no copy was kept, since it would hold values of a key kept out of history"
        }
        problems.append(PreferencesError(.damagedFile(path: historyPath, damage: damage)))
    }

    /// Replaces the history file with `bytes`, flushed in synchronous durability only.
    private func replaceHistory(
        with bytes: [UInt8],
        flushesToDisk: Bool,
        _ problems: inout [PreferencesError]
    ) throws(PreferencesError) {
        if let warning = try fileSystem.replaceFile(
            at: historyPath, with: bytes, ownedLike: location, persistence: flushesToDisk ? .flushed : .deferred)
        {
            problems.append(warning)
        }
    }
}

extension FileEngine {
    /// The records of the history file and of the log, in commit order, and the damage found.
    ///
    /// Read without a lock, so that no writer waits for it: the log first, then the history file.
    /// A compaction between the two reads moves records the log read already into the history
    /// file, where they are read again and kept once; an append to the history file writes its
    /// header after its frames, and a pruning replaces the file whole.
    func history() throws(PreferencesError) -> (records: [HistoryRecord], problems: [PreferencesError]) {
        var logRecords: [HistoryRecord] = []
        if let log = try fileSystem.openExisting(at: logPath, readOnly: true) {
            let bytes = try fileSystem.contents(of: log, from: 0)
            do throws(UnsupportedVersion) {
                let replay = try LogFile.replay(bytes, acknowledged: lockFile?.acknowledged)
                if replay.headerIsValid {
                    logRecords = replay.records.map { HistoryRecord(generation: replay.generation, record: $0) }
                }
            } catch {
                throw unsupported(logPath, error)
            }
        }
        var problems: [PreferencesError] = []
        var records: [HistoryRecord] = []
        if let file = try readHistoryFile() {
            records = file.records
            if let damage = file.damage {
                problems.append(PreferencesError(.damagedFile(path: historyPath, damage: damage)))
            }
        }
        return (Self.inCommitOrder(records + logRecords), problems)
    }

    /// The history file's records that decode, in file order, and the damage found; `nil` when
    /// there is no history file.
    func readHistoryFile() throws(PreferencesError) -> (
        bytes: [UInt8], records: [HistoryRecord], damage: DamageReport?
    )? {
        guard let file = try fileSystem.openExisting(at: historyPath, readOnly: true) else { return nil }
        let bytes = try fileSystem.contents(of: file, from: 0)
        let contents: HistoryFile.Contents
        do throws(UnsupportedVersion) {
            contents = try HistoryFile.read(bytes)
        } catch {
            throw unsupported(historyPath, error)
        }
        var records: [HistoryRecord] = []
        var undecodable = 0
        for entry in contents.entries {
            var reader = ByteReader(bytes, range: entry.record)
            if let record = try? Record(payload: &reader) {
                records.append(HistoryRecord(generation: entry.generation, record: record))
            } else {
                undecodable += 1
            }
        }
        return (bytes, records, contents.damage ?? (undecodable > 0 ? .undecodableHistory(undecodable) : nil))
    }

    /// Writes the history file again with what verifies, after keeping a copy, if it is damaged.
    ///
    /// For `prefs repair`; call it inside ``withExclusiveAccess(_:_:)``.
    ///
    /// - Returns: The damage found, with where the copy was kept.
    func repairHistory(flushesToDisk: Bool) throws(PreferencesError) -> [PreferencesError] {
        guard let file = try readHistoryFile(), file.damage != nil else { return [] }
        var problems: [PreferencesError] = []
        // The last generation appended, as the header said, if it verifies.
        let generation = (try? HistoryFile.bodyEnd(ofHeader: Array(file.bytes.prefix(FileHeader.size))))?.generation
        try rewriteHistory(file.bytes, appending: [], generation: generation, erasing: [], flushesToDisk, &problems)
        return problems
    }

    /// Each record once, in commit order, with the program its process last named in its log.
    static func inCommitOrder(_ records: [HistoryRecord]) -> [HistoryRecord] {
        var latest: [RecordIdentity: Int] = [:]
        for (index, item) in records.enumerated() {
            if let sequence = item.record.sequence {
                latest[RecordIdentity(generation: item.generation, sequence: sequence)] = index
            }
        }
        var programs: [ProcessInLog: String] = [:]
        var ordered: [HistoryRecord] = []
        for (index, var item) in records.enumerated() {
            if let sequence = item.record.sequence,
                latest[RecordIdentity(generation: item.generation, sequence: sequence)] != index
            {
                continue
            }
            if let processID = item.record.stamp.processID {
                let process = ProcessInLog(generation: item.generation, processID: processID)
                if let program = item.record.stamp.program {
                    programs[process] = program
                }
                item.program = programs[process]
            }
            ordered.append(item)
        }
        return ordered.sorted {
            ($0.generation, $0.record.sequence ?? 0) < ($1.generation, $1.record.sequence ?? 0)
        }
    }

    /// Drops every record of history, inside ``withExclusiveAccess(_:_:)``.
    ///
    /// Folds the log into the snapshot without moving its records, then removes the history file.
    func clearHistory(flushesToDisk: Bool) throws(PreferencesError) -> [PreferencesError] {
        var problems: [PreferencesError] = []
        try state.withLock { (state: inout State) throws(PreferencesError) in
            guard lockFile != nil, state.refusal == nil else { throw refusal(state) }
            try compact(&state, flushesToDisk: flushesToDisk, movesHistory: false, reporting: &problems)
        }
        try fileSystem.removeFile(at: historyPath)
        // The copies kept of a damaged history hold old values too.
        for copy in fileSystem.copies(of: historyPath) {
            try fileSystem.removeFile(at: copy)
        }
        return problems
    }
}
