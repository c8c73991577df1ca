/// The table that ends a snapshot in format 2: where each record starts, in order of key.
///
/// With it opening reads no record (see ``SnapshotIndex``). Framed as a record is, after the
/// records; the snapshot's header says where it starts (``FileHeader/tableOffset``).
///
/// ```
/// flags    UInt8            bit 0: every key's namespace and name are ASCII
/// count    UInt32 LE        how many records the snapshot holds
/// offsets  count × UInt32 LE   where each record's frame starts in the file, in order of key
/// ```
///
/// A file of more than `UInt32.max` bytes has offsets 32 bits cannot hold: it is written in format
/// 1, with no table, and opening reads each record of it instead.
struct SnapshotTable {
    /// Where the offsets start in the file.
    let offsetsStart: Int
    /// How many records the table places.
    let count: Int
    /// Whether every key is ASCII, so that comparing bytes orders keys as comparing strings does.
    let keysAreASCII: Bool

    /// The bytes before the offsets: the flags and the count.
    static let headerSize = 5
    /// The flag that says every key is ASCII.
    private static let keysAreASCIIFlag: UInt8 = 1

    /// The table framed at `offset` in `buffer`, if a frame there ends the buffer and its length
    /// matches its count; its checksum is not checked, the body's having been.
    ///
    /// The count is taken from the frame's length, and compared with the one written: no product
    /// of a count read from the file can overflow, on 32-bit processors either.
    init?(in buffer: UnsafeBufferPointer<UInt8>, at offset: Int) {
        guard let (payload, _) = RecordFrame.payload(in: buffer, at: offset), payload.upperBound == buffer.count,
            payload.count >= Self.headerSize, (payload.count - Self.headerSize) % 4 == 0
        else { return nil }
        let count = (payload.count - Self.headerSize) / 4
        guard UInt32(exactly: count) == loadUInt32(buffer, at: payload.lowerBound + 1) else { return nil }
        offsetsStart = payload.lowerBound + Self.headerSize
        self.count = count
        keysAreASCII = buffer[payload.lowerBound] & Self.keysAreASCIIFlag != 0
    }

    /// Where the table says the record at `position` starts; `nil` if that does not fit in an `Int`.
    func recordOffset(at position: Int, in buffer: UnsafeBufferPointer<UInt8>) -> Int? {
        Int(exactly: loadUInt32(buffer, at: offsetsStart + 4 * position))
    }

    /// Appends the table of records starting at `offsets`, framed.
    static func append(offsets: [UInt32], keysAreASCII: Bool, to writer: inout some FrameSink) {
        RecordFrame.appendFrame(to: &writer) { writer in
            writer.append(keysAreASCII ? keysAreASCIIFlag : 0)
            writer.append(UInt32(truncatingIfNeeded: offsets.count))
            for offset in offsets {
                writer.append(offset)
            }
        }
    }

    /// Where a table that verifies starts, if one ends `bytes`: for salvaging a snapshot whose
    /// header, which says where its table is, is damaged.
    ///
    /// So that salvage does not take the table for a record: its bytes are offsets, which a record
    /// decoder could, by chance, read as one.
    static func verifiedStart(atEndOf bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer in
            // A table of n records is 17 + 4n bytes, frame and all: its start lies that far from the end.
            var start = buffer.count - RecordFrame.headerSize - headerSize
            while start >= 0 {
                if let (payload, checksum) = RecordFrame.payload(in: buffer, at: start),
                    SnapshotTable(in: buffer, at: start) != nil,
                    CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[payload]))
                        == checksum
                {
                    return start
                }
                start -= 4
            }
            return nil
        }
    }
}

/// The little-endian `UInt32` at `offset` in `buffer`, which holds its four bytes.
func loadUInt32(_ buffer: UnsafeBufferPointer<UInt8>, at offset: Int) -> UInt32 {
    UInt32(littleEndian: UnsafeRawPointer(buffer.baseAddress! + offset).loadUnaligned(as: UInt32.self))
}
