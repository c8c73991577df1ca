import Foundation
import Testing

@testable import Preferences

/// Every input the fuzzer kept (`Fuzz/corpus`) and every crasher it found (`Fuzz/crashers`),
/// through the same decoders and checks as `Fuzz/FuzzDecoders.swift`: none may crash, and what
/// decodes cleanly must encode back to the same bytes, each entry found by looking it up.
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
        for input in Self.inputs {
            let bytes = Array(try Data(contentsOf: input))
            if let contents = try? SnapshotFile.decode(bytes), contents.damage == nil {
                let entries = contents.entries.all
                #expect(
                    SnapshotFile.encode(entries, generation: contents.generation) == bytes,
                    "\(input.lastPathComponent) decodes cleanly but does not encode back"
                )
                for (key, value) in entries {
                    #expect(contents.entries[key] == value, "\(input.lastPathComponent): \(key) is not found")
                }
                clean += 1
            }
            if let index = SnapshotIndex(verified: bytes, from: 0) {
                indexed += 1
                let entries = index.decodeAll()
                for (key, value) in entries {
                    #expect(index.value(for: key) == value, "\(input.lastPathComponent): \(key) is not found")
                }
            }
            _ = try? LogFile.replay(bytes)
            var reader = ByteReader(bytes, range: 0..<bytes.count)
            _ = try? Record(payload: &reader)
        }
        #expect(clean > 0, "no input is a clean snapshot; the round-trip check never ran")
        #expect(indexed > 0, "no input is an indexable body; the lookup check never ran")
    }
}
