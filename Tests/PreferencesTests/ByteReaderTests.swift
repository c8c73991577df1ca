import Testing

@testable import Preferences

/// Strings in the file format: read exactly, and bytes that are not UTF-8 rejected, never repaired.
@Suite struct ByteReaderTests {
    @Test(arguments: ["", "plain ascii", "héllo", "名前", "emoji 🦊 at the end", String(repeating: "x", count: 300)])
    func stringsReadBackExactly(string: String) throws {
        var writer = ByteWriter(capacity: 16)
        writer.appendLengthPrefixed(string)
        writer.append(UInt8(0xAB))
        var reader = ByteReader(writer.bytes, range: 0..<writer.bytes.count)
        #expect(try reader.readLengthPrefixedString() == string)
        #expect(try reader.readByte() == 0xAB)
        #expect(reader.isAtEnd)
        var skipping = ByteReader(writer.bytes, range: 0..<writer.bytes.count)
        let skipped = try skipping.skipLengthPrefixedString()
        #expect(skipped.range.count == string.utf8.count)
        #expect(skipped.isASCII == string.utf8.allSatisfy { $0 < 0x80 })
    }

    /// The check for ASCII sees one byte of 0x80 or more anywhere, whatever the length (each of its
    /// loops, four words, a word, the overlapping last word, and the pieces of a short string) and
    /// the alignment, and nothing outside the bytes it is given.
    @Test func theCheckForASCIISeesAHighByteAnywhere() {
        var bytes = [UInt8](repeating: 0x61, count: 120)
        for start in [0, 3] {
            for count in 0...(bytes.count - start - 1) {
                let range = start..<(start + count)
                #expect(bytes.withUnsafeBufferPointer { isASCII(UnsafeBufferPointer(rebasing: $0[range])) })
                for offset in max(start - 1, 0)...(start + count) {
                    bytes[offset] = 0x80
                    let inside = range.contains(offset)
                    let seen = bytes.withUnsafeBufferPointer { !isASCII(UnsafeBufferPointer(rebasing: $0[range])) }
                    #expect(seen == inside, "byte at \(offset), \(count) from \(start)")
                    bytes[offset] = 0x61
                }
            }
        }
    }

    /// A lone continuation byte, a truncated sequence, an overlong encoding and a surrogate, each
    /// after ASCII so that the fast path for ASCII is not what decides.
    @Test(
        arguments: [
            [0x80], [0xC3], [0xC3, 0x28], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xFF], [0xF0, 0x90, 0x80],
            [0xF0, 0x90, 0x80, 0x41], [0xF4, 0x90, 0x80, 0x80],
        ] as [[UInt8]])
    func invalidUTF8IsRejectedWhereItStarts(invalid: [UInt8]) {
        let content = Array("abc".utf8) + invalid
        let bytes = [0xEE, UInt8(content.count)] + content
        var reader = ByteReader(bytes, range: 1..<bytes.count)
        #expect(throws: FormatError.malformed("invalid UTF-8", at: 1)) { try reader.readLengthPrefixedString() }
    }

    /// One byte that is not ASCII, at every position of every length up to five words.
    ///
    /// The check for ASCII looks at whole words, at a last word that overlaps the one before, and,
    /// in a string shorter than a word, at four, two and one bytes. Skipping a string checks what
    /// reading it does.
    @Test func aByteThatIsNotASCIIIsFoundAtEveryPositionOfEveryLength() throws {
        for length in 1...40 {
            for position in 0..<length {
                var content = [UInt8](repeating: 0x61, count: length)
                content[position] = 0xFF
                let invalid = [UInt8(length)] + content
                var reader = ByteReader(invalid, range: 0..<invalid.count)
                #expect(throws: FormatError.self, "\(length), \(position)") { try reader.readLengthPrefixedString() }
                reader = ByteReader(invalid, range: 0..<invalid.count)
                #expect(throws: FormatError.self, "\(length), \(position)") { try reader.skipLengthPrefixedString() }
                guard position + 1 < length else { continue }
                content[position...(position + 1)] = [0xC3, 0xA9]  // é
                let valid = [UInt8(length)] + content
                reader = ByteReader(valid, range: 0..<valid.count)
                #expect(try reader.readLengthPrefixedString() == String(decoding: content, as: UTF8.self))
                reader = ByteReader(valid, range: 0..<valid.count)
                #expect(try reader.skipLengthPrefixedString() == (1..<valid.count, false))
            }
        }
    }

    /// The UTF-8 check agrees with decoding: bytes are valid exactly when decoding repairs nothing.
    @Test func theUTF8CheckAgreesWithDecodingOnRandomBytes() {
        var generator = SystemRandomNumberGenerator()
        // Bytes drawn mostly from the ranges that start and continue multi-byte sequences.
        let alphabet: [UInt8] = [0x41, 0x80, 0x8F, 0x90, 0xA0, 0xBF, 0xC2, 0xC0, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5]
        var valid = 0
        for _ in 0..<5_000 {
            let count = Int.random(in: 0...6, using: &generator)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            let decodesExactly = String(decoding: bytes, as: UTF8.self).utf8.elementsEqual(bytes)
            #expect(bytes.withUnsafeBufferPointer(isValidUTF8) == decodesExactly, "\(bytes)")
            valid += decodesExactly ? 1 : 0
        }
        #expect(valid > 0)
    }

    @Test func aLengthPastTheEndIsRejected() {
        let bytes: [UInt8] = [5, 0x61, 0x62]
        var reader = ByteReader(bytes, range: 0..<bytes.count)
        #expect(throws: FormatError.self) { try reader.readLengthPrefixedString() }
    }
}
