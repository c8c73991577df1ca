package import Foundation

/// What checking a store's files found, without changing them: for the package's tools.
package struct StoreVerification: Sendable {
    /// Each damaged file, and what is wrong with it.
    package let damage: [(path: String, description: String)]
    /// The bytes after the log's last good record, left by a writer killed mid-write; not damage.
    package let tornTailBytes: Int
    /// The entries that verify, outside the library's reserved namespaces.
    package let readableEntries: Int
    /// The migrations the ledger records.
    package let ledgerEntries: Int
    /// The files that exist, with their sizes.
    package let files: [(path: String, bytes: Int)]

    package var isDamaged: Bool { !damage.isEmpty }

    /// Checks every checksum and record of the store at `fileURL` and of its history, under a shared lock if other
    /// processes use it; creates, repairs and copies nothing.
    ///
    /// - Throws: A ``PreferencesError`` if a file cannot be read or was written by a newer version.
    package static func verify(fileURL: URL) throws -> StoreVerification {
        let path = fileURL.path
        let fileSystem = FileSystem()
        let lockPath = path + ".lock"
        let lock = fileSystem.fileExists(at: lockPath) ? try? LockFile(path: lockPath, fileSystem: fileSystem) : nil
        try lock?.lock(exclusive: false)
        defer { lock?.unlock() }
        let engine = FileEngine(
            path: path,
            fileSystem: fileSystem,
            lockFile: nil,
            compactionMinimumBytes: .max,
            refusal: "it is only being verified"
        )
        let loaded = try engine.load(readOnly: true, acknowledged: lock?.acknowledged)
        var files: [(String, Int)] = []
        for file in [path, engine.logPath, engine.historyPath] {
            if let size = try fileSystem.fileSize(at: file) {
                files.append((file, size))
            }
        }
        // Every entry decoded: verifying means finding any value that would not.
        var entries = loaded.entries
        var damage = loaded.damaged.map { ($0.path, $0.damage.description) }
        if let unreadable = entries.takeInSnapshot() {
            let report = unreadable.report(besides: entries.countUpperBound)
            damage.append((path, report.description))
        }
        if let history = try engine.readHistoryFile(), let report = history.damage {
            damage.append((engine.historyPath, report.description))
        }
        let keys = entries.all.keys
        return StoreVerification(
            damage: damage,
            tornTailBytes: loaded.tornBytes,
            readableEntries: keys.filter { !$0.isReserved }.count,
            ledgerEntries: keys.filter { $0.namespace == AppliedMigration.ledgerNamespace }.count,
            files: files
        )
    }
}
