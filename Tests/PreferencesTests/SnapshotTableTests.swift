import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// A snapshot ends with a table of where each record starts, which opening trusts once the body's
/// checksum matches: a table that places records wrongly never makes a lookup read outside the
/// records, costs no entry once the snapshot is taken in, and is reported; a damaged table costs no
/// entry; and a snapshot from before tables opens as it did.
struct SnapshotTableTests {
    /// Twenty entries, `app:key0` to `app:key19`, holding their numbers.
    private static let entries: [ResolvedKey: StoredValue] = Dictionary(
        uniqueKeysWithValues: (0..<20).map { (ResolvedKey(namespace: "app", name: "key\($0)"), .signed(Int64($0))) })

    /// The keys in the order the snapshot holds them.
    private static let keysInOrder = entries.keys.sorted()

    private static func header(of bytes: [UInt8]) throws -> FileHeader {
        try #require(SnapshotLayout.header(of: bytes))
    }

    /// `bytes` with the body changed by `change` and the header made to match it again, as only a
    /// writer other than this library's would leave a snapshot.
    private static func resealed(
        _ bytes: [UInt8], tableOffset: UInt32? = nil, _ change: (inout [UInt8]) -> Void
    ) throws -> [UInt8] {
        let old = try header(of: bytes)
        var body = Array(bytes[FileHeader.size...])
        change(&body)
        let header = FileHeader(
            kind: .snapshot, generation: old.generation, bodyLength: UInt64(body.count),
            bodyChecksum: CRC32C.checksum(body[...]), tableOffset: tableOffset ?? old.tableOffset)
        return header.encoded() + body
    }

    /// Where the table's offset of the record at `position` lies in the snapshot's body.
    private static func tableEntry(_ position: Int, in bytes: [UInt8]) throws -> Range<Int> {
        let tableOffset = Int(try header(of: bytes).tableOffset)
        let start = tableOffset - FileHeader.size + RecordFrame.headerSize + SnapshotTable.headerSize + 4 * position
        return start..<(start + 4)
    }

    /// The offset the table gives the record at `position`.
    private static func offset(_ position: Int, in bytes: [UInt8]) throws -> UInt32 {
        let entry = try tableEntry(position, in: bytes)
        return bytes[(entry.lowerBound + FileHeader.size)..<(entry.upperBound + FileHeader.size)].reversed()
            .reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// `bytes` with the table's entry for `position` set to `offset`.
    private static func placing(_ position: Int, at offset: UInt32, in bytes: [UInt8]) throws -> [UInt8] {
        let entry = try tableEntry(position, in: bytes)
        return try resealed(bytes) { body in
            withUnsafeBytes(of: offset.littleEndian) { body.replaceSubrange(entry, with: $0) }
        }
    }

    @Test func aSnapshotIsWrittenWithATableOfEveryRecordInOrderOfKey() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let header = try Self.header(of: bytes)
        #expect(header.version == 2)
        let table = try #require(RecordFrame.payload(in: bytes, at: Int(header.tableOffset), verifyChecksum: true))
        #expect(table.upperBound == bytes.count, "the table ends the file")
        var reader = ByteReader(bytes, range: table)
        #expect(try reader.readByte() == 1, "every key is ASCII")
        #expect(try reader.readUInt32() == 20)
        var names: [String] = []
        var expectedOffset = FileHeader.size
        while !reader.isAtEnd {
            let offset = Int(try reader.readUInt32())
            #expect(offset == expectedOffset, "each record starts where the one before it ends")
            let (record, next) = try #require(RecordFrame.record(in: bytes, at: offset))
            names.append(record.changes[0].key.name)
            expectedOffset = next
        }
        #expect(expectedOffset == Int(header.tableOffset))
        #expect(names == Self.keysInOrder.map(\.name))
        #expect(try #require(SnapshotLayout.index(of: bytes)).tablePlacesEveryRecord())
    }

    /// Where a wrong offset points.
    enum WrongOffset: CaseIterable {
        case pastTheRecords, intoTheHeader, intoAFrame, atTheLastRecordsLastByte
    }

    /// An offset that places no record reads as no value, the other keys are found, and taking the
    /// snapshot in reads every record as it lies and reports the table.
    @Test(arguments: WrongOffset.allCases)
    func aTableEntryThatPlacesNoRecordReadsAsNoValueAndIsReported(wrong: WrongOffset) throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let tableOffset = UInt32(try Self.header(of: bytes).tableOffset)
        let offset: UInt32 =
            switch wrong {
            case .pastTheRecords: .max
            case .intoTheHeader: 3
            case .intoAFrame: UInt32(FileHeader.size + 1)
            case .atTheLastRecordsLastByte: tableOffset - 1
            }
        let position = 5
        let contents = try SnapshotFile.decode(try Self.placing(position, at: offset, in: bytes))
        #expect(contents.damage == nil, "the checksum matches: only another writer leaves this")
        let lost = Self.keysInOrder[position]
        #expect(contents.entries[lost] == nil)
        for (key, value) in Self.entries where key != lost {
            #expect(contents.entries[key] == value, "\(key)")
        }
        try expectTakenInWhole(contents.entries, table: Int(tableOffset)..<bytes.count)
    }

    /// Taking `entries` in finds every entry, from the records as they lie, and reports the table.
    private func expectTakenInWhole(_ entries: StoredEntries, table: Range<Int>) throws {
        var takenIn = entries
        let reported = takenIn.takeInSnapshot()
        let unreadable = try #require(reported)
        #expect(unreadable.tableIsWrong)
        #expect(unreadable.ranges == [table])
        #expect(unreadable.report(besides: 20).reason.contains("table"))
        #expect(takenIn.all == Self.entries)
    }

    /// Tables that place only records, but not each once in order, are found when taken in.
    ///
    /// One record twice, one left out, two swapped. Lookups may miss what the table misplaces;
    /// taking the snapshot in does not.
    @Test func aTableThatPlacesRecordsWronglyIsFoundWhenTakenIn() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let tableOffset = Int(try Self.header(of: bytes).tableOffset)
        let table = tableOffset..<bytes.count
        let twice = try Self.placing(5, at: try Self.offset(4, in: bytes), in: bytes)
        let swapped = try Self.placing(
            4, at: try Self.offset(5, in: bytes), in: try Self.placing(5, at: try Self.offset(4, in: bytes), in: bytes))
        // The last entry dropped from the table, its count and frame made to match.
        let shorter = try Self.resealed(bytes) { body in
            let start = tableOffset - FileHeader.size
            var payload = Array(body[(start + RecordFrame.headerSize)...].dropLast(4))
            payload.replaceSubrange(1..<5, with: withUnsafeBytes(of: UInt32(19).littleEndian, Array.init))
            body.replaceSubrange(start..., with: HandWrittenSnapshot.frame(payload: payload))
        }
        for (name, wrong) in [("twice", twice), ("swapped", swapped), ("shorter", shorter)] {
            let contents = try SnapshotFile.decode(wrong)
            #expect(contents.damage == nil, "\(name)")
            let index = try #require(SnapshotLayout.index(of: wrong))
            #expect(!index.tablePlacesEveryRecord(), "\(name)")
            try expectTakenInWhole(contents.entries, table: table.lowerBound..<wrong.count)
        }
    }

    /// A table placing records wrongly, over records no compaction writes (one of two changes, a
    /// removal): taking the snapshot in applies them as decoding the records would.
    @Test func recordsOfAnyFormAreReadAsTheyLieWhenTheTableIsWrong() throws {
        let a = ResolvedKey(namespace: "app", name: "a")
        let b = ResolvedKey(namespace: "app", name: "b")
        let c = ResolvedKey(namespace: "app", name: "c")
        let frames = HandWrittenSnapshot.frames([
            Record(changes: [EntryChange(key: a, value: .signed(1)), EntryChange(key: b, value: .signed(2))]),
            Record(changes: [EntryChange(key: c, value: .signed(3))]),
            Record(changes: [EntryChange(key: a, value: nil)]),
        ])
        let bytes = HandWrittenSnapshot.file(frames: frames, layout: .table)
        let index = try #require(SnapshotLayout.index(of: bytes))
        #expect(!index.tablePlacesEveryRecord())
        let decoded = index.decodeAll()
        #expect(decoded.tableIsWrong)
        #expect(decoded.entries == [b: .signed(2), c: .signed(3)])
    }

    /// Comparing two snapshots walks their tables in order: a table that does not place every
    /// record once in order is noticed, and every entry compared instead.
    @Test func aTableOutOfOrderIsNoticedWhenTwoSnapshotsAreCompared() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let swapped = try Self.placing(
            4, at: try Self.offset(5, in: bytes), in: try Self.placing(5, at: try Self.offset(4, in: bytes), in: bytes))
        let old = try SnapshotFile.decode(swapped).entries
        var changed = Self.entries
        changed[ResolvedKey(namespace: "app", name: "key7")] = .signed(70)
        let new = try SnapshotFile.decode(SnapshotFile.encode(changed, generation: 3)).entries
        let oldIndex = try #require(SnapshotLayout.index(of: swapped))
        let newIndex = try #require(SnapshotLayout.index(of: SnapshotFile.encode(changed, generation: 3)))
        #expect(oldIndex.changes(to: newIndex) == nil)
        #expect(
            old.changes(to: new) == [EntryChange(key: ResolvedKey(namespace: "app", name: "key7"), value: .signed(70))])
    }

    /// A snapshot walked whole once is compared, the next time, from the records that walk kept:
    /// what changed is the same either way, as in a store that catches up twice.
    @Test func aSnapshotWalkedOnceIsComparedFromWhatTheWalkKept() throws {
        var changed = Self.entries
        changed[ResolvedKey(namespace: "app", name: "key3")] = .signed(30)
        changed[ResolvedKey(namespace: "app", name: "key15")] = nil
        changed[ResolvedKey(namespace: "app", name: "key20")] = .signed(20)
        var later = changed
        later[ResolvedKey(namespace: "app", name: "key9")] = .signed(90)
        let first = try #require(SnapshotLayout.index(of: SnapshotFile.encode(Self.entries, generation: 1)))
        let second = try #require(SnapshotLayout.index(of: SnapshotFile.encode(changed, generation: 2)))
        let third = try #require(SnapshotLayout.index(of: SnapshotFile.encode(later, generation: 3)))
        let expected = EntryChange.differences(from: Self.entries, to: changed)
        let fresh = try #require(first.changes(to: second))
        #expect(Set(fresh.map(\.key)) == Set(expected.map(\.key)))
        // Both have been walked whole: the same changes again, then on to a third from the second.
        #expect(first.changes(to: second) == fresh)
        #expect(
            try #require(second.changes(to: third)) == [
                EntryChange(key: ResolvedKey(namespace: "app", name: "key9"), value: .signed(90))
            ])
        #expect(second.decodeAll().entries == changed)
    }

    /// A store whose snapshot's table places records wrongly: its compaction keeps a copy, reports
    /// the table, and writes every entry in a snapshot whose table is right.
    @Test func aCompactionRewritesATableThatPlacesRecordsWrongly() throws {
        let directory = try TemporaryDirectory()
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let twice = try Self.placing(5, at: try Self.offset(4, in: bytes), in: bytes)
        try Data(twice).write(to: directory.storeURL)
        try Data(LogFile.start(generation: 2, lockStamp: 0)).write(to: directory.logURL)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        try store.compact()
        let reported = store.errorChannel.takeBacklog()
        #expect(reported.map(\.code) == [.damagedFile])
        #expect(reported.first?.description.contains("table") == true)
        #expect(try directory.fileNames().contains { $0.hasPrefix("preferences.store.damaged-") })
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened.errorChannel.takeBacklog().isEmpty)
        for index in 0..<20 {
            #expect(reopened[PreferenceKey<Int>("key\(index)", default: -1)] == index)
        }
    }

    /// A header that places the table where no table ends the file costs no entry, and is reported.
    ///
    /// A table whose length does not match its count, or an offset between two records: every
    /// record is read, to the end of the file, and what is no record is reported; none is left
    /// unread after the offset.
    @Test func aTableTheHeaderPlacesWhereNoTableIsCostsNoEntryAndIsReported() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let tableOffset = Int(try Self.header(of: bytes).tableOffset)
        let countAt = tableOffset - FileHeader.size + RecordFrame.headerSize + 1
        let wrongCount = try Self.resealed(bytes) { body in
            body[countAt] += 1
        }
        let betweenRecords = try Self.resealed(bytes, tableOffset: try Self.offset(10, in: bytes)) { _ in }
        for (name, wrong) in [("a wrong count", wrongCount), ("an offset between records", betweenRecords)] {
            let contents = try SnapshotFile.decode(wrong)
            let damage = try #require(contents.damage, "\(name)")
            #expect(contents.entries.all == Self.entries, "\(name)")
            #expect(damage.damagedRanges == [tableOffset..<bytes.count], "\(name)")
        }
    }

    /// A table that says every key is ASCII where one is not: lookups compare bytes, which cannot
    /// tell canonically equivalent keys apart, so the walks treat it as a table placing records
    /// wrongly, and taking the snapshot in reads every record.
    @Test func aTableThatSaysEveryKeyIsASCIIWhereOneIsNotIsFoundWhenTakenIn() throws {
        let kelvin = ResolvedKey(namespace: "app", name: "\u{212A}ey")
        var entries = Self.entries
        entries[kelvin] = .signed(-1)
        let bytes = SnapshotFile.encode(entries, generation: 2)
        let tableOffset = Int(try Self.header(of: bytes).tableOffset)
        let flagAt = tableOffset - FileHeader.size + RecordFrame.headerSize
        #expect(bytes[FileHeader.size + flagAt] == 0, "the writer knows the Kelvin sign is not ASCII")
        let lying = try Self.resealed(bytes) { body in
            body[flagAt] = 1
        }
        let index = try #require(SnapshotLayout.index(of: lying))
        #expect(!index.tablePlacesEveryRecord())
        let truthful = try #require(SnapshotLayout.index(of: bytes))
        #expect(index.changes(to: truthful) == nil)
        let decoded = index.decodeAll()
        #expect(decoded.tableIsWrong)
        #expect(decoded.entries == entries)
    }

    /// A flipped bit in the table is damage to the table alone.
    ///
    /// Every record is recovered, and the table's bytes are the range reported, whether or not the
    /// header that places it verifies. A flipped bit in a record reports that record, not the table.
    @Test func damageToTheTableCostsNoEntry() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let tableOffset = Int(try Self.header(of: bytes).tableOffset)
        for position in [tableOffset + 3, tableOffset + RecordFrame.headerSize + 9, bytes.count - 1] {
            var damaged = bytes
            damaged[position] ^= 0x10
            let contents = try SnapshotFile.decode(damaged)
            let damage = try #require(contents.damage)
            #expect(contents.entries.all == Self.entries, "a flip at \(position)")
            #expect(damage.damagedRanges == [tableOffset..<bytes.count])
        }
        var damaged = bytes
        damaged[FileHeader.size + 20] ^= 0x10
        let damage = try #require(try SnapshotFile.decode(damaged).damage)
        #expect(damage.damagedRanges.allSatisfy { $0.upperBound <= tableOffset })
        #expect(damage.recoveredRecords == Self.entries.count - 1)
        // A damaged header: the table that ends the file is found, and not taken for a record.
        var header = bytes
        header[9] ^= 0x01
        let salvaged = try SnapshotFile.decode(header)
        #expect(salvaged.entries.all == Self.entries)
        #expect(try #require(salvaged.damage).damagedRanges == [0..<FileHeader.size])
    }

    /// A store written before snapshots had tables (format 1) opens and reads, and its next
    /// compaction writes a snapshot with a table.
    @Test func aSnapshotWithoutATableOpensAndIsRewrittenWithOne() throws {
        let formatOne = SnapshotLayout.formatOne.bytes(of: SnapshotFile.encode(Self.entries, generation: 3))
        #expect(try Self.header(of: formatOne).version == 1)
        let contents = try SnapshotFile.decode(formatOne)
        #expect(contents.damage == nil)
        #expect(contents.entries.all == Self.entries)

        let directory = try TemporaryDirectory()
        try Data(formatOne).write(to: directory.storeURL)
        try Data(LogFile.start(generation: 3, lockStamp: 0)).write(to: directory.logURL)
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(store.errorChannel.takeBacklog().isEmpty)
        #expect(store[PreferenceKey<Int>("key12", default: -1)] == 12)
        try store.compact()
        let rewritten = Array(try Data(contentsOf: directory.storeURL))
        #expect(try Self.header(of: rewritten).version == 2)
        #expect(try Self.header(of: rewritten).tableOffset != 0)
        let reopened = try PreferencesStore(fileURL: directory.storeURL)
        #expect(reopened[PreferenceKey<Int>("key19", default: -1)] == 19)
        #expect(reopened.storedKeys().count == Self.entries.count)
    }
}
