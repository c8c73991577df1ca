import Foundation

/// One version of a synced key's value: what a device published, and what decides which of two
/// versions every device keeps.
///
/// The later ``stamp`` wins; between equal stamps, the greater ``device``. Every device compares
/// the same way, so every device that has seen the same versions keeps the same one. A removal is
/// a version too (a `nil` ``value``), and wins as a write does: a removal that is newer is never
/// undone by an older write arriving late.
struct SyncVersion: Equatable, Sendable {
    /// A hybrid logical clock reading (``HybridClock``).
    var stamp: UInt64
    /// The identifier of the device that made the change.
    var device: String
    /// The value as stored; `nil` for a removal.
    var value: StoredValue?

    /// Whether this version wins over `other`.
    func isNewer(than other: SyncVersion?) -> Bool {
        guard let other else { return true }
        return stamp != other.stamp ? stamp > other.stamp : device > other.device
    }

    /// Whether `other` is this same version: the same change by the same device.
    func isSameChange(as other: SyncVersion?) -> Bool {
        other.map { $0.stamp == stamp && $0.device == device } ?? false
    }
}

extension SyncVersion {
    /// Writes the version: its stamp, its device, then the value's presence and the value.
    func write(to writer: inout some ByteSink) {
        writer.append(stamp)
        writer.appendLengthPrefixed(device)
        if let value {
            writer.append(UInt8(1))
            value.write(to: &writer)
        } else {
            writer.append(UInt8(0))
        }
    }

    /// Reads a version that fills `bytes` from `offset` to the end, as ``write(to:)`` wrote it.
    init(filling bytes: [UInt8], from offset: Int = 0) throws(FormatError) {
        var reader = ByteReader(bytes, range: offset..<bytes.count)
        self = try SyncVersion(from: &reader)
        guard reader.isAtEnd else { throw .malformed("bytes after the version", at: reader.position) }
    }

    /// Reads what ``write(to:)`` wrote.
    init(from reader: inout ByteReader) throws(FormatError) {
        stamp = try reader.readUInt64()
        device = try reader.readLengthPrefixedString()
        let at = reader.position
        switch try reader.readByte() {
        case 0: value = nil
        case 1: value = try StoredValue(from: &reader)
        default: throw .malformed("unknown presence of a value", at: at)
        }
    }
}
