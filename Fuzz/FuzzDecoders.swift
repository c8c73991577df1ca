// A libFuzzer target over the decoders that read bytes from disk: the snapshot, its index, the log,
// a bare record payload, and the history file with its pruning. Built together with the library's sources as one module by Fuzz/run.sh,
// so that it reaches the internal decoders. Any crash, hang or sanitizer report is a bug.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let contents = try? SnapshotFile.decode(bytes), contents.damage == nil {
        // What decodes cleanly, every value included, must encode back to the same bytes, and each
        // entry be found by looking it up, as the store's reads look it up.
        var takenIn = contents.entries
        let everyValueDecodes = takenIn.takeInSnapshot() == nil
        let entries = contents.entries.all
        // Only a snapshot with a table is in the form this version writes.
        precondition(
            !everyValueDecodes || !hasTable(bytes)
                || SnapshotFile.encode(entries, generation: contents.generation) == bytes)
        for (key, value) in entries {
            precondition(contents.entries[key] == value)
        }
    }
    // The index takes only bodies whose checksum matched, which random bytes seldom are: it is fed
    // them directly. Its values are checked only as they are decoded: every entry that decodes must
    // be found where decoding all puts it.
    if let index = SnapshotIndex(verified: bytes, from: 0) {
        // Keys that differ only as canonically equivalent strings are one entry, as in decoding.
        let entries = index.decodeAll().entries
        for (key, value) in entries {
            precondition(index.value(for: key) == value)
        }
    }
    // A table of records, fed directly: the frame that ends the input, read as one. Whatever its
    // offsets say, no lookup, listing or walk may read outside the records; where it places every
    // record once in order, each entry is found where decoding all of them puts it.
    if let tableOffset = frameEndingTheInput(bytes),
        let index = SnapshotIndex(verified: FileBytes(copying: bytes), recordsFrom: 0, tableAt: tableOffset)
    {
        let placesEveryRecord = index.tablePlacesEveryRecord()
        for (key, value) in index.decodeAll().entries {
            let found = index.value(for: key)
            precondition(!placesEveryRecord || found == value)
        }
        let toItself = index.changes(to: index)
        precondition(placesEveryRecord || toItself == nil)
        precondition(!placesEveryRecord || !index.keysAreASCII || toItself == [])
    }
    // Two bodies, the input's halves: what changed between them, walked as bytes, must be what
    // comparing every entry finds.
    let half = bytes.count / 2
    if let old = SnapshotIndex(verified: Array(bytes[..<half]), from: 0),
        let new = SnapshotIndex(verified: Array(bytes[half...]), from: 0),
        let changes = old.changes(to: new)
    {
        let expected = EntryChange.differences(from: old.decodeAll().entries, to: new.decodeAll().entries)
        precondition(changes.count == expected.count)
        let byKey = Dictionary(changes.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        precondition(expected.allSatisfy { byKey[$0.key] == $0.value })
    }
    _ = try? LogFile.replay(bytes)
    var reader = ByteReader(bytes, range: 0..<bytes.count)
    _ = try? Record(payload: &reader)
    // Read as a history file, then pruned: what pruning writes must verify, and hold no record
    // the input did not.
    if let history = try? HistoryFile.read(bytes) {
        let retention = HistoryRetention(changesPerKey: 2, maximumBytes: 4_096)
        let pruned = HistoryPruning(retention: retention, erasing: []).prune(history)
        let reread = try? HistoryFile.read(pruned.file)
        precondition(reread?.damage == nil && (reread?.entries.count ?? .max) <= history.entries.count)
    }
    return 0
}

/// Whether `bytes` begin with a snapshot's header that places a table of records.
func hasTable(_ bytes: [UInt8]) -> Bool {
    guard case .valid(let header) = FileHeader.check(Array(bytes.prefix(FileHeader.size)), expecting: .snapshot)
    else { return false }
    return header.tableOffset != 0
}

/// Where a frame starts that ends exactly where `bytes` do, if one does.
func frameEndingTheInput(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBufferPointer { buffer in
        (0..<buffer.count).first { RecordFrame.payload(in: buffer, at: $0)?.payload.upperBound == buffer.count }
    }
}
