/// A device's file of synced changes, in the folder that ``PreferencesSync`` shares with the
/// other devices.
///
/// For the device `D`, the file `D.prefsync`, written by `D` alone, so that the program that
/// copies the folder between devices never sees two devices change one file:
///
/// ```
///  0  header  40 bytes  a ``FileHeader`` of kind syncChanges; generation: a number drawn at random
///                       each time the file is written whole, so that readers know to start again
/// 40  frames            framed (``RecordFrame``), one a round: count: varint, then each version:
///                       namespace: string, name: string, then the ``SyncVersion``
/// ```
///
/// Each round appends one frame. When the file has grown to twice what it would be written whole,
/// the device writes it whole, with the version it holds of every synced key, and renames it over.
enum SyncFile {
    /// The name's ending that marks a device's file.
    static let suffix = ".prefsync"

    /// One version of one key, as a file holds it.
    struct Entry: Equatable {
        var key: ResolvedKey
        var version: SyncVersion
    }

    /// The device whose file is named `fileName`, if it names one: a name of the form `D.prefsync`,
    /// where `D` is a device identifier (see ``isDeviceIdentifier(_:)``).
    static func device(named fileName: String) -> String? {
        guard fileName.hasSuffix(suffix) else { return nil }
        let device = String(fileName.dropLast(suffix.count))
        return isDeviceIdentifier(device) ? device : nil
    }

    /// Whether `text` can be a device identifier: 1 to 64 letters, digits and hyphens, so that it
    /// is a file name on every platform and a temporary file (`.D.prefsync.tmp-…`) is never one.
    static func isDeviceIdentifier(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D
            }
    }

    /// A new file's header.
    static func header(generation: UInt64) -> [UInt8] {
        FileHeader(kind: .syncChanges, generation: generation).encoded()
    }

    /// Appends the frame of one round's versions.
    static func appendFrame(_ entries: [Entry], to writer: inout some FrameSink) {
        RecordFrame.appendFrame(to: &writer) { writer in
            writer.appendVarint(entries.count)
            for entry in entries {
                writer.appendLengthPrefixed(entry.key.namespace)
                writer.appendLengthPrefixed(entry.key.name)
                entry.version.write(to: &writer)
            }
        }
    }

    /// What reading a file from a point found.
    enum Reading {
        /// The frames from the point to the end all verify: their versions, and where they end.
        case verified([Entry], end: Int)
        /// Something from `offset` on does not verify: the file is damaged, or is still being
        /// copied. Nothing of what follows the point read from is to be used until it verifies.
        case damaged(offset: Int, reason: String)
    }

    /// Reads the frames of `bytes`, the whole file, from `offset` on.
    static func read(_ bytes: [UInt8], from offset: Int) -> Reading {
        var entries: [Entry] = []
        var position = offset
        while position < bytes.count {
            guard let payload = RecordFrame.payload(in: bytes, at: position, verifyChecksum: true) else {
                let reason =
                    RecordFrame.isCutShort(bytes, at: position)
                    ? "the file ends part way through a round's changes (it may still be being copied)"
                    : "a round's changes do not verify"
                return .damaged(offset: position, reason: reason)
            }
            var reader = ByteReader(bytes, range: payload)
            do throws(FormatError) {
                let count = try reader.readCount(minimumItemSize: 12)
                for _ in 0..<count {
                    let namespace = try reader.readLengthPrefixedString()
                    let name = try reader.readLengthPrefixedString()
                    let version = try SyncVersion(from: &reader)
                    entries.append(Entry(key: ResolvedKey(namespace: namespace, name: name), version: version))
                }
                guard reader.isAtEnd else { throw .malformed("bytes after a round's changes", at: reader.position) }
            } catch {
                return .damaged(offset: position, reason: "a round's changes verify but do not decode (\(error))")
            }
            position = payload.upperBound
        }
        return .verified(entries, end: position)
    }
}
