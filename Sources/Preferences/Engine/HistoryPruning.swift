/// Rewrites a history file within its limits: the last changes of each key, at most so many
/// bytes in all, nothing of the keys to erase, and each record once.
///
/// Reads each record only as far as its keys and stamp: pruning runs within a compaction, and a
/// full decode of every record would cost it several times more. Records are kept or dropped
/// whole, newest first: a record is kept while one of its keys has fewer than
/// ``HistoryRetention/changesPerKey`` newer changes kept, and the kept records fit in
/// ``HistoryRetention/maximumBytes``. A record kept is copied as it is, but for two cases, which
/// are decoded and written again: one that changes a key to erase besides others (without that
/// key's change), and the first kept of a process in a log when the record that named the
/// process's program was dropped (with the program's name).
struct HistoryPruning {
    let retention: HistoryRetention
    /// Keys whose changes go, as a record holds a key: both strings, length-prefixed.
    let erasing: Set<ArraySlice<UInt8>>

    /// What pruning needs of a record.
    private struct Summary {
        var entry: HistoryFile.Entry
        var sequence: UInt64?
        var processID: Int32?
        var program: String?
        var keys: [ArraySlice<UInt8>]
    }

    /// A new history file holding what `contents` keeps, and how many records were dropped as
    /// not decoding (damage the caller reports).
    func prune(_ contents: HistoryFile.Contents) -> (file: [UInt8], undecodable: Int) {
        let bytes = contents.bytes
        var summaries: [Summary] = []
        summaries.reserveCapacity(contents.entries.count)
        var undecodable = 0
        for entry in contents.entries {
            if let summary = Self.summary(of: entry, in: bytes) {
                summaries.append(summary)
            } else {
                undecodable += 1
            }
        }
        let kept = select(summaries)
        var writer = ByteWriter(capacity: FileHeader.size + kept.reduce(0) { $0 + summaries[$1].entry.frame.count })
        writer.append(contentsOf: HistoryFile.header(bodyLength: 0))
        // Programs in file order: the name a process last gave in each log, and the one the new
        // file last gave.
        var programs: [ProcessInLog: String] = [:]
        var written: [ProcessInLog: String] = [:]
        var next = kept.makeIterator()
        var nextKept = next.next()
        var markedGeneration: UInt64?
        for (index, summary) in summaries.enumerated() {
            let process = summary.processID.map { ProcessInLog(generation: summary.entry.generation, processID: $0) }
            if let process, let program = summary.program {
                programs[process] = program
            }
            guard index == nextKept else { continue }
            nextKept = next.next()
            if markedGeneration != summary.entry.generation {
                HistoryFile.appendMarker(generation: summary.entry.generation, to: &writer)
                markedGeneration = summary.entry.generation
            }
            var program: String?
            if let process, let known = programs[process], written[process] != known {
                written[process] = known
                program = summary.program == nil ? known : nil
            }
            let erases = summary.keys.contains { erasing.contains($0) }
            guard program != nil || erases else {
                writer.append(contentsOf: bytes[summary.entry.frame])
                continue
            }
            rewrite(summary, in: bytes, naming: program, to: &writer)
        }
        var file = writer.bytes
        file.replaceSubrange(0..<FileHeader.size, with: HistoryFile.header(bodyLength: file.count - FileHeader.size))
        return (file, undecodable)
    }

    /// The indices of the records to keep, in file order.
    private func select(_ summaries: [Summary]) -> [Int] {
        var kept: [Int] = []
        var counts: [ArraySlice<UInt8>: Int] = [:]
        var seen: Set<RecordIdentity> = []
        var bytes = 0
        for index in summaries.indices.reversed() {
            let summary = summaries[index]
            if let sequence = summary.sequence,
                !seen.insert(RecordIdentity(generation: summary.entry.generation, sequence: sequence)).inserted
            {
                continue
            }
            var wanted = false
            for key in summary.keys where !erasing.contains(key) {
                let count = counts[key, default: 0]
                counts[key] = count + 1
                wanted = wanted || count < retention.changesPerKey
            }
            guard wanted else { continue }
            bytes += summary.entry.frame.count
            guard bytes <= retention.maximumBytes else { break }
            kept.append(index)
        }
        return kept.reversed()
    }

    /// Writes the record again: without the changes of keys to erase, and naming `program` if given.
    private func rewrite(_ summary: Summary, in bytes: [UInt8], naming program: String?, to writer: inout ByteWriter) {
        var reader = ByteReader(bytes, range: summary.entry.record)
        guard var record = try? Record(payload: &reader) else { return }
        record.changes.removeAll { change in
            erasing.contains(Self.keyBytes(change.key)[...])
        }
        guard !record.changes.isEmpty else { return }
        if let program {
            record.stamp.program = program
        }
        RecordFrame.append(record, to: &writer)
    }

    /// A key as a record holds it: both strings, length-prefixed.
    static func keyBytes(_ key: ResolvedKey) -> [UInt8] {
        var writer = ByteWriter(capacity: key.namespace.utf8.count + key.name.utf8.count + 4)
        writer.appendLengthPrefixed(key.namespace)
        writer.appendLengthPrefixed(key.name)
        return writer.bytes
    }

    /// Reads a record as far as pruning needs; `nil` if it does not decode that far.
    private static func summary(of entry: HistoryFile.Entry, in bytes: [UInt8]) -> Summary? {
        var reader = ByteReader(bytes, range: entry.record)
        do throws(FormatError) {
            let header = try Record.readHeader(&reader)
            var keys: [ArraySlice<UInt8>] = []
            keys.reserveCapacity(header.changeCount)
            for index in 0..<header.changeCount {
                let operation = try reader.readByte() & 0x7F
                let start = reader.position
                _ = try reader.skipLengthPrefixedString()
                let name = try reader.skipLengthPrefixedString()
                keys.append(bytes[start..<name.range.upperBound])
                // The last change's value runs to the end; another's must be read to find the next.
                if operation == 1 && index < header.changeCount - 1 {
                    _ = try StoredValue(from: &reader)
                }
            }
            return Summary(
                entry: entry, sequence: header.sequence, processID: header.stamp.processID,
                program: header.stamp.program, keys: keys)
        } catch {
            return nil
        }
    }
}

/// A record's identity across the history: its log's generation and its number in that log.
struct RecordIdentity: Hashable {
    var generation: UInt64
    var sequence: UInt64
}

/// A process as the records of one log name it.
struct ProcessInLog: Hashable {
    var generation: UInt64
    var processID: Int32
}
