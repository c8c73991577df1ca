extension SnapshotIndex {
    /// Where one record's key and value lie in the file's bytes.
    struct Located {
        private var namespaceStart: UInt32
        private var namespaceEnd: UInt32
        private var nameStart: UInt32
        private var nameEnd: UInt32
        private var end: UInt32

        /// Where the key lies, and where the value ends, in a file of at most `UInt32.max` bytes.
        init(namespace: Range<Int>, name: Range<Int>, valueEnd: Int) {
            namespaceStart = UInt32(truncatingIfNeeded: namespace.lowerBound)
            namespaceEnd = UInt32(truncatingIfNeeded: namespace.upperBound)
            nameStart = UInt32(truncatingIfNeeded: name.lowerBound)
            nameEnd = UInt32(truncatingIfNeeded: name.upperBound)
            end = UInt32(truncatingIfNeeded: valueEnd)
        }

        var namespace: Range<Int> { Int(namespaceStart)..<Int(namespaceEnd) }
        var name: Range<Int> { Int(nameStart)..<Int(nameEnd) }
        var value: Range<Int> { Int(nameEnd)..<Int(end) }
        /// Where the record ends: its value is the last of it.
        var valueEnd: Int { Int(end) }

        /// The record's value in `file`, decoded from a copy of its bytes; `nil` if it does not
        /// decode.
        func decodeValue(in file: FileBytes) -> StoredValue? {
            var reader = ByteReader(file.copy(of: value), range: 0..<value.count)
            guard let decoded = try? StoredValue(from: &reader), reader.isAtEnd else { return nil }
            return decoded
        }

        /// The key's bytes in `buffer`, the bytes the record lies in, for ``compareKeys(_:_:)``.
        func key(in buffer: UnsafeBufferPointer<UInt8>) -> KeyBytes {
            (part(buffer, namespace), part(buffer, name))
        }

        /// Where the key and value of the single-entry record whose payload lies at `payload` in
        /// `file` are, and whether its key is ASCII; `nil` if the record is not of one set entry.
        static func find(payload: Range<Int>, in file: FileBytes) -> (Located, keyIsASCII: Bool)? {
            if let plain = Record.locatePlainSingleSet(in: file.buffer, payload: payload) {
                return (Located(namespace: plain.namespace, name: plain.name, valueEnd: payload.upperBound), true)
            }
            // A reader only here, where the fast path gives up, over a copy of the record.
            var reader = ByteReader(file.copy(of: payload), range: 0..<payload.count)
            guard let found = try? Record.locateSingleSet(payload: &reader) else { return nil }
            let shift = payload.lowerBound
            let located = Located(
                namespace: found.namespace.shifted(by: shift), name: found.name.shifted(by: shift),
                valueEnd: payload.upperBound)
            return (located, found.keyIsASCII)
        }
    }
}

extension Range<Int> {
    /// The range moved `offset` places up.
    fileprivate func shifted(by offset: Int) -> Range<Int> {
        (lowerBound + offset)..<(upperBound + offset)
    }
}
