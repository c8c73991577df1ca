import Foundation
import Testing

@testable import Preferences

/// Every input the fuzzer kept (`Fuzz/corpus`) and every crasher it found (`Fuzz/crashers`),
/// through the same decoders and checks as `Fuzz/FuzzDecoders.swift`: none may crash, and what
/// decodes cleanly must encode back to the same bytes, each entry found by looking it up, and the
/// changes between an input's halves, read as two snapshot bodies, those comparing every entry finds;
/// and each input read as a history file and pruned must give a history that verifies.
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
        var clean = 0
        var indexed = 0
        var compared = 0
        var pruned = 0
        for input in Self.inputs {
            let bytes = Array(try Data(contentsOf: input))
            if let contents = try? SnapshotFile.decode(bytes), contents.damage == nil {
                var takenIn = contents.entries
                let everyValueDecodes = takenIn.takeInSnapshot() == nil
                let entries = contents.entries.all
                #expect(
                    !everyValueDecodes || SnapshotFile.encode(entries, generation: contents.generation) == bytes,
                    "\(input.lastPathComponent) decodes cleanly but does not encode back"
                )
                for (key, value) in entries {
                    #expect(contents.entries[key] == value, "\(input.lastPathComponent): \(key) is not found")
                }
                clean += 1
            }
            if let index = SnapshotIndex(verified: bytes, from: 0) {
                indexed += 1
                let entries = index.decodeAll().entries
                for (key, value) in entries {
                    #expect(index.value(for: key) == value, "\(input.lastPathComponent): \(key) is not found")
                }
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
        #expect(clean > 0, "no input is a clean snapshot; the round-trip check never ran")
        #expect(indexed > 0, "no input is an indexable body; the lookup check never ran")
        #expect(compared > 0, "no input has two indexable halves; the check of changes never ran")
    }
}
