extension SnapshotIndex {
    /// Makes the keys of a snapshot's records as strings, each namespace once while records of the
    /// same namespace follow one another, as they do in order of key.
    struct KeyMaker {
        let file: FileBytes
        private var previous: (range: Range<Int>, namespace: String)?

        init(file: FileBytes) {
            self.file = file
        }

        mutating func key(of record: Located) -> ResolvedKey {
            let buffer = file.buffer
            let namespace: String
            if let previous, compareBytes(part(buffer, previous.range), part(buffer, record.namespace)) == 0 {
                namespace = previous.namespace
            } else {
                namespace = String(decoding: part(buffer, record.namespace), as: UTF8.self)
                previous = (record.namespace, namespace)
            }
            return ResolvedKey(namespace: namespace, name: String(decoding: part(buffer, record.name), as: UTF8.self))
        }
    }

    /// The entries of a snapshot's records as they are decoded, and where the ones that do not
    /// decode lie.
    ///
    /// A later record whose key is canonically equivalent to an earlier one's wins, as in decoding
    /// a dictionary.
    struct DecodedEntries {
        private let file: FileBytes
        private var keys: KeyMaker
        var entries: [ResolvedKey: StoredValue] = [:]
        var unreadable: [Range<Int>] = []

        init(file: FileBytes, capacity: Int) {
            self.file = file
            keys = KeyMaker(file: file)
            entries.reserveCapacity(capacity)
        }

        /// Takes the entry of a record of one set entry.
        mutating func take(_ record: Located) {
            let key = keys.key(of: record)
            if let value = record.decodeValue(in: file) {
                entries[key] = value
            } else {
                entries.removeValue(forKey: key)
                unreadable.append(record.value)
            }
        }

        /// Takes every record of `records` as they lie one after another, whatever the table says:
        /// a record of one set entry as ``take(_:)`` does, any other as decoding applies it, and
        /// bytes that are no frame, or a record that does not decode, as unreadable.
        mutating func takeRecordsAsTheyLie(in records: Range<Int>) {
            let recordBytes = UnsafeBufferPointer(rebasing: file.buffer[..<records.upperBound])
            var offset = records.lowerBound
            while offset < records.upperBound {
                guard let (payload, _) = RecordFrame.payload(in: recordBytes, at: offset) else {
                    unreadable.append(offset..<records.upperBound)
                    return
                }
                if let (record, _) = Located.find(payload: payload, in: file) {
                    take(record)
                } else {
                    var reader = ByteReader(file.copy(of: payload), range: 0..<payload.count)
                    do {
                        try Record.apply(payload: &reader, to: &entries)
                    } catch {
                        unreadable.append(payload)
                    }
                }
                offset = payload.upperBound
            }
        }
    }
}
