import Testing

@testable import Preferences

/// The CRC-32C every record and header carries: a wrong checksum would read every file as damaged,
/// or worse, let damage through.
@Suite struct ChecksumTests {
    /// The check value of the CRC catalogue, and the vectors of RFC 3720 (iSCSI), appendix B.4.
    static let knownVectors: [(bytes: [UInt8], checksum: UInt32)] = [
        (Array("123456789".utf8), 0xE306_9283),
        ([UInt8](repeating: 0, count: 32), 0x8A91_36AA),
        ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).map { UInt8(31 - $0) }, 0x113F_DB5C),
        ([], 0),
    ]

    @Test func knownVectorsMatch() {
        for (bytes, checksum) in Self.knownVectors {
            #expect(CRC32C.checksum(bytes) == checksum, "\(bytes)")
            #expect(CRC32C.checksumWithTables(bytes[...]) == checksum, "\(bytes), with the tables")
        }
    }

    /// The processor's instruction is used where it exists.
    ///
    /// Every x86-64 machine these tests run on has SSE 4.2, and every Apple processor the package
    /// runs on has ARM's CRC extension, so a `false` there would mean the check of the processor is
    /// broken. Elsewhere (arm64 Linux) it
    /// depends on the flags the package was built with, and the tests of the checksum's values hold
    /// either way.
    @Test func theInstructionIsUsedWhereItExists() {
        #if arch(x86_64) || (arch(arm64) && canImport(Darwin))
            #expect(CRC32C.isAccelerated)
        #endif
    }

    /// The instruction and the tables, eight bytes at a time, must agree with one byte at a time, at
    /// every length and starting offset.
    @Test func agreesWithTheBytewiseDefinition() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for start in 0..<9 {
            for end in start...bytes.count {
                let slice = bytes[start..<end]
                let expected = bytewise(slice)
                #expect(CRC32C.checksum(slice) == expected, "bytes \(start)..<\(end)")
                #expect(CRC32C.checksumWithTables(slice) == expected, "bytes \(start)..<\(end), with the tables")
            }
        }
    }

    /// Long runs of bytes are checksummed as three streams whose checksums are then joined: at
    /// lengths either side of each multiple of the three streams' bytes, from a few starting
    /// offsets, the joined checksum is the bytewise one.
    @Test func longRunsAgreeWithTheBytewiseDefinition() {
        var generator = SystemRandomNumberGenerator()
        let streams = 3 * 4096
        let bytes = (0..<(3 * streams + 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for multiple in 1...3 {
            for length in (multiple * streams - 9)...(multiple * streams + 9) {
                for start in [0, 1, 7] {
                    let slice = bytes[start..<(start + length)]
                    #expect(CRC32C.checksum(slice) == bytewise(slice), "\(length) bytes from \(start)")
                }
            }
        }
    }

    private func bytewise(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
            }
        }
        return ~crc
    }
}
