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
}
