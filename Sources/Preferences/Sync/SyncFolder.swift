import Dispatch
import Foundation

/// The folder that devices share to sync: each device's file in it (``SyncFile``), read from where
/// the last read ended, and this device's file, appended to and written whole.
///
/// The latest version of a key is the latest any file holds: files only grow, or are written
/// whole with each key's latest version, so a version read once stays there.
///
/// Not thread-safe: ``PreferencesSync`` calls it under its own lock, and with the store's writers
/// locked out, so that the processes of one device take turns with their device's file.
final class SyncFolder: SyncTransport {
    let path: String
    /// This device's identifier.
    let device: String
    /// The file whose owner and mode a new file of this device takes: the store's.
    private let template: String
    private let fileSystem: FileSystem

    /// How far each device's file was read, and the generation it had then.
    private var cursors: [String: (generation: UInt64, end: Int)] = [:]
    /// The files found damaged, with their size then: a damage is reported once, not each round.
    private var reportedDamage: [String: Int] = [:]

    /// How many versions this device's file holds.
    private var ownFileVersionCount = 0
    /// Whether this device's file must be written whole before anything is appended to it: there
    /// is none, or it does not verify.
    private var ownFileNeedsRewrite = true
    /// How many keys sync: this device's file is written whole when it holds more than twice as
    /// many versions, and 64 more.
    private let keyCount: Int
    /// The latest version of each key that any file holds, as far as read.
    private var latest: [ResolvedKey: SyncVersion] = [:]
    /// What watching the folder could not do, for the next round to report, and what it reported:
    /// a problem that goes on is reported once.
    private let watchProblems = Locked((waiting: [PreferencesError](), reported: Set<PreferencesError>()))

    init(
        path: String, device: String, keyCount: Int, ownedLike template: String, fileSystem: FileSystem = FileSystem()
    ) {
        self.path = path
        self.device = device
        self.keyCount = keyCount
        self.template = template
        self.fileSystem = fileSystem
    }

    func version(of key: ResolvedKey) -> SyncVersion? {
        latest[key]
    }

    func readChanges() throws(PreferencesError) -> SyncArrivals {
        let read = try readFiles()
        ownFileNeedsRewrite = read.ownFileNeedsRewrite
        let watchProblems = watchProblems.withLock { problems in
            defer { problems.waiting = [] }
            return problems.waiting
        }
        var arrivals = SyncArrivals(problems: watchProblems + read.problems, isComplete: !read.skippedAny)
        for entry in read.entries {
            arrivals.latestStamp = max(arrivals.latestStamp, entry.version.stamp)
            if entry.version.isNewer(than: latest[entry.key]) {
                latest[entry.key] = entry.version
                arrivals.changedKeys.insert(entry.key)
            }
        }
        return arrivals
    }

    func offer(_ offered: [SyncFile.Entry], held: () -> [SyncFile.Entry]) throws(PreferencesError)
        -> [PreferencesError]
    {
        var problems: [PreferencesError] = []
        if ownFileNeedsRewrite || ownFileVersionCount + offered.count > 2 * keyCount + 64 {
            if let problem = try rewriteOwnFile(held()) {
                problems.append(problem)
            }
            ownFileNeedsRewrite = false
        } else {
            try append(offered)
        }
        for entry in offered where entry.version.isNewer(than: latest[entry.key]) {
            latest[entry.key] = entry.version
        }
        return problems
    }

    func watch(on queue: DispatchQueue, _ onChange: @escaping @Sendable () -> Void) throws(PreferencesError)
        -> any SyncWatch
    {
        try fileSystem.createDirectory(at: path)
        let watchProblems = watchProblems
        let events = try FolderEvents(watching: path, ignoring: device + SyncFile.suffix, queue: queue) { problem in
            let isNew = watchProblems.withLock { problems in
                guard problems.reported.insert(problem).inserted else { return false }
                problems.waiting.append(problem)
                return true
            }
            if isNew {
                onChange()
            }
        }
        try events.resume(onChange: onChange)
        return events
    }

    /// The path of this device's file.
    var ownFilePath: String { filePath(of: device) }

    private func filePath(of device: String) -> String {
        (path as NSString).appendingPathComponent(device + SyncFile.suffix)
    }

    /// What ``readFiles()`` found.
    private struct Changes {
        /// The versions the files gained since the last read, this device's own file's included.
        var entries: [SyncFile.Entry] = []
        /// Files skipped because they do not verify or cannot be read, reported once each.
        var problems: [PreferencesError] = []
        /// Whether a file was skipped, or a version in one.
        var skippedAny = false
        /// Whether this device's file must be written whole before anything is appended to it:
        /// there is none, or it does not verify.
        var ownFileNeedsRewrite = false
    }

    /// What reading one file found.
    private enum FileReading {
        /// Nothing new since the last read.
        case unchanged
        /// The versions it gained, and where they end; `restarted` when the file was written whole
        /// since the last read, and was read from its start.
        case verified([SyncFile.Entry], cursor: (generation: UInt64, end: Int), restarted: Bool)
        /// It does not verify, or is of a newer format: skipped whole.
        case skipped(PreferencesError, size: Int)
    }

    /// Reads the versions each device's file gained since the last read.
    ///
    /// A file that does not verify from where the last read ended is skipped whole, and read again
    /// next time: it may be one the program that copies the folder has not finished copying. So is
    /// another device's file that cannot be read; this device's own must be. Nothing is taken in
    /// unless the whole read succeeds.
    private func readFiles() throws(PreferencesError) -> Changes {
        var changes = Changes()
        try fileSystem.createDirectory(at: path)
        var ownFileSeen = false
        var newCursors = cursors
        var ownVersionCount = ownFileVersionCount
        var reported = reportedDamage
        for name in try fileSystem.fileNames(in: path) {
            guard let device = SyncFile.device(named: name) else { continue }
            let isOwn = device == self.device
            ownFileSeen = ownFileSeen || isOwn
            let filePath = filePath(of: device)
            let reading: FileReading
            do throws(PreferencesError) {
                reading = try readFile(at: filePath, from: cursors[device])
            } catch {
                if isOwn { throw error }
                report(error, for: filePath, size: -1, into: &changes.problems, reported: &reported)
                changes.skippedAny = true
                continue
            }
            switch reading {
            case .unchanged:
                continue
            case .verified(let entries, let cursor, let restarted):
                newCursors[device] = cursor
                reported[filePath] = nil
                if isOwn {
                    ownVersionCount = (restarted ? 0 : ownVersionCount) + entries.count
                }
                changes.entries += entries
            case .skipped(let problem, let size):
                if isOwn, problem.code == .unsupportedFormatVersion {
                    // A newer version of the library on this device writes it: this one must not.
                    throw problem
                }
                changes.ownFileNeedsRewrite = changes.ownFileNeedsRewrite || isOwn
                changes.skippedAny = changes.skippedAny || !isOwn
                report(problem, for: filePath, size: size, into: &changes.problems, reported: &reported)
            }
        }
        cursors = newCursors
        ownFileVersionCount = ownVersionCount
        reportedDamage = reported
        changes.ownFileNeedsRewrite = changes.ownFileNeedsRewrite || !ownFileSeen
        return changes
    }

    /// Reads one device's file from where the last read ended, `cursor`.
    private func readFile(
        at filePath: String,
        from cursor: (generation: UInt64, end: Int)?
    ) throws(PreferencesError) -> FileReading {
        guard let file = try fileSystem.openExisting(at: filePath, readOnly: true) else {
            // Renamed over or removed since the listing: the next read finds what replaced it.
            return .unchanged
        }
        let header = try fileSystem.contents(of: file, from: 0, limit: FileHeader.size)
        let generation: UInt64
        switch FileHeader.check(header, expecting: .syncChanges) {
        case .valid(let valid):
            generation = valid.generation
        case .newerVersion(let version):
            return .skipped(
                PreferencesError(
                    .unsupportedFormatVersion(
                        path: filePath, found: version, supported: FileHeader.Kind.syncChanges.currentVersion)),
                size: header.count)
        case .damaged(let reason):
            return .skipped(
                PreferencesError(.unverifiedSyncFile(path: filePath, offset: 0, reason: reason)), size: header.count)
        }
        let restarted = cursor?.generation != generation
        let start = restarted ? FileHeader.size : cursor?.end ?? FileHeader.size
        let size = try fileSystem.status(of: file).size
        guard size != start || restarted else { return .unchanged }
        let tail = try fileSystem.contents(of: file, from: start)
        switch SyncFile.read(tail, from: 0) {
        case .verified(let entries, let end):
            return .verified(entries, cursor: (generation, start + end), restarted: restarted)
        case .damaged(let offset, let reason):
            return .skipped(
                PreferencesError(.unverifiedSyncFile(path: filePath, offset: start + offset, reason: reason)),
                size: start + tail.count)
        }
    }

    /// Adds `problem` to `problems` unless it was reported for the file at `path` when it had
    /// `size` bytes, and notes it in `reported`.
    private func report(
        _ problem: PreferencesError,
        for path: String,
        size: Int,
        into problems: inout [PreferencesError],
        reported: inout [String: Int]
    ) {
        guard reported[path] != size else { return }
        reported[path] = size
        problems.append(problem)
    }

    /// Appends one round's versions to this device's file, and flushes them to stable storage.
    ///
    /// The file must exist and verify (``readChanges()``): otherwise write it whole instead.
    private func append(_ entries: [SyncFile.Entry]) throws(PreferencesError) {
        guard !entries.isEmpty else { return }
        guard let file = try fileSystem.openExisting(at: ownFilePath, readOnly: false) else {
            throw PreferencesError(
                .fileOperationFailed(
                    path: ownFilePath, operation: FileSystem.Operation.open.rawValue, errorNumber: ENOENT))
        }
        let header = try fileSystem.contents(of: file, from: 0, limit: FileHeader.size)
        guard case .valid(let valid) = FileHeader.check(header, expecting: .syncChanges),
            let cursor = cursors[device], cursor.generation == valid.generation
        else {
            throw PreferencesError(
                .storeUnavailable(path: ownFilePath, reason: "the device's file changed since it was last read"))
        }
        var writer = ByteWriter()
        SyncFile.appendFrame(entries, to: &writer)
        try fileSystem.store(writer.bytes, in: file, at: cursor.end)
        try fileSystem.truncate(file, to: cursor.end + writer.count)
        try fileSystem.synchronize(file)
        cursors[device] = (valid.generation, cursor.end + writer.count)
        ownFileVersionCount += entries.count
    }

    /// Writes this device's file whole, with `entries`, and renames it over the one there.
    ///
    /// - Returns: A failure to flush the folder after the rename, which does not undo it.
    private func rewriteOwnFile(_ entries: [SyncFile.Entry]) throws(PreferencesError) -> PreferencesError? {
        let generation = UInt64.random(in: 1...UInt64.max)
        var writer = ByteWriter()
        if !entries.isEmpty {
            SyncFile.appendFrame(entries, to: &writer)
        }
        let bytes = SyncFile.header(generation: generation) + writer.bytes
        let problem = try fileSystem.replaceFile(at: ownFilePath, with: bytes, ownedLike: template)
        cursors[device] = (generation, bytes.count)
        reportedDamage[ownFilePath] = nil
        ownFileVersionCount = entries.count
        return problem
    }
}
