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

    /// Inlined for the one-byte case, which most varints are (lengths and counts below 128), so
    /// that the common read makes no call.
    @inline(__always)
    mutating func readVarint() throws(FormatError) -> Int {
        if position < end, bytes[position] < 0x80 {
            defer { position += 1 }
            return Int(bytes[position])
        }
        return try readLongVarint()
    }

    private mutating func readLongVarint() throws(FormatError) -> Int {
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
    ///
    /// Inlined, so that a count of bytes, a string's length, is checked with no division.
    @inline(__always)
    mutating func readCount(minimumItemSize: Int = 1) throws(FormatError) -> Int {
        let start = position
        let count = try readVarint()
        let limit = minimumItemSize <= 1 ? remaining : remaining / minimumItemSize
        guard count <= limit else {
            throw .malformed("count exceeds the data", at: start)
        }
        return count
    }

    mutating func readBytes(_ count: Int) throws(FormatError) -> ArraySlice<UInt8> {
        bytes[try readBytesRange(count)]
    }

    mutating func readLengthPrefixedData() throws(FormatError) -> Data {
        Data(try readBytes(try readCount()))
    }

    mutating func readLengthPrefixedString() throws(FormatError) -> String {
        let range = try skipLengthPrefixedString().range
        // Checked to be UTF-8, so decoding repairs nothing; and the decoding initialiser is
        // specialised where the validating one is not, which would look up generic metadata for
        // every string.
        return bytes.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[range]), as: UTF8.self)
        }
    }

    /// Where a length-prefixed string's bytes lie, and whether they are ASCII, once they are known
    /// to be UTF-8: what ``readLengthPrefixedString()`` checks, without making the string.
    mutating func skipLengthPrefixedString() throws(FormatError) -> (range: Range<Int>, isASCII: Bool) {
        let start = position
        let range = try readBytesRange(try readCount())
        let (isUTF8, isASCII) = bytes.withUnsafeBufferPointer { buffer in
            let utf8 = UnsafeBufferPointer(rebasing: buffer[range])
            // ASCII is valid UTF-8, and checking for it is a few word loads.
            let isASCII = Preferences.isASCII(utf8)
            return (isASCII || isValidUTF8(utf8), isASCII)
        }
        guard isUTF8 else { throw .malformed("invalid UTF-8", at: start) }
        return (range, isASCII)
    }

    /// Skips `count` bytes, and says where they lie.
    mutating func readBytesRange(_ count: Int) throws(FormatError) -> Range<Int> {
        guard count >= 0, count <= remaining else { throw .truncated(at: position) }
        defer { position += count }
        return position..<(position + count)
    }

    private mutating func readLittleEndian<T: FixedWidthInteger>() throws(FormatError) -> T {
        let range = try readBytesRange(T.bitWidth / 8)
        return bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: range.lowerBound, as: T.self)) }
    }
}

/// Whether the bytes are well-formed UTF-8.
///
/// The standard library's parser rather than `String(validating:as:)`, which Apple platforms have
/// only from macOS 15 and iOS 18, above this package's minimums.
func isValidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var parser = Unicode.UTF8.ForwardParser()
    var iterator = bytes.makeIterator()
    while true {
        switch parser.parseScalar(from: &iterator) {
        case .valid: continue
        case .emptyInput: return true
        case .error: return false
        }
    }
}

/// Whether every byte is below 0x80, looked at eight at a time.
///
/// Four words a pass while more than four remain, so that a long string takes a quarter of the
/// passes a word at a time would.
/// The bytes that do not fill a word are looked at in the last word, which overlaps the one
/// before, or, in a string shorter than a word, four, two and one at a time: most names are short.
func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    let raw = UnsafeRawPointer(base)
    let count = bytes.count
    var high: UInt64 = 0
    if count >= 8 {
        var index = 0
        while count - index > 32 {
            high |=
                raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                | raw.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
            index += 32
        }
        while count - index > 8 {
            high |= raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        high |= raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    } else {
        var index = 0
        if count & 4 != 0 {
            high |= UInt64(raw.loadUnaligned(fromByteOffset: index, as: UInt32.self))
            index += 4
        }
        if count & 2 != 0 {
            high |= UInt64(raw.loadUnaligned(fromByteOffset: index, as: UInt16.self))
            index += 2
        }
        if count & 1 != 0 {
            high |= UInt64(raw.load(fromByteOffset: index, as: UInt8.self))
        }
    }
    return high & 0x8080_8080_8080_8080 == 0
}

/// Why bytes do not parse as the store's file format, and where.
enum FormatError: Error, Equatable {
    case truncated(at: Int)
    case malformed(String, at: Int)
}
