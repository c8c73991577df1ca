@testable import Preferences

/// The two forms of snapshot opening reads: with a table of where each record starts (format 2,
/// what the library writes), and without (format 1, what it wrote before).
enum SnapshotLayout: CaseIterable, Sendable {
    case table
    case formatOne

    /// A snapshot the library wrote, in this layout.
    func bytes(of written: [UInt8]) -> [UInt8] {
        guard self == .formatOne, let header = SnapshotLayout.header(of: written), header.tableOffset != 0 else {
            return written
        }
        let body = Array(written[FileHeader.size..<Int(header.tableOffset)])
        return HandWrittenSnapshot.sealed(body, generation: header.generation, layout: .formatOne, tableOffset: 0)
    }

    /// The index opening makes of `bytes`: through the table the header places, or by reading each
    /// record when it places none.
    static func index(of bytes: [UInt8]) -> SnapshotIndex? {
        guard let header = header(of: bytes) else { return nil }
        let file = FileBytes(copying: bytes)
        return header.tableOffset == 0
            ? SnapshotIndex(verified: file, from: FileHeader.size)
            : SnapshotIndex(verified: file, recordsFrom: FileHeader.size, tableAt: Int(header.tableOffset))
    }

    /// The header of a snapshot, if it verifies.
    static func header(of bytes: [UInt8]) -> FileHeader? {
        guard case .valid(let header) = FileHeader.check(Array(bytes.prefix(FileHeader.size)), expecting: .snapshot)
        else { return nil }
        return header
    }
}
