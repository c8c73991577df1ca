import PreferencesHarnessKit
import Testing

@testable import Preferences

/// The engine's entries, numbered by key and found through the hints keys carry, hold exactly what
/// a dictionary would, whatever the hints say.
struct StoredEntriesTests {
    /// Random sets and removals through a pool of key objects, twins among them (equal keys held by
    /// other objects), applied to two sets of entries in turn, so that each finds hints the other
    /// gave, and to copies; checked against a dictionary after every step, and as a snapshot.
    ///
    /// Fails when a hint is trusted unchecked, when a removed key's return does not reach the
    /// snapshot's order, or when a copy shares what the other changed.
    @Test(arguments: [false, true])
    func numberedEntriesHoldWhatADictionaryHolds(startingFromASnapshot: Bool) throws {
        var generator = SplitMix64(seed: startingFromASnapshot ? 11 : 7)
        let names = (0..<24).map { "key\($0)" }
        // Three objects for each of the first eight names, one for the rest.
        let pool = names.enumerated().flatMap { index, name in
            (0..<(index < 8 ? 3 : 1)).map { _ in ResolvedKey(namespace: index % 5 == 0 ? "" : "app", name: name) }
        }
        var initial: [ResolvedKey: StoredValue] = [:]
        for index in stride(from: 0, to: names.count, by: 2) {
            initial[ResolvedKey(namespace: index % 5 == 0 ? "" : "app", name: names[index])] = .signed(Int64(index))
        }
        func makeEntries() throws -> StoredEntries {
            guard startingFromASnapshot else { return StoredEntries(initial) }
            return try SnapshotFile.decode(SnapshotFile.encode(initial, generation: 1)).entries
        }
        var entries = [try makeEntries(), try makeEntries()]
        var expected = [initial, initial]
        for step in 0..<3_000 {
            let side = Int.random(in: 0...1, using: &generator)
            let key = pool.randomElement(using: &generator)!
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                let value = StoredValue.signed(Int64(step))
                entries[side].set(value, for: key)
                expected[side][key] = value
            case 6..<8:
                entries[side].set(nil, for: key)
                expected[side][key] = nil
            case 8:
                // A snapshot, as a compaction writes one: the same bytes a dictionary's would make.
                let isTheSameFile =
                    SnapshotFile.encode(&entries[side], generation: 2)
                    == SnapshotFile.encode(expected[side], generation: 2)
                #expect(isTheSameFile, "step \(step)")
            default:
                // A copy that goes its own way: each keeps what it had.
                var copy = entries[side]
                copy.set(.bool(true), for: key)
                #expect(copy[key] == .bool(true))
            }
            for probe in pool {
                #expect(entries[side][probe] == expected[side][probe], "step \(step), \(probe.name)")
            }
        }
        for side in 0...1 {
            #expect(entries[side].all == expected[side])
            #expect(entries[side].changes(to: StoredEntries(expected[side])).isEmpty)
        }
    }

    /// Keys removed are forgotten at the next snapshot once they are most of those numbered, and the
    /// rest keep their values and take new writes, their hints now naming other numbers.
    @Test func keysRemovedForMostAreForgottenAtTheNextSnapshot() {
        let keys = (0..<100).map { ResolvedKey(namespace: "app", name: "key\($0)") }
        var entries = StoredEntries()
        for key in keys {
            entries.set(.signed(1), for: key)
        }
        _ = SnapshotFile.encode(&entries, generation: 1)
        for key in keys.dropFirst(10) {
            entries.set(nil, for: key)
        }
        #expect(entries.countUpperBound == 100)
        let kept = Dictionary(uniqueKeysWithValues: keys.prefix(10).map { ($0, StoredValue.signed(1)) })
        let isTheSameFile = SnapshotFile.encode(&entries, generation: 2) == SnapshotFile.encode(kept, generation: 2)
        #expect(isTheSameFile)
        #expect(entries.countUpperBound == 10)
        for (index, key) in keys.enumerated() {
            entries.set(.signed(Int64(index)), for: key)
        }
        #expect(entries.all == Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, .signed(Int64($0))) }))
    }

    /// A key removed after a snapshot and set again, through the very key object whose hint still
    /// names its number, is in the next snapshot.
    @Test func aKeyBackAfterARemovalIsInTheNextSnapshot() {
        let keys = (0..<4).map { ResolvedKey(namespace: "app", name: "key\($0)") }
        var entries = StoredEntries()
        for key in keys {
            entries.set(.bool(true), for: key)
        }
        _ = SnapshotFile.encode(&entries, generation: 1)
        entries.set(nil, for: keys[2])
        _ = SnapshotFile.encode(&entries, generation: 2)
        entries.set(.bool(false), for: keys[2])
        let expected = Dictionary(uniqueKeysWithValues: keys.map { ($0, StoredValue.bool($0 != keys[2])) })
        let isTheSameFile =
            SnapshotFile.encode(&entries, generation: 3) == SnapshotFile.encode(expected, generation: 3)
        #expect(isTheSameFile)
    }
}
