import Foundation

/// Where the file format's encoders put their bytes.
///
/// One encoder serves three sinks, specialised for each: ``ByteWriter`` grows an array,
/// ``UnsafeByteWriter`` writes into memory sized beforehand, and ``ByteCounter`` only counts, for
/// what does not fit. A commit's record goes the last two ways (see
/// ``RecordFrame/withFrame(of:numbered:_:)``): appending to an array checks its uniqueness and
/// capacity at every byte, which would be most of the work of encoding a small record.
protocol ByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(_ value: UInt32)
    mutating func append(_ value: UInt64)
    mutating func append(_ bytes: UnsafeRawBufferPointer)
    mutating func appendLengthPrefixed(_ string: String)
}

/// A sink that can frame what it writes: it leaves room for a header, then fills it in.
protocol FrameSink: ByteSink {
    /// How many bytes were written.
    var count: Int { get }
    /// Leaves `count` bytes to be written later with ``overwrite(_:at:)``.
    mutating func skip(_ count: Int)
    /// Writes four bytes over ones already left or written.
    mutating func overwrite(_ value: UInt32, at offset: Int)
    /// The CRC-32C of what was written from `offset` on.
    func checksum(from offset: Int) -> UInt32
}

extension ByteSink {
    /// LEB128: seven bits a byte, low bits first.
    ///
    /// Inlined: a commit's record holds two or three, nearly always of one byte.
    @inline(__always)
    mutating func appendVarint(_ value: Int) {
        var remaining = UInt64(value)
        while remaining >= 0x80 {
            append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        append(UInt8(remaining))
    }

    /// The string's UTF-8 length as a varint, then its bytes.
    mutating func appendLengthPrefixed(_ string: String) {
        let utf8 = string.utf8
        appendVarint(utf8.count)
        let appended: Void? = utf8.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if appended == nil {
            // A string with no contiguous UTF-8 (one bridged from Objective-C), a byte at a time.
            for byte in utf8 {
                append(byte)
            }
        }
    }

    /// The data's length as a varint, then its bytes.
    mutating func appendLengthPrefixed(_ data: Data) {
        appendVarint(data.count)
        data.withUnsafeBytes { append($0) }
    }
}

/// A sink that only counts what would be written: the size to allocate for an ``UnsafeByteWriter``.
struct ByteCounter: ByteSink {
    private(set) var count = 0

    mutating func append(_ byte: UInt8) { count += 1 }
    mutating func append(_ value: UInt32) { count += 4 }
    mutating func append(_ value: UInt64) { count += 8 }
    mutating func append(_ bytes: UnsafeRawBufferPointer) { count += bytes.count }

    mutating func appendLengthPrefixed(_ string: String) {
        let length = string.utf8.count
        appendVarint(length)
        count += length
    }
}

/// A sink that writes into memory sized beforehand, and stops at its end.
///
/// What does not fit is not written, and marks the writer ``overflowed``: the caller then
/// counts what it writes (``ByteCounter``) and writes again into memory of that size.
struct UnsafeByteWriter: FrameSink {
    private let buffer: UnsafeMutableRawBufferPointer
    /// Where the next byte goes.
    private(set) var count: Int
    /// Whether a write did not fit; nothing after it was written.
    private(set) var overflowed = false

    /// Writes into `buffer` from `offset` on.
    init(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int = 0) {
        precondition(offset >= 0 && offset <= buffer.count, "writing outside the buffer")
        self.buffer = buffer
        count = offset
    }

    mutating func append(_ byte: UInt8) {
        guard fits(1) else { return }
        buffer[count] = byte
        count += 1
    }

    mutating func append(_ value: UInt32) {
        store(value.littleEndian)
    }

    mutating func append(_ value: UInt64) {
        store(value.littleEndian)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, fits(bytes.count) else { return }
        (buffer.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    mutating func skip(_ size: Int) {
        guard fits(size) else { return }
        count += size
    }

    mutating func overwrite(_ value: UInt32, at offset: Int) {
        precondition(offset >= 0 && offset + 4 <= count, "overwriting past what was written")
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt32.self)
    }

    func checksum(from offset: Int) -> UInt32 {
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[offset..<count]))
    }

    /// What was written.
    var written: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: buffer[..<count])
    }

    private mutating func store<T: FixedWidthInteger>(_ value: T) {
        guard fits(MemoryLayout<T>.size) else { return }
        buffer.storeBytes(of: value, toByteOffset: count, as: T.self)
        count += MemoryLayout<T>.size
    }

    /// Whether `size` more bytes fit; marks the writer overflowed, for good, when they do not.
    private mutating func fits(_ size: Int) -> Bool {
        overflowed = overflowed || size > buffer.count - count
        return !overflowed
    }
}
