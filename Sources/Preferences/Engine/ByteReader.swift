import Foundation

/// Reads what ``ByteWriter`` writes, from a range of a byte array, and rejects anything malformed.
///
/// Every read checks its bounds and every count is checked against the bytes that remain, so that
/// damaged or hostile input ends in a ``FormatError``, never in a crash or a huge allocation.
struct ByteReader {
    private let bytes: [UInt8]
    private(set) var position: Int
    private let end: Int

    init(_ bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        position = range.lowerBound
        self.end = range.upperBound
    }

    var isAtEnd: Bool { position == end }
    var remaining: Int { end - position }

    mutating func readByte() throws(FormatError) -> UInt8 {
        guard position < end else { throw .truncated(at: position) }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readUInt16() throws(FormatError) -> UInt16 {
        try readLittleEndian()
    }

    mutating func readUInt32() throws(FormatError) -> UInt32 {
        try readLittleEndian()
    }

    mutating func readUInt64() throws(FormatError) -> UInt64 {
        try readLittleEndian()
    }

    mutating func readVarint() throws(FormatError) -> Int {
        let start = position
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            // Nine bytes carry 63 bits; the tenth may only add the last one.
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw .malformed("varint too long", at: start) }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        guard result <= UInt64(Int.max) else { throw .malformed("varint out of range", at: start) }
        return Int(result)
    }

    /// A count of items that each take at least `minimumItemSize` bytes, checked against what remains.
    mutating func readCount(minimumItemSize: Int = 1) throws(FormatError) -> Int {
        let start = position
        let count = try readVarint()
        guard count <= remaining / max(minimumItemSize, 1) else {
            throw .malformed("count exceeds the data", at: start)
        }
        return count
    }

    mutating func readBytes(_ count: Int) throws(FormatError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw .truncated(at: position) }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func readLengthPrefixedData() throws(FormatError) -> Data {
        Data(try readBytes(try readCount()))
    }

    mutating func readLengthPrefixedString() throws(FormatError) -> String {
        let start = position
        let count = try readCount()
        let range = position..<(position + count)
        position += count
        let string = bytes.withUnsafeBufferPointer { buffer in
            let utf8 = UnsafeBufferPointer(rebasing: buffer[range])
            // ASCII is valid UTF-8, and the decoding initialiser is specialised where the validating
            // one is not: opening 10,000 keys spent a third of its time looking up generic metadata.
            return isASCII(utf8) ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
        }
        guard let string else { throw .malformed("invalid UTF-8", at: start) }
        return string
    }

    private mutating func readLittleEndian<T: FixedWidthInteger>() throws(FormatError) -> T {
        let slice = try readBytes(T.bitWidth / 8)
        var value: T = 0
        for (index, byte) in slice.enumerated() {
            value |= T(byte) << (8 * index)
        }
        return value
    }
}

/// Whether every byte is below 0x80, looked at eight at a time.
private func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let raw = UnsafeRawPointer(base)
    var index = 0
    var high: UInt64 = 0
    while bytes.count - index >= 8 {
        high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
        index += 8
    }
    while index < bytes.count {
        high |= UInt64(bytes[index])
        index += 1
    }
    return high & 0x8080_8080_8080_8080 == 0
}

/// Why bytes do not parse as the store's file format, and where.
enum FormatError: Error, Equatable {
    case truncated(at: Int)
    case malformed(String, at: Int)
}
