import Foundation
import PreferencesHarnessKit
import Testing

@testable import Preferences

/// A commit's frame, written through a pointer, is the array writer's frame.
///
/// A commit's record is framed in memory on the stack, not through the array writer that frames
/// snapshot entries and that the decoders were written against. The two must make the same bytes
/// for every record, or a commit would read back as damage.
@Suite struct RecordFrameTests {
    /// Records of every kind of value, nested, with keys and strings outside ASCII, with and without
    /// their optional fields, from a few bytes to several times the room on the stack.
    @Test func aFrameWrittenThroughAPointerIsTheArrayWritersFrame() {
        var generator = SplitMix64(seed: 0x5EED_F4A3)
        var sizes: [Int] = []
        for round in 0..<600 {
            // Every tenth record carries a string long enough to need the counted path.
            let record = Self.randomRecord(longString: round % 10 == 0, using: &generator)
            let sequence: UInt64? = round % 3 == 0 ? nil : UInt64.random(in: 1...1 << 40, using: &generator)
            let stamp = Self.randomStamp(round, using: &generator)
            var expected = ByteWriter()
            RecordFrame.append(record, numbered: sequence, stamp: stamp, to: &expected)
            let framed = RecordFrame.withFrame(of: record, numbered: sequence, stamp: stamp) { Array($0) }
            #expect(framed == expected.bytes, "round \(round)")
            var counter = ByteCounter()
            record.encode(into: &counter, sequence: sequence, stamp: stamp)
            #expect(counter.count + RecordFrame.headerSize == expected.bytes.count, "round \(round)")
            let decoded = RecordFrame.record(in: framed, at: 0)
            #expect(decoded?.0.changes == record.changes, "round \(round)")
            #expect(
                decoded?.0.changes.map(\.key.keepsNoHistory) == record.changes.map(\.key.keepsNoHistory),
                "round \(round)")
            #expect(decoded?.0.sequence == sequence, "round \(round)")
            #expect(decoded?.0.stamp == stamp, "round \(round)")
            #expect(decoded?.0.cause == record.cause, "round \(round)")
            sizes.append(framed.count)
        }
        // Both paths were taken: frames that fit on the stack and frames that did not.
        #expect(sizes.contains { $0 <= 512 })
        #expect(sizes.contains { $0 > 512 })
    }

    /// A write of one key appends its change alone, a value or a removal, which must frame exactly
    /// as the record of that one change: a reader decodes it as that record.
    @Test func aChangeAloneIsFramedAsTheRecordOfThatChange() {
        var generator = SplitMix64(seed: 0x0051_A61E)
        for round in 0..<300 {
            var change = Self.randomRecord(longString: round % 10 == 0, using: &generator).changes[0]
            if round % 4 == 1 {
                change.value = nil  // A removal.
            }
            let sequence: UInt64? = round % 3 == 0 ? nil : UInt64.random(in: 1...1 << 40, using: &generator)
            let stamp = Self.randomStamp(round, using: &generator)
            let framed = RecordFrame.withFrame(of: change, numbered: sequence, stamp: stamp) { Array($0) }
            let expected = RecordFrame.withFrame(of: Record(changes: [change]), numbered: sequence, stamp: stamp) {
                Array($0)
            }
            #expect(framed == expected, "round \(round)")
            var decoded = Record(changes: [change], sequence: sequence)
            decoded.stamp = stamp
            #expect(RecordFrame.record(in: framed, at: 0)?.0 == decoded)
            var entries = StoredEntries()
            change.apply(to: &entries)
            #expect(entries[change.key] == change.value, "round \(round)")
        }
    }

    /// A key whose bytes were made ahead, as a declared key's are, encodes as the same key made
    /// without them, through every writer: a record's bytes do not depend on where its keys came from.
    @Test func aKeyMadeAheadEncodesAsTheSameKeyMadeWithout() {
        var generator = SplitMix64(seed: 0x00A4_EAD0)
        for round in 0..<300 {
            let record = Self.randomRecord(longString: round % 10 == 0, using: &generator)
            var madeAhead = record
            madeAhead.changes = record.changes.map { change in
                let key = ResolvedKey(
                    namespace: change.key.namespace, name: change.key.name, encodesAhead: true,
                    keepsNoHistory: change.key.keepsNoHistory)
                return EntryChange(key: key, value: change.value)
            }
            #expect(record.changes.allSatisfy { !$0.key.isEncodedAhead })
            #expect(madeAhead.changes.allSatisfy { $0.key.isEncodedAhead })
            let stamp = Self.randomStamp(round, using: &generator)
            let expected = RecordFrame.withFrame(of: record, numbered: 9, stamp: stamp) { Array($0) }
            #expect(
                RecordFrame.withFrame(of: madeAhead, numbered: 9, stamp: stamp) { Array($0) } == expected,
                "round \(round)")
            var writer = ByteWriter()
            RecordFrame.append(madeAhead, numbered: 9, stamp: stamp, to: &writer)
            #expect(writer.bytes == expected, "round \(round)")
            var counter = ByteCounter()
            madeAhead.encode(into: &counter, sequence: 9, stamp: stamp)
            #expect(counter.count + RecordFrame.headerSize == expected.count, "round \(round)")
        }
        // Moved to another namespace, as a store with another app namespace moves a declared key,
        // it keeps its bytes made ahead, of the new namespace.
        let moved = ResolvedKey(namespace: "app", name: "größe", encodesAhead: true).inNamespace("réglages")
        var expected = ByteWriter()
        expected.appendLengthPrefixed("réglages")
        expected.appendLengthPrefixed("größe")
        #expect(moved.withEncoded { Array($0) } == expected.bytes)
        #expect(!ResolvedKey(namespace: "app", name: "größe").inNamespace("réglages").isEncodedAhead)
    }

    /// A snapshot is written through a pointer into an array sized from the size expected, and into
    /// larger ones when it does not fit: whatever the guess, the bytes are those the array writer makes.
    @Test func aSnapshotWrittenThroughAPointerIsTheArrayWritersSnapshot() {
        var generator = SplitMix64(seed: 0x0005_4A95_0075)
        for round in 0..<40 {
            var entries: [ResolvedKey: StoredValue] = [:]
            for index in 0..<Int.random(in: 0...60, using: &generator) {
                let key = ResolvedKey(
                    namespace: "app", name: Self.randomString(maximumLength: 12, using: &generator) + "\(index)")
                // Every fourth round, values far larger than the 64 bytes an entry is first given.
                entries[key] =
                    round % 4 == 0
                    ? .string(String(repeating: "ü", count: Int.random(in: 100...900, using: &generator)))
                    : Self.randomValue(depth: 0, using: &generator)
            }
            let order = entries.keys.sorted()
            var expected = ByteWriter()
            expected.skip(FileHeader.size)
            var offsets: [UInt32] = []
            for key in order {
                offsets.append(UInt32(expected.count))
                RecordFrame.appendEntry(key, entries[key]!, to: &expected)
            }
            let tableOffset = expected.count
            let keysAreASCII = order.allSatisfy { ($0.namespace + $0.name).unicodeScalars.allSatisfy(\.isASCII) }
            RecordFrame.appendFrame(to: &expected) { table in
                table.append(UInt8(keysAreASCII ? 1 : 0))
                table.append(UInt32(offsets.count))
                for offset in offsets {
                    table.append(offset)
                }
            }
            let body = expected.bytes[FileHeader.size...]
            let header = FileHeader(
                kind: .snapshot, generation: 7, bodyLength: UInt64(body.count), bodyChecksum: CRC32C.checksum(body),
                tableOffset: UInt32(tableOffset))
            let reference = header.encoded() + Array(body)
            for expectedSize in [0, reference.count / 3, reference.count, reference.count * 4] {
                var stored = StoredEntries(entries)
                let written = SnapshotFile.encode(&stored, generation: 7, expectedSize: expectedSize)
                #expect(written == reference, "round \(round), expecting \(expectedSize) bytes")
            }
        }
    }

    /// A writer given too little room writes nothing past it and says so, whatever it was asked to write.
    @Test func aWriterThatRunsOutOfRoomStopsAndSaysSo() {
        for room in 0..<24 {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: room + 8, alignment: 8)
            defer { buffer.deallocate() }
            buffer.initializeMemory(as: UInt8.self, repeating: 0xEE)
            let limited = UnsafeMutableRawBufferPointer(rebasing: buffer[..<room])
            var writer = UnsafeByteWriter(limited)
            writer.append(UInt8(1))
            writer.append(UInt32(2))
            writer.appendLengthPrefixed("héllo, wörld")
            writer.append(UInt64(3))
            var counter = ByteCounter()
            counter.append(UInt8(1))
            counter.append(UInt32(2))
            counter.appendLengthPrefixed("héllo, wörld")
            counter.append(UInt64(3))
            #expect(writer.overflowed == (room < counter.count), "room \(room)")
            #expect(writer.count <= room, "room \(room)")
            #expect(buffer[room...].allSatisfy { $0 == 0xEE }, "room \(room): written past the room")
        }
    }

    private static func randomRecord(longString: Bool, using generator: inout SplitMix64) -> Record {
        let changes = (0..<Int.random(in: 1...4, using: &generator)).map { index in
            let key = ResolvedKey(
                namespace: ["app", "com.vendor.sdk", "réglages", ""][Int.random(in: 0...3, using: &generator)],
                name: randomString(maximumLength: 20, using: &generator) + "\(index)",
                keepsNoHistory: Int.random(in: 0..<5, using: &generator) == 0
            )
            let value: StoredValue? =
                Bool.random(using: &generator) && index > 0
                ? nil
                : (longString
                    ? .string(String(repeating: "long ✓ ", count: Int.random(in: 80...400, using: &generator)))
                    : randomValue(depth: 0, using: &generator))
            return EntryChange(key: key, value: value)
        }
        return Record(
            changes: changes,
            writeIdentifier: Bool.random(using: &generator) ? randomString(maximumLength: 12, using: &generator) : nil,
            subject: Bool.random(using: &generator) ? "subject-\(Int.random(in: 0...99, using: &generator))" : nil,
            cause: CommitCause(rawValue: UInt8.random(in: 0...7, using: &generator)) ?? .write
        )
    }

    /// A stamp with each part there or not, the program only in some rounds.
    private static func randomStamp(_ round: Int, using generator: inout SplitMix64) -> CommitStamp {
        CommitStamp(
            time: round % 5 == 0 ? nil : Int64.random(in: 0...(1 << 45), using: &generator),
            processID: round % 7 == 0 ? nil : Int32.random(in: .min ... .max, using: &generator),
            program: round % 3 == 0 ? randomString(maximumLength: 30, using: &generator) : nil
        )
    }

    private static func randomValue(depth: Int, using generator: inout SplitMix64) -> StoredValue {
        let kinds = depth < 3 ? 12 : 10
        switch Int.random(in: 0..<kinds, using: &generator) {
        case 0: return .bool(Bool.random(using: &generator))
        case 1: return .signed(Int64.random(in: .min ... .max, using: &generator))
        case 2: return .unsigned(UInt64.random(in: .min ... .max, using: &generator))
        case 3: return .double(Double.random(in: -1e9...1e9, using: &generator))
        case 4: return .float(Float.random(in: -1e6...1e6, using: &generator))
        case 5: return .string(randomString(maximumLength: 40, using: &generator))
        case 6:
            return .data(
                Data(
                    (0..<Int.random(in: 0...64, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }))
        case 7: return .date(Double.random(in: 0...2e9, using: &generator))
        case 8: return .url("https://example.com/" + randomString(maximumLength: 10, using: &generator))
        case 9: return .encoded(Data(randomString(maximumLength: 30, using: &generator).utf8))
        case 10:
            return .array(
                (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                    randomValue(depth: depth + 1, using: &generator)
                })
        default:
            var items: [String: StoredValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                items[randomString(maximumLength: 8, using: &generator)] = randomValue(
                    depth: depth + 1, using: &generator)
            }
            return .dictionary(items)
        }
    }

    private static func randomString(maximumLength: Int, using generator: inout SplitMix64) -> String {
        let alphabet = Array("abcXYZ019 -_.éüßñ✓€日本🙂")
        return String(
            (0..<Int.random(in: 0...maximumLength, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator)!
            })
    }
}
