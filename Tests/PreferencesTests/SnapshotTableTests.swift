import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// A snapshot ends with a table of where each record starts, which opening trusts once the body's
/// checksum matches: a table that names records wrongly never makes a lookup read outside the
/// records, a damaged table costs no entry, and a snapshot from before tables opens as it did.
struct SnapshotTableTests {
    /// Twenty entries, `app:key0` to `app:key19`, holding their numbers.
    private static let entries: [ResolvedKey: StoredValue] = Dictionary(
        uniqueKeysWithValues: (0..<20).map { (ResolvedKey(namespace: "app", name: "key\($0)"), .signed(Int64($0))) })

    private static func header(of bytes: [UInt8]) throws -> FileHeader {
        guard case .valid(let header) = FileHeader.check(Array(bytes.prefix(FileHeader.size)), expecting: .snapshot)
        else { throw CocoaError(.fileReadCorruptFile) }
        return header
    }

    /// `bytes` with the body changed by `change` and the header made to match it again, as only a
    /// writer other than this library's would leave a snapshot.
    private static func resealed(_ bytes: [UInt8], version: Int? = nil, tableOffset: UInt32? = nil, _ change: (inout [UInt8]) -> Void = { _ in }) throws -> [UInt8] {
        let old = try header(of: bytes)
        var body = Array(bytes[FileHeader.size...])
        change(&body)
        let header = FileHeader(
            kind: .snapshot, version: version, generation: old.generation, bodyLength: UInt64(body.count),
            bodyChecksum: CRC32C.checksum(body[...]), tableOffset: tableOffset ?? old.tableOffset)
        return header.encoded() + body
    }

    /// Where the offset of the record at `position` lies in the snapshot's body.
    private static func tableEntry(_ position: Int, in bytes: [UInt8]) throws -> Int {
        let tableOffset = Int(try header(of: bytes).tableOffset)
        return tableOffset - FileHeader.size + RecordFrame.headerSize + SnapshotTable.headerSize + 4 * position
    }

    @Test func aSnapshotIsWrittenWithATableOfEveryRecordInOrderOfKey() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let header = try Self.header(of: bytes)
        #expect(header.version == 2)
        let table = try #require(RecordFrame.payload(in: bytes, at: Int(header.tableOffset), verifyChecksum: true))
        #expect(table.upperBound == bytes.count, "the table ends the file")
        var reader = ByteReader(bytes, range: table)
        #expect(try reader.readByte() == SnapshotTable.keysAreASCII)
        #expect(try reader.readUInt32() == 20)
        var names: [String] = []
        while !reader.isAtEnd {
            let (record, _) = try #require(RecordFrame.record(in: bytes, at: Int(try reader.readUInt32())))
            names.append(record.changes[0].key.name)
        }
        #expect(names == Self.entries.keys.map(\.name).sorted())
    }

    /// An offset past the records, into the header, or into the middle of a record: each reads as
    /// no value, the other keys are found, and taking the snapshot in reports the table's entry.
    @Test(arguments: [UInt32.max, 3, 0, 1])
    func aTableEntryThatNamesNoRecordReadsAsNoValueAndIsReported(offset: UInt32) throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let position = 5
        let entry = try Self.tableEntry(position, in: bytes)
        // 0 and 1 stand for the first record's frame and one byte into it; 3 for the header.
        let first = Int(try Self.header(of: bytes).tableOffset) - 1
        let target: UInt32 =
            switch offset {
            case 0: UInt32(FileHeader.size + 1)
            case 1: UInt32(first)
            default: offset
            }
        let damaged = try Self.resealed(bytes) { body in
            withUnsafeBytes(of: target.littleEndian) { body.replaceSubrange(entry..<(entry + 4), with: $0) }
        }
        let contents = try SnapshotFile.decode(damaged)
        #expect(contents.damage == nil, "the checksum matches: only another writer leaves this")
        let lost = Self.entries.keys.sorted()[position]
        #expect(contents.entries[lost] == nil)
        for (key, value) in Self.entries where key != lost {
            #expect(contents.entries[key] == value, "\(key)")
        }
        var takenIn = contents.entries
        let reported = takenIn.takeInSnapshot()
        let unreadable = try #require(reported)
        #expect(unreadable.ranges == [(FileHeader.size + entry)..<(FileHeader.size + entry + 4)])
        #expect(takenIn.all.count == Self.entries.count - 1)
    }

    /// A table whose length does not match its count is no table: the records are read whole.
    @Test func aTableWhoseLengthDisagreesWithItsCountIsIgnoredAndTheRecordsRead() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let countAt = Int(try Self.header(of: bytes).tableOffset) - FileHeader.size + RecordFrame.headerSize + 1
        let damaged = try Self.resealed(bytes) { body in
            body[countAt] += 1
            // The table's own frame checksum is not what opening checks; the body's is.
        }
        let contents = try SnapshotFile.decode(damaged)
        #expect(contents.damage == nil)
        #expect(contents.entries.all == Self.entries)
    }

    /// A flipped bit in the table is damage to the table alone: every record is recovered, and
    /// the table's bytes are the range reported. A flipped bit in a record reports that record,
    /// not the table.
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
    }

    /// Keys out of order in the table, which only another writer leaves: comparing two snapshots
    /// walks them in order, notices, and compares every entry instead.
    @Test func aTableOutOfOrderIsNoticedWhenTwoSnapshotsAreCompared() throws {
        let bytes = SnapshotFile.encode(Self.entries, generation: 2)
        let (a, b) = (try Self.tableEntry(3, in: bytes), try Self.tableEntry(4, in: bytes))
        let swapped = try Self.resealed(bytes) { body in
            let first = Array(body[a..<(a + 4)])
            body.replaceSubrange(a..<(a + 4), with: body[b..<(b + 4)])
            body.replaceSubrange(b..<(b + 4), with: first)
        }
        let old = try SnapshotFile.decode(swapped).entries
        var changed = Self.entries
        changed[ResolvedKey(namespace: "app", name: "key7")] = .signed(70)
        let new = try SnapshotFile.decode(SnapshotFile.encode(changed, generation: 3)).entries
        #expect(old.changes(to: new) == [EntryChange(key: ResolvedKey(namespace: "app", name: "key7"), value: .signed(70))])
    }

    /// A store written before snapshots had tables (format 1) opens and reads, and its next
    /// compaction writes a snapshot with a table.
    @Test func aSnapshotWithoutATableOpensAndIsRewrittenWithOne() throws {
        let withTable = SnapshotFile.encode(Self.entries, generation: 3)
        let tableOffset = Int(try Self.header(of: withTable).tableOffset)
        let formatOne = try Self.resealed(withTable, version: 1, tableOffset: 0) { body in
            body.removeSubrange((tableOffset - FileHeader.size)...)
        }
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
