/// One committed batch of changes: the unit that is framed, checksummed and replayed.
///
/// A snapshot file holds one record per entry; the append-only log that follows will hold one
/// record per commit, in the same format.
struct Record: Equatable {
    var changes: [EntryChange]

    private enum Operation: UInt8 {
        case set = 1
        case remove = 2
    }

    func encode(into writer: inout ByteWriter) {
        writer.appendVarint(changes.count)
        for change in changes {
            writer.append(change.value == nil ? Operation.remove.rawValue : Operation.set.rawValue)
            writer.appendLengthPrefixed(change.key.namespace)
            writer.appendLengthPrefixed(change.key.name)
            change.value?.write(to: &writer)
        }
    }

    /// Decodes a record's payload, which must be consumed exactly.
    init(payload reader: inout ByteReader) throws(FormatError) {
        let count = try reader.readCount(minimumItemSize: 3)
        changes = []
        changes.reserveCapacity(count)
        for _ in 0..<count {
            let start = reader.position
            guard let operation = Operation(rawValue: try reader.readByte()) else {
                throw .malformed("unknown operation", at: start)
            }
            let namespace = try reader.readLengthPrefixedString()
            let name = try reader.readLengthPrefixedString()
            guard !name.isEmpty else { throw .malformed("empty key name", at: start) }
            let key = StorageKey(namespace: namespace, name: name)
            switch operation {
            case .set: changes.append(EntryChange(key: key, value: try StoredValue(from: &reader)))
            case .remove: changes.append(EntryChange(key: key, value: nil))
            }
        }
        guard reader.isAtEnd else { throw .malformed("bytes after the last change", at: reader.position) }
    }

    init(changes: [EntryChange]) {
        self.changes = changes
    }

    func apply(to entries: inout [StorageKey: StoredValue]) {
        for change in changes {
            entries[change.key] = change.value
        }
    }
}
