import Foundation

/// Appends the little-endian integers, varints and length-prefixed strings of the store's file format.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Empties the writer, keeping its capacity for the next use.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
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
        appendVarint(string.utf8.count)
        bytes.append(contentsOf: string.utf8)
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
        precondition(offset >= 0 && offset + 4 <= bytes.count, "overwriting past what was written")
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    /// Appends zeros: where a header, a length or a checksum is later written.
    mutating func appendZeros(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    private mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        // One append of the value's bytes: appending them one at a time checked capacity each time.
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
