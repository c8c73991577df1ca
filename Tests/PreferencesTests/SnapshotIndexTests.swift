import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// A snapshot opens as an index and decodes each entry when it is looked up: every lookup finds
/// what decoding the whole snapshot finds, and a snapshot the index does not take is decoded whole.
struct SnapshotIndexTests {
    /// Entries under several namespaces, with names that share prefixes or differ only in length,
    /// unless `asciiOnly` some of them not ASCII, and values of every kind.
    private static func sampleEntries(count: Int, seed: UInt64, asciiOnly: Bool = false) -> [ResolvedKey: StoredValue] {
        var generator = SplitMix64(seed: seed)
        let namespaces = ["", "app", "app.extension", "com.vendor", "z"] + (asciiOnly ? [] : ["émoji🦊"])
        let stems = ["a", "ab", "abc", "b", "key", "Z", "zz"] + (asciiOnly ? [] : ["naïve", "名前", "🦊"])
        let values: [StoredValue] = [
            .bool(true), .signed(-3), .unsigned(.max), .double(-0.0), .float(1.5), .string(""),
            .string(String(repeating: "long ", count: 40)), .data(Data([0, 255])), .date(86_400),
            .url("https://example.com/ä"), .array([.bool(false), .array([.string("x")])]),
            .dictionary(["b": .signed(2), "a": .dictionary(["é": .string("ü")])]), .encoded(Data("{}".utf8)),
        ]
        var entries: [ResolvedKey: StoredValue] = [:]
        while entries.count < count {
            let namespace = namespaces[Int(generator.next() % UInt64(namespaces.count))]
            let name = stems[Int(generator.next() % UInt64(stems.count))] + String(generator.next() % 50)
            entries[ResolvedKey(namespace: namespace, name: name)] =
                values[Int(generator.next() % UInt64(values.count))]
        }
        return entries
    }

    /// The fast path that indexes the common records straight from the bytes finds exactly what
    /// the checking reader finds, or leaves the record to it: on records of every kind of key and
    /// value, strings either side of 128 bytes, each record also cut short at every length, and
    /// with each of its bytes in turn set to values at the edges of what the format allows.
    @Test func theFastPathFindsWhatTheReaderFindsOrLeavesTheRecordToIt() throws {
        var generator = SplitMix64(seed: 0xFA57)
        let strings = [
            "", "a", "key1", "app.extension", "naïve", "🦊", String(repeating: "x", count: 126),
            String(repeating: "y", count: 127), String(repeating: "z", count: 128), String(repeating: "é", count: 70),
        ]
        let values: [StoredValue?] = [
            .bool(false), .bool(true), .signed(-1), .unsigned(7), .double(2.5), .float(-1), .date(3),
            .string(""), .string("plain"), .string("ünicode"), .string(String(repeating: "s", count: 127)),
            .string(String(repeating: "s", count: 128)), .url("file:///tmp"), .data(Data()), .data(Data([1, 0x80])),
            .data(Data(repeating: 9, count: 127)), .data(Data(repeating: 9, count: 128)), .encoded(Data("{}".utf8)),
            .array([.bool(true)]), .dictionary(["k": .signed(1)]), nil,
        ]
        var plainRecords = 0
        func compare(_ payload: [UInt8]) throws {
            // Bytes before and after the payload, as in a snapshot: ASCII, so that a string read
            // past the payload's end would pass for one.
            let bytes = [0x41] + payload + [0x41]
            let range = 1..<(1 + payload.count)
            let plain = bytes.withUnsafeBufferPointer { Record.locatePlainSingleSet(in: $0, payload: range) }
            guard let plain else { return }
            plainRecords += 1
            var reader = ByteReader(bytes, range: range)
            let found = try #require(
                try? Record.locateSingleSet(payload: &reader),
                "the fast path took a record the reader refuses: \(payload)")
            #expect(found.keyIsASCII)
            #expect(plain.namespace == found.namespace && plain.name == found.name && plain.value == found.value)
        }
        for round in 0..<300 {
            let pick = { (count: Int) in Int(generator.next() % UInt64(count)) }
            let change = EntryChange(
                key: ResolvedKey(namespace: strings[pick(strings.count)], name: strings[pick(strings.count)]),
                value: values[pick(values.count)])
            var writer = ByteWriter()
            change.encode(into: &writer, sequence: round.isMultiple(of: 9) ? UInt64(round) : nil, stamp: CommitStamp())
            let payload = writer.bytes
            try compare(payload)
            for length in 0..<payload.count {
                try compare(Array(payload[..<length]))
            }
            try compare(payload + [0])
            for position in payload.indices {
                for byte: UInt8 in [0x00, 0x01, 0x02, 0x03, 0x7F, 0x80, 0xFF] where byte != payload[position] {
                    var changed = payload
                    changed[position] = byte
                    try compare(changed)
                }
            }
        }
        // About 55 of the 300 records are of a plain key and value, unchanged: the fast path is not
        // idle.
        #expect(plainRecords > 100, "\(plainRecords) records took the fast path")
    }

    /// With keys all ASCII, a lookup is a binary search over bytes; with some not, a dictionary's;
    /// through the table, or over the records a snapshot in format 1 was indexed by.
    @Test(arguments: [true, false], SnapshotLayout.allCases)
    func everyLookupFindsWhatDecodingTheWholeSnapshotFinds(asciiOnly: Bool, layout: SnapshotLayout) throws {
        let entries = Self.sampleEntries(count: 300, seed: 0x1D3, asciiOnly: asciiOnly)
        let bytes = layout.bytes(of: SnapshotFile.encode(entries, generation: 4))
        let index = try #require(SnapshotLayout.index(of: bytes))
        #expect(index.count == entries.count)
        for (key, value) in entries {
            #expect(index.value(for: key) == value, "\(key)")
        }
        #expect(index.decodeAll().entries == entries)
        #expect(index.decodeAll().unreadable.isEmpty)
        let contents = try SnapshotFile.decode(bytes)
        #expect(contents.damage == nil)
        #expect(contents.entries.all == entries)
    }

    @Test(arguments: [true, false], SnapshotLayout.allCases)
    func aKeyTheSnapshotDoesNotHoldIsNotFound(asciiOnly: Bool, layout: SnapshotLayout) throws {
        let entries = Self.sampleEntries(count: 100, seed: 0xAB5E, asciiOnly: asciiOnly)
        let index = try #require(
            SnapshotLayout.index(of: layout.bytes(of: SnapshotFile.encode(entries, generation: 1))))
        // Before the first key, after the last, between two, and near misses of every stored key:
        // the same name elsewhere, and names one character longer or shorter.
        var absent = [
            ResolvedKey(namespace: "", name: "\u{1}"), ResolvedKey(namespace: "\u{10FFFF}", name: "z"),
            ResolvedKey(namespace: "app", name: "a"),
        ]
        for key in entries.keys {
            absent.append(ResolvedKey(namespace: key.namespace + ".", name: key.name))
            absent.append(ResolvedKey(namespace: key.namespace, name: key.name + "0"))
            absent.append(ResolvedKey(namespace: key.namespace, name: String(key.name.dropLast())))
        }
        for key in absent where entries[key] == nil {
            #expect(index.value(for: key) == nil, "\(key)")
        }
    }

    /// Keys compare as strings do: a key stored in one form is found by a canonically equivalent
    /// one, as a dictionary finds it, whichever of them is ASCII.
    @Test(
        arguments: [
            ("Key", "\u{212A}ey"),  // the Kelvin sign is canonically a "K"
            ("\u{212A}ey", "Key"),
            ("caf\u{E9}", "cafe\u{301}"),  // "é" as one scalar, and as "e" and a combining accent
            ("cafe\u{301}", "caf\u{E9}"),
        ], SnapshotLayout.allCases)
    func aKeyIsFoundByACanonicallyEquivalentKey(names: (stored: String, lookedUp: String), layout: SnapshotLayout)
        throws
    {
        let (stored, lookedUp) = names
        let entries: [ResolvedKey: StoredValue] = [
            ResolvedKey(namespace: "app", name: stored): .signed(1),
            ResolvedKey(namespace: "app", name: "other"): .signed(2),
        ]
        let index = try #require(
            SnapshotLayout.index(of: layout.bytes(of: SnapshotFile.encode(entries, generation: 1))))
        let key = ResolvedKey(namespace: "app", name: lookedUp)
        #expect(entries[key] == .signed(1), "a dictionary finds it")
        #expect(index.value(for: key) == .signed(1))
        #expect(index.value(for: ResolvedKey(namespace: "app", name: "other")) == .signed(2))
    }

    @Test(arguments: SnapshotLayout.allCases)
    func anEmptySnapshotIsAnEmptyIndex(layout: SnapshotLayout) throws {
        let index = try #require(SnapshotLayout.index(of: layout.bytes(of: SnapshotFile.encode([:], generation: 1))))
        #expect(index.count == 0)
        #expect(index.value(for: ResolvedKey(namespace: "app", name: "a")) == nil)
    }

    /// Records out of order, a key twice, a record of two changes, a record with a write identifier,
    /// a removal: each is a snapshot no compaction writes, but one that verifies and decodes.
    @Test(arguments: 0..<5)
    func aSnapshotNotInTheIndexedFormIsDecodedWhole(form: Int) throws {
        let a = ResolvedKey(namespace: "app", name: "a")
        let b = ResolvedKey(namespace: "app", name: "b")
        let records: [Record] =
            switch form {
            case 0:
                [
                    Record(changes: [EntryChange(key: b, value: .signed(2))]),
                    Record(changes: [EntryChange(key: a, value: .signed(1))]),
                ]
            case 1:
                [
                    Record(changes: [EntryChange(key: a, value: .signed(1))]),
                    Record(changes: [EntryChange(key: a, value: .signed(3))]),
                ]
            case 2: [Record(changes: [EntryChange(key: a, value: .signed(1)), EntryChange(key: b, value: .signed(2))])]
            case 3: [Record(changes: [EntryChange(key: a, value: .signed(1))], writeIdentifier: "w")]
            default:
                [
                    Record(changes: [EntryChange(key: a, value: .signed(1))]),
                    Record(changes: [EntryChange(key: b, value: nil)]),
                ]
            }
        let bytes = HandWrittenSnapshot.file(frames: HandWrittenSnapshot.frames(records))
        #expect(SnapshotIndex(verified: bytes, from: FileHeader.size) == nil)
        var expected: [ResolvedKey: StoredValue] = [:]
        for record in records {
            record.apply(to: &expected)
        }
        let contents = try SnapshotFile.decode(bytes)
        #expect(contents.damage == nil)
        #expect(contents.entries.all == expected)
    }

    /// The writer puts a dictionary's keys in order; a value is decoded when looked up, which takes
    /// any order.
    @Test func aDictionaryWhoseKeysAreOutOfOrderIsReadWhenLookedUp() throws {
        var payload = HandWrittenSnapshot.payloadSetting(namespace: "app", name: "map")
        payload.append(UInt8(11))  // dictionary
        payload.appendVarint(2)
        for key in ["b", "a"] {
            payload.appendLengthPrefixed(key)
            StoredValue.bool(key == "a").write(to: &payload)
        }
        let bytes = HandWrittenSnapshot.file(frames: HandWrittenSnapshot.frame(payload: payload.bytes))
        #expect(SnapshotIndex(verified: bytes, from: FileHeader.size) != nil)
        let contents = try SnapshotFile.decode(bytes)
        #expect(contents.damage == nil)
        let map = ResolvedKey(namespace: "app", name: "map")
        #expect(contents.entries[map] == .dictionary(["a": .bool(true), "b": .bool(false)]))
        #expect(contents.entries.all == [map: .dictionary(["a": .bool(true), "b": .bool(false)])])
    }

    /// A record whose checksum matches but whose value no decoder reads reads as no value.
    ///
    /// The values: an unknown tag, a Bool of 2, a string that is not UTF-8, an array cut short, a
    /// dictionary with a key twice, bytes after the value. Taking the snapshot in, as a compaction
    /// does, finds the value and says where it lies; the records around it are read.
    @Test(
        arguments: [[0xEE], [1, 2], [6, 2, 0xC3, 0x28], [10, 5], [11, 2, 1, 0x6B, 1, 1, 1, 0x6B, 1, 0], [1, 1, 0]]
            as [[UInt8]], SnapshotLayout.allCases)
    func aValueThatWouldNotDecodeReadsAsNoneAndIsFoundWhenTakenIn(value: [UInt8], layout: SnapshotLayout) throws {
        var bad = HandWrittenSnapshot.payloadSetting(namespace: "app", name: "broken").bytes
        bad += value
        let a = Record(changes: [EntryChange(key: ResolvedKey(namespace: "app", name: "a"), value: .signed(1))])
        let z = Record(changes: [EntryChange(key: ResolvedKey(namespace: "app", name: "z"), value: .signed(2))])
        let bytes = HandWrittenSnapshot.file(
            frames: HandWrittenSnapshot.frames([a]) + HandWrittenSnapshot.frame(payload: bad)
                + HandWrittenSnapshot.frames([z]),
            layout: layout)
        let contents = try SnapshotFile.decode(bytes)
        #expect(contents.damage == nil)
        #expect(contents.entries[ResolvedKey(namespace: "app", name: "broken")] == nil)
        #expect(contents.entries[ResolvedKey(namespace: "app", name: "a")] == .signed(1))
        let expected: [ResolvedKey: StoredValue] = [
            ResolvedKey(namespace: "app", name: "a"): .signed(1),
            ResolvedKey(namespace: "app", name: "z"): .signed(2),
        ]
        #expect(contents.entries.all == expected)
        var entries = contents.entries
        let takenIn = entries.takeInSnapshot()
        let unreadable = try #require(takenIn)
        // The bad value is the last bytes of its frame, which the frame of `z` follows.
        let frameOfZ =
            FileHeader.size + HandWrittenSnapshot.frames([a]).count + HandWrittenSnapshot.frame(payload: bad).count
        #expect(unreadable.ranges == [(frameOfZ - value.count)..<frameOfZ])
        #expect(unreadable.file.array == bytes)
        #expect(entries.all == expected)
        let second = entries.takeInSnapshot()
        #expect(second == nil, "taken in once")
    }

    /// A value that does not decode reads as none, in the changes between two snapshots too: its
    /// coming or going is no change, and a value that decodes where it did not is one.
    @Test(arguments: SnapshotLayout.allCases)
    func aValueThatDoesNotDecodeIsNoValueInTheChangesBetweenSnapshots(layout: SnapshotLayout) throws {
        func record(_ name: String, _ value: Int64) -> [UInt8] {
            HandWrittenSnapshot.frames([
                Record(changes: [EntryChange(key: ResolvedKey(namespace: "app", name: name), value: .signed(value))])
            ])
        }
        func unreadable(_ name: String) -> [UInt8] {
            var payload = HandWrittenSnapshot.payloadSetting(namespace: "app", name: name)
            payload.append(UInt8(0xEE))  // no value has this tag
            return HandWrittenSnapshot.frame(payload: payload.bytes)
        }
        let old = try #require(
            SnapshotLayout.index(
                of: HandWrittenSnapshot.file(
                    frames: record("a", 1) + unreadable("b") + record("c", 3) + unreadable("e"), layout: layout)))
        let new = try #require(
            SnapshotLayout.index(
                of: HandWrittenSnapshot.file(
                    frames: record("a", 1) + record("c", 4) + unreadable("d") + record("e", 5), layout: layout)))
        let changes = try #require(old.changes(to: new))
        let byKey = Dictionary(uniqueKeysWithValues: changes.map { ($0.key.name, $0.value) })
        #expect(byKey == ["c": .signed(4), "e": .signed(5)])
        #expect(
            changes.count == EntryChange.differences(from: old.decodeAll().entries, to: new.decodeAll().entries).count)
    }

    /// Changes over a snapshot read as they would over a dictionary of the snapshot's entries.
    @Test func changesOverASnapshotReadAsChangesOverItsEntries() throws {
        let entries = Self.sampleEntries(count: 60, seed: 0x0CE)
        var model = entries
        var stored = try SnapshotFile.decode(SnapshotFile.encode(entries, generation: 1)).entries
        var generator = SplitMix64(seed: 0xC4A2)
        let keys = Array(entries.keys) + (0..<20).map { ResolvedKey(namespace: "app", name: "new\($0)") }
        for step in 0..<1_000 {
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            let value: StoredValue? = generator.next() % 3 == 0 ? nil : .signed(Int64(step))
            model[key] = value
            stored[key] = value
            let probe = keys[Int(generator.next() % UInt64(keys.count))]
            #expect(stored[probe] == model[probe], "step \(step), \(probe)")
        }
        #expect(stored.all == model)
    }

    /// What changed between two snapshots is what comparing every entry of both finds.
    ///
    /// Each snapshot has changes made over it since. With keys all ASCII the snapshots' bytes are
    /// walked, otherwise entries are compared decoded. A string that changed only to a canonically
    /// equivalent one has not changed, as `String` compares it. The old snapshot in format 1 and the
    /// new with a table is what the first compaction of an upgraded store leaves.
    @Test(
        arguments: [true, false],
        [(SnapshotLayout.table, SnapshotLayout.table), (.formatOne, .table), (.table, .formatOne)])
    func changesBetweenSnapshotsAreWhatComparingEveryEntryFinds(
        asciiOnly: Bool, layouts: (old: SnapshotLayout, new: SnapshotLayout)
    ) throws {
        var generator = SplitMix64(seed: asciiOnly ? 0xD1F : 0xD2F)
        let before = Self.sampleEntries(count: 200, seed: 0x5A, asciiOnly: asciiOnly)
        let keys = Array(before.keys) + (0..<30).map { ResolvedKey(namespace: "app", name: "added\($0)") }
        let equivalent = ResolvedKey(namespace: "app", name: "accented")
        for round in 0..<20 {
            var old = before
            old[equivalent] = .string("caf\u{E9}")
            var new = old
            new[equivalent] = .string("cafe\u{301}")
            for key in keys where generator.next() % 4 == 0 {
                new[key] = generator.next() % 3 == 0 ? nil : .signed(Int64(round))
            }
            var oldEntries = try SnapshotFile.decode(layouts.old.bytes(of: SnapshotFile.encode(old, generation: 1)))
                .entries
            var newEntries = try SnapshotFile.decode(layouts.new.bytes(of: SnapshotFile.encode(new, generation: 2)))
                .entries
            // Commits made over each snapshot since it was written.
            for _ in 0..<(round % 5) {
                let key = keys[Int(generator.next() % UInt64(keys.count))]
                oldEntries[key] = generator.next() % 2 == 0 ? nil : .bool(true)
                let other = keys[Int(generator.next() % UInt64(keys.count))]
                newEntries[other] = generator.next() % 2 == 0 ? nil : .bool(false)
            }
            let changes = oldEntries.changes(to: newEntries)
            let expected = EntryChange.differences(from: oldEntries.all, to: newEntries.all)
            #expect(Set(changes.map(\.key)).count == changes.count, "a key changed twice")
            #expect(
                Dictionary(changes.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
                    == Dictionary(uniqueKeysWithValues: expected.map { ($0.key, $0.value) }),
                "round \(round)"
            )
            #expect(!changes.contains { $0.key == equivalent })
        }
    }

    /// A store on an indexed snapshot lists, reads, removes and rewrites as one whose entries were
    /// all decoded when it opened, and what it wrote is there when it opens again.
    @Test func aStoreOnAnIndexedSnapshotListsReadsAndWritesEveryEntry() throws {
        let directory = try TemporaryDirectory()
        let entries = (0..<200).map { PreferenceKey<Int>("key\($0)", default: -1) }
        do {
            let store = try PreferencesStore(fileURL: directory.storeURL)
            try store.transaction { preferences in
                for (index, key) in entries.enumerated() {
                    preferences[key] = index
                }
            }
            try store.compact()
        }
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store[entries[7]] == 7)
        try store.removeValue(for: entries[8])
        store[entries[9]] = 900
        #expect(store.storedKeys().count == 199)
        #expect(store.contains(entries[10]))
        #expect(!store.contains(entries[8]))
        #expect(try store.value(for: entries[199]) == 199)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[entries[8]] == -1)
        #expect(reopened[entries[9]] == 900)
        #expect(reopened.storedKeys().count == 199)
    }
}
