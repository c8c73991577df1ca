/// CRC-32C (Castagnoli), the checksum of every record and file header.
///
/// Castagnoli's polynomial detects more error patterns than the zlib CRC-32 for the same cost, and
/// it is what ext4, Btrfs and iSCSI use. Table-driven, one byte at a time.
enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
        }
        return crc
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { buffer in
            table.withUnsafeBufferPointer { table in
                var crc: UInt32 = 0xFFFF_FFFF
                for byte in buffer {
                    crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
                }
                return ~crc
            }
        }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        checksum(bytes[...])
    }
}
