import Foundation
import Testing

@testable import Preferences

/// Every input the fuzzer kept (`Fuzz/corpus`) and every crasher it found (`Fuzz/crashers`),
/// through the same decoders and checks as `Fuzz/FuzzDecoders.swift`: none may crash, and what
/// decodes cleanly must encode back to the same bytes, each entry found by looking it up, and the
/// changes between an input's halves, read as two snapshot bodies, those comparing every entry finds;
/// the frame that ends an input, read as a snapshot's table of records, never leads a lookup astray
/// of the bytes; and each input read as a history file and pruned must give a history that verifies.
struct FuzzRegressionTests {
    static let inputs: [URL] = {
        let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz")
        return ["corpus", "crashers"].flatMap { folder -> [URL] in
            let directory = fuzz.appendingPathComponent(folder)
            let names = (try? FileManager().contentsOfDirectory(atPath: directory.path)) ?? []
            return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
        }
    }()

    @Test func theCorpusIsThere() {
        #expect(Self.inputs.count > 100)
    }

    @Test func everyKeptInputDecodesWithoutCrashing() throws {
        var indexed = 0
        var tabled = 0
        var roundTripped = 0
        var compared = 0
        var pruned = 0
        for input in Self.inputs {
            let bytes = Array(try Data(contentsOf: input))
            if let contents = try? SnapshotFile.decode(bytes), contents.damage == nil {
                var takenIn = contents.entries
                let everyValueDecodes = takenIn.takeInSnapshot() == nil
                let entries = contents.entries.all
                // Only a snapshot with a table is in the form this version writes.
                if everyValueDecodes && hasTable(bytes) {
                    roundTripped += 1
                }
                #expect(
                    !everyValueDecodes || !hasTable(bytes)
                        || SnapshotFile.encode(entries, generation: contents.generation) == bytes,
                    "\(input.lastPathComponent) decodes cleanly but does not encode back"
                )
                for (key, value) in entries {
                    #expect(contents.entries[key] == value, "\(input.lastPathComponent): \(key) is not found")
                }
            }
            if let index = SnapshotIndex(verified: bytes, from: 0) {
                indexed += 1
                let entries = index.decodeAll().entries
                for (key, value) in entries {
                    #expect(index.value(for: key) == value, "\(input.lastPathComponent): \(key) is not found")
                }
            }
            if let tableOffset = frameEndingTheInput(bytes),
                let index = SnapshotIndex(verified: FileBytes(copying: bytes), recordsFrom: 0, tableAt: tableOffset)
            {
                tabled += 1
                // Whatever the table says, nothing is read outside the bytes; where it places every
                // record once in order, each entry is found where decoding all of them puts it.
                let placesEveryRecord = index.tablePlacesEveryRecord()
                for (key, value) in index.decodeAll().entries {
                    let found = index.value(for: key)
                    #expect(!placesEveryRecord || found == value, "\(input.lastPathComponent): \(key)")
                }
                // A snapshot has not changed from itself; a table that places records wrongly is
                // no walk of changes at all.
                let toItself = index.changes(to: index)
                #expect(placesEveryRecord || toItself == nil, "\(input.lastPathComponent)")
                #expect(!placesEveryRecord || !index.keysAreASCII || toItself == [], "\(input.lastPathComponent)")
            }
            let half = bytes.count / 2
            if let old = SnapshotIndex(verified: Array(bytes[..<half]), from: 0),
                let new = SnapshotIndex(verified: Array(bytes[half...]), from: 0),
                let changes = old.changes(to: new)
            {
                compared += 1
                let expected = EntryChange.differences(from: old.decodeAll().entries, to: new.decodeAll().entries)
                let byKey = Dictionary(changes.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
                #expect(changes.count == expected.count, "\(input.lastPathComponent): the changes between its halves")
                #expect(expected.allSatisfy { byKey[$0.key] == $0.value }, "\(input.lastPathComponent)")
            }
            _ = try? LogFile.replay(bytes)
            var reader = ByteReader(bytes, range: 0..<bytes.count)
            _ = try? Record(payload: &reader)
            if let history = try? HistoryFile.read(bytes) {
                let retention = HistoryRetention(changesPerKey: 2, maximumBytes: 4_096)
                let rewritten = HistoryPruning(retention: retention, erasing: []).prune(history)
                let reread = try? HistoryFile.read(rewritten.file)
                #expect(
                    reread?.damage == nil, "\(input.lastPathComponent): pruning wrote a history that does not verify")
                #expect((reread?.entries.count ?? .max) <= history.entries.count, "\(input.lastPathComponent)")
                pruned += 1
            }
        }
        #expect(pruned > 0, "no input was read as a history; the pruning check never ran")
        #expect(roundTripped > 0, "no input is a clean snapshot with a table; the round-trip check never ran")
        #expect(indexed > 0, "no input is an indexable body; the lookup check never ran")
        #expect(tabled > 0, "no input ends with a table of records; the check of tables never ran")
        #expect(compared > 0, "no input has two indexable halves; the check of changes never ran")
    }
}

/// Whether `bytes` begin with a snapshot's header that places a table of records.
private func hasTable(_ bytes: [UInt8]) -> Bool {
    guard case .valid(let header) = FileHeader.check(Array(bytes.prefix(FileHeader.size)), expecting: .snapshot)
    else { return false }
    return header.tableOffset != 0
}

/// Where a frame starts that ends exactly where `bytes` do, if one does.
private func frameEndingTheInput(_ bytes: [UInt8]) -> Int? {
    bytes.withUnsafeBufferPointer { buffer in
        (0..<buffer.count).first { RecordFrame.payload(in: buffer, at: $0)?.payload.upperBound == buffer.count }
    }
}
