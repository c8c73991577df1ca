#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Rewrites a history file within its limits: the last changes of each key, at most so many
/// bytes in all, nothing of the keys to erase, and each record once.
///
/// Records are kept or dropped whole, newest first: a record is kept while one of its keys has
/// fewer than ``HistoryRetention/changesPerKey`` newer changes kept, and the kept records fit in
/// ``HistoryRetention/maximumBytes``. A record kept is copied as it is, but for two cases, which
/// are decoded and written again: one that changes a key to erase besides others (without that
/// key's change), and the first kept of a process in a log when the record that named the
/// process's program was dropped (with the program's name).
///
/// Pruning runs within a compaction, over a file of up to twice its limit, so it reads each record
/// only as far as its stamp and keys, and knows a key by its bytes where the file holds them: a
/// full decode, or a copy of each key, cost a compaction ten times as much.
struct HistoryPruning {
    let retention: HistoryRetention
    /// Keys whose changes go, as a record holds a key: both strings, length-prefixed.
    let erasing: Set<ArraySlice<UInt8>>

    /// A key as the file holds it, where it holds it, with its bytes' hash.
    ///
    /// Valid only while the file's bytes are: inside ``prune(_:)``.
    private struct KeyBytes: Equatable {
        let start: UnsafeRawPointer
        let count: Int
        let hash: Int

        init(_ bytes: UnsafeRawBufferPointer) {
            start = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
            count = bytes.count
            // FNV-1a: a key is a few dozen bytes, which a seeded `Hasher` takes several times longer over.
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            }
            self.hash = Int(truncatingIfNeeded: hash)
        }

        static func == (lhs: KeyBytes, rhs: KeyBytes) -> Bool {
            lhs.hash == rhs.hash && lhs.count == rhs.count && memcmp(lhs.start, rhs.start, lhs.count) == 0
        }

        var array: ArraySlice<UInt8> { ArraySlice(UnsafeRawBufferPointer(start: start, count: count)) }
    }

    /// What pruning needs of a record.
    private struct Summary {
        var entry: HistoryFile.Entry
        var sequence: UInt64?
        var processID: Int32?
        var program: String?
        /// Where its keys' numbers lie in ``Keys/ofRecords``.
        var keys: Range<Int>
    }

    /// Every record's keys, each numbered once: counting a key's changes is then an array's
    /// element, not a lookup of its bytes.
    ///
    /// Keys are found in a table of their own, open-addressed by the bytes' hash: a `Dictionary`
    /// would seed and run a `Hasher` at every record.
    private struct Keys {
        /// Each distinct key, by its number.
        var distinct: [KeyBytes] = []
        /// Whether each distinct key, by its number, is one to erase.
        var erased: [Bool] = []
        /// How many of each distinct key's changes were kept, by its number.
        var counts: [Int] = []
        /// The numbers of each record's keys, in the order the records were read.
        var ofRecords: [Int] = []
        /// Each slot a key's number plus one, or zero: a power of two at least twice the keys.
        private var slots = [Int](repeating: 0, count: 1024)
        let erasing: Set<ArraySlice<UInt8>>

        init(erasing: Set<ArraySlice<UInt8>>) {
            self.erasing = erasing
        }

        mutating func add(_ key: KeyBytes) {
            if 2 * distinct.count >= slots.count {
                grow()
            }
            let mask = slots.count - 1
            var slot = key.hash & mask
            while slots[slot] != 0 {
                let number = slots[slot] - 1
                if distinct[number] == key {
                    ofRecords.append(number)
                    return
                }
                slot = (slot + 1) & mask
            }
            slots[slot] = distinct.count + 1
            ofRecords.append(distinct.count)
            distinct.append(key)
            counts.append(0)
            erased.append(!erasing.isEmpty && erasing.contains(key.array))
        }

        private mutating func grow() {
            slots = [Int](repeating: 0, count: 2 * slots.count)
            let mask = slots.count - 1
            for (number, key) in distinct.enumerated() {
                var slot = key.hash & mask
                while slots[slot] != 0 {
                    slot = (slot + 1) & mask
                }
                slots[slot] = number + 1
            }
        }
    }

    /// A new history file holding what `contents` keeps, and how many records were dropped as
    /// not decoding (damage the caller reports).
    ///
    /// Records are read newest first, and only as far back as the limits keep them: those older
    /// than the byte limit are dropped unread, but for the name of a program, which a record's
    /// flags say it holds.
    func prune(_ contents: HistoryFile.Contents) -> (file: [UInt8], undecodable: Int) {
        contents.bytes.withUnsafeBytes { buffer in
            var summaries = [Summary?](repeating: nil, count: contents.entries.count)
            var keys = Keys(erasing: erasing)
            var undecodable = 0
            let kept = select(contents, buffer, &summaries, &keys, &undecodable)
            let file = write(kept, of: contents, summaries, keys, buffer, undecodable: &undecodable)
            return (file, undecodable)
        }
    }

    /// The indices of the records to keep, in file order, reading each record it comes to.
    private func select(
        _ contents: HistoryFile.Contents,
        _ buffer: UnsafeRawBufferPointer,
        _ summaries: inout [Summary?],
        _ keys: inout Keys,
        _ undecodable: inout Int
    ) -> [Int] {
        var kept: [Int] = []
        // A record appended twice (by a compaction that failed after appending, then again) is the
        // same generation's numbers again, older in the file: at or above the least number seen of
        // it. The file holds one generation after another, so the last one's is kept at hand.
        var leastSequence: [UInt64: UInt64] = [:]
        var current: (generation: UInt64, least: UInt64)?
        var bytes = 0
        for index in contents.entries.indices.reversed() {
            guard let summary = Self.summary(of: contents.entries[index], in: contents.bytes, buffer, keys: &keys)
            else {
                undecodable += 1
                continue
            }
            summaries[index] = summary
            if let sequence = summary.sequence {
                let generation = summary.entry.generation
                if current?.generation != generation {
                    if let current {
                        leastSequence[current.generation] = current.least
                    }
                    current = (generation, leastSequence[generation] ?? .max)
                }
                guard sequence < current?.least ?? .max else { continue }
                current?.least = sequence
            }
            var wanted = false
            for position in summary.keys {
                let number = keys.ofRecords[position]
                guard !keys.erased[number] else { continue }
                wanted = wanted || keys.counts[number] < retention.changesPerKey
                keys.counts[number] += 1
            }
            guard wanted else { continue }
            bytes += summary.entry.frame.count
            guard bytes <= retention.maximumBytes else { break }
            kept.append(index)
        }
        return kept.reversed()
    }

    /// The new file: its header, and each kept record after a marker of its generation.
    private func write(
        _ kept: [Int],
        of contents: HistoryFile.Contents,
        _ summaries: [Summary?],
        _ keys: Keys,
        _ buffer: UnsafeRawBufferPointer,
        undecodable: inout Int
    ) -> [UInt8] {
        var writer = ByteWriter(
            capacity: FileHeader.size + kept.reduce(0) { $0 + contents.entries[$1].frame.count } + 64)
        writer.append(contentsOf: HistoryFile.header(bodyLength: 0))
        // Programs in file order: the name a process last gave in each log, and the one the new
        // file last gave.
        var programs: [ProcessInLog: String] = [:]
        var written: [ProcessInLog: String] = [:]
        var next = kept.makeIterator()
        var nextKept = next.next()
        var markedGeneration: UInt64?
        for (index, entry) in contents.entries.enumerated() {
            if let named = Self.programNamed(by: entry, summaries[index], in: contents.bytes) {
                programs[ProcessInLog(generation: entry.generation, processID: named.processID)] = named.program
            }
            guard index == nextKept, let summary = summaries[index] else { continue }
            nextKept = next.next()
            if markedGeneration != entry.generation {
                HistoryFile.appendMarker(generation: entry.generation, to: &writer)
                markedGeneration = entry.generation
            }
            let process = summary.processID.map { ProcessInLog(generation: entry.generation, processID: $0) }
            var program: String?
            if let process, let known = programs[process], written[process] != known {
                written[process] = known
                program = summary.program == nil ? known : nil
            }
            let erases = keys.ofRecords[summary.keys].contains { keys.erased[$0] }
            guard program != nil || erases else {
                writer.append(UnsafeRawBufferPointer(rebasing: buffer[entry.frame]))
                continue
            }
            if !rewrite(summary, in: contents.bytes, naming: program, to: &writer) {
                undecodable += 1
            }
        }
        var file = writer.bytes
        file.replaceSubrange(0..<FileHeader.size, with: HistoryFile.header(bodyLength: file.count - FileHeader.size))
        return file
    }

    /// The program a record names, with its process: from its summary when it was read, or else
    /// from its header when its flags say it names one.
    private static func programNamed(
        by entry: HistoryFile.Entry,
        _ summary: Summary?,
        in bytes: [UInt8]
    ) -> (processID: Int32, program: String)? {
        if let summary {
            guard let processID = summary.processID, let program = summary.program else { return nil }
            return (processID, program)
        }
        guard bytes[entry.record.lowerBound] & Record.Flag.program != 0 else { return nil }
        var reader = ByteReader(bytes, range: entry.record)
        guard let header = try? Record.readHeader(&reader), let processID = header.stamp.processID,
            let program = header.stamp.program
        else { return nil }
        return (processID, program)
    }

    /// Writes the record again: without the changes of keys to erase, and naming `program` if given.
    ///
    /// - Returns: `false` if the record does not decode, and was dropped.
    @discardableResult
    private func rewrite(
        _ summary: Summary,
        in bytes: [UInt8],
        naming program: String?,
        to writer: inout ByteWriter
    ) -> Bool {
        var reader = ByteReader(bytes, range: summary.entry.record)
        guard var record = try? Record(payload: &reader) else { return false }
        record.changes.removeAll { change in
            erasing.contains(Self.keyBytes(change.key)[...])
        }
        guard !record.changes.isEmpty else { return true }
        if let program {
            record.stamp.program = program
        }
        RecordFrame.append(record, to: &writer)
        return true
    }

    /// A key as a record holds it: both strings, length-prefixed.
    static func keyBytes(_ key: ResolvedKey) -> [UInt8] {
        var writer = ByteWriter(capacity: key.namespace.utf8.count + key.name.utf8.count + 4)
        writer.appendLengthPrefixed(key.namespace)
        writer.appendLengthPrefixed(key.name)
        return writer.bytes
    }

    /// Reads a record as far as pruning needs, adding its keys to `keys`; `nil` if it does not
    /// decode that far.
    private static func summary(
        of entry: HistoryFile.Entry,
        in bytes: [UInt8],
        _ buffer: UnsafeRawBufferPointer,
        keys: inout Keys
    ) -> Summary? {
        var reader = ByteReader(bytes, range: entry.record)
        let first = keys.ofRecords.count
        do throws(FormatError) {
            let header = try Record.readHeader(&reader)
            for index in 0..<header.changeCount {
                let operation = try reader.readByte() & 0x7F
                let start = reader.position
                _ = try reader.skipLengthPrefixedString()
                let name = try reader.skipLengthPrefixedString()
                keys.add(KeyBytes(UnsafeRawBufferPointer(rebasing: buffer[start..<name.range.upperBound])))
                // The last change's value runs to the end; another's must be read to find the next.
                if operation == 1 && index < header.changeCount - 1 {
                    _ = try StoredValue(from: &reader)
                }
            }
            return Summary(
                entry: entry, sequence: header.sequence, processID: header.stamp.processID,
                program: header.stamp.program, keys: first..<keys.ofRecords.count)
        } catch {
            // Its keys stay numbered; numbers no record refers to count nothing.
            keys.ofRecords.removeSubrange(first...)
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
