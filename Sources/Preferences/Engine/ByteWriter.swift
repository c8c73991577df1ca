import Foundation

/// Appends the little-endian integers, varints and length-prefixed strings of the store's file format.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func append(_ byte: UInt8) {
        bytes.append(byte)
    }

    mutating func append(_ value: UInt16) {
        appendLittleEndian(value)
    }

    mutating func append(_ value: UInt32) {
        appendLittleEndian(value)
    }

    mutating func append(_ value: UInt64) {
        appendLittleEndian(value)
    }

    /// LEB128: seven bits a byte, low bits first.
    mutating func appendVarint(_ value: Int) {
        var remaining = UInt64(value)
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }

    mutating func appendLengthPrefixed(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            appendVarint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func appendLengthPrefixed(_ data: Data) {
        appendVarint(data.count)
        bytes.append(contentsOf: data)
    }

    mutating func append(contentsOf other: some Collection<UInt8>) {
        bytes.append(contentsOf: other)
    }

    /// Overwrites four bytes already written, for a length or checksum known only afterwards.
    mutating func overwrite(_ value: UInt32, at offset: Int) {
        for index in 0..<4 {
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index))
        }
    }

    private mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        for index in 0..<(T.bitWidth / 8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }
}
