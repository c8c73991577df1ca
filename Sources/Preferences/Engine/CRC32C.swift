import CPreferencesAtomics

/// CRC-32C (Castagnoli), the checksum of every record and file header.
///
/// Castagnoli's polynomial detects more error patterns than the zlib CRC-32 for the same cost, and
/// it is what ext4, Btrfs and iSCSI use. Where the processor has an instruction for it and the
/// library knows to ask (x86-64 with SSE 4.2, Apple's arm64 processors, arm64 built for the CRC
/// extension), that computes it, eight bytes an instruction; elsewhere tables do, eight bytes at a
/// time ("slicing by 8"), in a third of the instructions a byte at a time takes.
enum CRC32C {
    /// Whether the processor's instruction computes the checksum.
    static let isAccelerated = preferences_crc32c_is_accelerated() != 0
    /// Eight tables of 256 entries: `tables[k * 256 + b]` is the CRC of byte `b` followed by `k` zeros.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
            tables[byte] = crc
        }
        for slice in 1..<8 {
            for byte in 0..<256 {
                let previous = tables[(slice - 1) * 256 + byte]
                tables[slice * 256 + byte] = tables[Int(previous & 0xFF)] ^ (previous >> 8)
            }
        }
        return tables
    }()

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard isAccelerated else { return checksumWithTables(bytes) }
        return ~preferences_crc32c_update(0xFFFF_FFFF, bytes.baseAddress, bytes.count)
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// The checksum computed with the tables: what platforms without the instruction use, and what
    /// the tests compare the instruction with.
    static func checksumWithTables(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBytes { checksumWithTables($0) }
    }

    private static func checksumWithTables(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        tables.withUnsafeBufferPointer { table in
            var crc: UInt32 = 0xFFFF_FFFF
            var index = 0
            while buffer.count - index >= 8 {
                // Little-endian words, assembled byte by byte: no alignment is assumed.
                let low =
                    crc
                    ^ (UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8 | UInt32(buffer[index + 2]) << 16
                        | UInt32(buffer[index + 3]) << 24)
                let high =
                    UInt32(buffer[index + 4]) | UInt32(buffer[index + 5]) << 8 | UInt32(buffer[index + 6]) << 16
                    | UInt32(buffer[index + 7]) << 24
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < buffer.count {
                crc = table[Int((crc ^ UInt32(buffer[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
            return ~crc
        }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        checksum(bytes[...])
    }
}
