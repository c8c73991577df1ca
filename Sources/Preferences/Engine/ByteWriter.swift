import Foundation

/// Appends the little-endian integers, varints and length-prefixed strings of the store's file format
/// to an array (the varints and strings come from ``ByteSink``).
struct ByteWriter: FrameSink {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    var count: Int { bytes.count }

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

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        self.bytes.append(contentsOf: bytes)
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
    mutating func skip(_ count: Int) {
        bytes.append(contentsOf: repeatElement(0, count: count))
    }

    func checksum(from offset: Int) -> UInt32 {
        CRC32C.checksum(bytes[offset...])
    }

    private mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        // One append of the value's bytes: appending them one at a time would check capacity each time.
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
}
