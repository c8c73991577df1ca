import Foundation

/// The binary form of a stored value: a one-byte tag, then the value.
///
/// Integers and floating-point numbers are fixed-width little-endian (floats by bit pattern);
/// strings, data and URLs are length-prefixed; arrays and dictionaries are a count and their
/// elements, dictionary keys in UTF-8 order so that equal values always encode to equal bytes.
extension StoredValue {
    private enum Tag: UInt8 {
        case bool = 1
        case signed, unsigned, double, float, string, data, date, url, array, dictionary, encoded
    }

    /// How deeply arrays and dictionaries may nest.
    ///
    /// Deeper input is rejected as damage rather than exhausting the stack. A Swift type nests this
    /// deep only if declared so; no real preference does.
    static let maximumNestingDepth = 64

    func write<Sink: ByteSink>(to writer: inout Sink) {
        switch self {
        case .bool(let value):
            writer.append(Tag.bool.rawValue)
            writer.append(value ? 1 : 0 as UInt8)
        case .signed(let value):
            writer.append(Tag.signed.rawValue)
            writer.append(UInt64(bitPattern: value))
        case .unsigned(let value):
            writer.append(Tag.unsigned.rawValue)
            writer.append(value)
        case .double(let value):
            writer.append(Tag.double.rawValue)
            writer.append(value.bitPattern)
        case .float(let value):
            writer.append(Tag.float.rawValue)
            writer.append(value.bitPattern)
        case .string(let value):
            writer.append(Tag.string.rawValue)
            writer.appendLengthPrefixed(value)
        case .data(let value):
            writer.append(Tag.data.rawValue)
            writer.appendLengthPrefixed(value)
        case .date(let seconds):
            writer.append(Tag.date.rawValue)
            writer.append(seconds.bitPattern)
        case .url(let value):
            writer.append(Tag.url.rawValue)
            writer.appendLengthPrefixed(value)
        case .array(let items):
            writer.append(Tag.array.rawValue)
            writer.appendVarint(items.count)
            for item in items {
                item.write(to: &writer)
            }
        case .dictionary(let items):
            writer.append(Tag.dictionary.rawValue)
            writer.appendVarint(items.count)
            for (key, item) in items.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                writer.appendLengthPrefixed(key)
                item.write(to: &writer)
            }
        case .encoded(let data):
            writer.append(Tag.encoded.rawValue)
            writer.appendLengthPrefixed(data)
        }
    }

    init(from reader: inout ByteReader, depth: Int = 0) throws(FormatError) {
        let start = reader.position
        guard let tag = Tag(rawValue: try reader.readByte()) else { throw .malformed("unknown value tag", at: start) }
        switch tag {
        case .bool:
            switch try reader.readByte() {
            case 0: self = .bool(false)
            case 1: self = .bool(true)
            default: throw .malformed("Bool that is neither 0 nor 1", at: start)
            }
        case .signed: self = .signed(Int64(bitPattern: try reader.readUInt64()))
        case .unsigned: self = .unsigned(try reader.readUInt64())
        case .double: self = .double(Double(bitPattern: try reader.readUInt64()))
        case .float: self = .float(Float(bitPattern: try reader.readUInt32()))
        case .string: self = .string(try reader.readLengthPrefixedString())
        case .data: self = .data(try reader.readLengthPrefixedData())
        case .date: self = .date(Double(bitPattern: try reader.readUInt64()))
        case .url: self = .url(try reader.readLengthPrefixedString())
        case .encoded: self = .encoded(try reader.readLengthPrefixedData())
        case .array:
            guard depth < Self.maximumNestingDepth else { throw .malformed("values nested too deeply", at: start) }
            let count = try reader.readCount(minimumItemSize: 2)
            var items: [StoredValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count {
                items.append(try StoredValue(from: &reader, depth: depth + 1))
            }
            self = .array(items)
        case .dictionary:
            guard depth < Self.maximumNestingDepth else { throw .malformed("values nested too deeply", at: start) }
            let count = try reader.readCount(minimumItemSize: 3)
            var items: [String: StoredValue] = [:]
            items.reserveCapacity(count)
            for _ in 0..<count {
                let keyStart = reader.position
                let key = try reader.readLengthPrefixedString()
                guard items.updateValue(try StoredValue(from: &reader, depth: depth + 1), forKey: key) == nil else {
                    throw .malformed("duplicate dictionary key", at: keyStart)
                }
            }
            self = .dictionary(items)
        }
    }

    /// Where a value that needs no nesting and no UTF-8 decoding to check ends.
    ///
    /// The fast path of ``skip(_:depth:)``, straight from the bytes, for a Bool, a number, a date,
    /// a string or URL of ASCII and data shorter than 128 bytes. Anything else, valid or not, it
    /// leaves to `skip`.
    ///
    /// - Parameters:
    ///   - buffer: The bytes.
    ///   - position: Where the value's tag is.
    ///   - end: Where the bytes to read end, at most `buffer.count`.
    /// - Returns: Where the value ends; `nil` to leave the value to `skip`.
    static func endOfPlainValue(in buffer: UnsafeBufferPointer<UInt8>, at position: Int, before end: Int) -> Int? {
        guard position < end, let tag = Tag(rawValue: buffer[position]) else { return nil }
        var position = position + 1
        switch tag {
        case .bool:
            return position < end && buffer[position] <= 1 ? position + 1 : nil
        case .signed, .unsigned, .double, .date:
            return end - position >= 8 ? position + 8 : nil
        case .float:
            return end - position >= 4 ? position + 4 : nil
        case .string, .url:
            return shortASCIIString(in: buffer, at: &position, before: end) == nil ? nil : position
        case .data, .encoded:
            guard position < end else { return nil }
            let count = Int(buffer[position])
            return count < 0x80 && count < end - position ? position + 1 + count : nil
        case .array, .dictionary:
            return nil
        }
    }

    /// Skips an encoded value, checking it as ``init(from:depth:)`` would, without making it: how a
    /// snapshot is checked when it opens, so that its values can be decoded when first read.
    ///
    /// Stricter than decoding in one way: a dictionary's keys must be in the order ``write(to:)``
    /// puts them in, which is how duplicates are ruled out without making the keys. A value this
    /// rejects may still decode; the caller then decodes it.
    static func skip(_ reader: inout ByteReader, depth: Int = 0) throws(FormatError) {
        let start = reader.position
        guard let tag = Tag(rawValue: try reader.readByte()) else { throw .malformed("unknown value tag", at: start) }
        switch tag {
        case .bool:
            guard try reader.readByte() <= 1 else { throw .malformed("Bool that is neither 0 nor 1", at: start) }
        case .signed, .unsigned, .double, .date: _ = try reader.readBytesRange(8)
        case .float: _ = try reader.readBytesRange(4)
        case .string, .url: _ = try reader.skipLengthPrefixedString()
        case .data, .encoded: _ = try reader.readBytesRange(try reader.readCount())
        case .array:
            guard depth < Self.maximumNestingDepth else { throw .malformed("values nested too deeply", at: start) }
            for _ in 0..<(try reader.readCount(minimumItemSize: 2)) {
                try skip(&reader, depth: depth + 1)
            }
        case .dictionary:
            guard depth < Self.maximumNestingDepth else { throw .malformed("values nested too deeply", at: start) }
            var previousKey: Range<Int>?
            for _ in 0..<(try reader.readCount(minimumItemSize: 3)) {
                let keyStart = reader.position
                let key = try reader.skipLengthPrefixedString().range
                if let previousKey, reader.compareBytes(previousKey, key) >= 0 {
                    throw .malformed("dictionary keys out of order", at: keyStart)
                }
                previousKey = key
                try skip(&reader, depth: depth + 1)
            }
        }
    }
}
