/// One committed batch of changes: the unit that is framed, checksummed and replayed.
///
/// A snapshot holds one record per entry; the log one record per commit. A record also says where
/// its commit came from, so that observers in other processes learn it too.
///
/// ```
/// flags: UInt8 (bit 0: a write identifier follows, bit 1: a migration's identity follows,
///               bit 2: a sequence number follows)
/// [writeIdentifier: string] [migration: string] [sequence: varint]
/// count: varint, then each change: operation, namespace, name, [value]
/// ```
struct Record: Equatable, Sendable {
    var changes: [EntryChange]
    /// The identifier the writer gave its transaction, if any.
    var writeIdentifier: String?
    /// The identity of the migration that made this commit, if one did.
    var migration: String?
    /// The commit's number in its log, from 1 after each compaction; `nil` in a snapshot.
    ///
    /// A gap in the numbers, or a log that ends before the number the lock page acknowledged, shows
    /// that commits are missing.
    var sequence: UInt64?

    private enum Operation: UInt8 {
        case set = 1
        case remove = 2
    }

    private enum Flag {
        static let writeIdentifier: UInt8 = 1
        static let migration: UInt8 = 2
        static let sequence: UInt8 = 4
        static let all = writeIdentifier | migration | sequence
    }

    func encode(into writer: inout ByteWriter) {
        writer.append(
            (writeIdentifier == nil ? 0 : Flag.writeIdentifier) | (migration == nil ? 0 : Flag.migration)
                | (sequence == nil ? 0 : Flag.sequence)
        )
        if let writeIdentifier {
            writer.appendLengthPrefixed(writeIdentifier)
        }
        if let migration {
            writer.appendLengthPrefixed(migration)
        }
        if let sequence {
            writer.appendVarint(Int(sequence))
        }
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
        let flagsAt = reader.position
        let flags = try reader.readByte()
        guard flags & ~Flag.all == 0 else {
            throw .malformed("unknown record flags", at: flagsAt)
        }
        writeIdentifier = flags & Flag.writeIdentifier == 0 ? nil : try reader.readLengthPrefixedString()
        migration = flags & Flag.migration == 0 ? nil : try reader.readLengthPrefixedString()
        sequence = flags & Flag.sequence == 0 ? nil : UInt64(try reader.readVarint())
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

    init(changes: [EntryChange], writeIdentifier: String? = nil, migration: String? = nil, sequence: UInt64? = nil) {
        self.changes = changes
        self.writeIdentifier = writeIdentifier
        self.migration = migration
        self.sequence = sequence
    }

    func apply(to entries: inout [StorageKey: StoredValue]) {
        for change in changes {
            entries[change.key] = change.value
        }
    }
}
