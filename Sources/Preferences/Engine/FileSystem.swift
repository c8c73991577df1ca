import CPreferencesAtomics
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file operations the engine performs, as thin wrappers over the system calls.
///
/// Every failure becomes a ``PreferencesError`` naming the operation, the path and the `errno`.
/// ``fault`` is the seam through which tests make a chosen operation fail, the way a full disk or a
/// read-only volume would, while everything else runs against the real file system.
struct FileSystem: Sendable {
    enum Operation: String, Sendable, CaseIterable {
        case open
        case openForWriting = "open for writing"
        case read
        case write
        case fsync
        case rename
        case truncate
        case createDirectory = "create directory"
        case fsyncDirectory = "fsync the directory"
        case removeDataProtection = "remove data protection from"
        case setOwnership = "set the owner and mode of"
        case excludeFromBackup = "exclude from backups"
        case allocate = "allocate space for"
        case map
        case remove
        case list
        case watch
    }

    /// How far a file that ``replaceFile(at:with:ownedLike:persistence:)`` writes must reach stable
    /// storage before the call returns.
    enum Persistence {
        /// The file and its name are on the medium: what a synchronous commit needs.
        case flushed
        /// The file reaches the drive before its rename, and its name after it, so that a power
        /// loss leaves the old file or the new one whole; on Apple platforms not yet on the medium
        /// (see ``synchronize(_:flushesToDisk:)``). What a snapshot needs: it replaces the log's
        /// records, some of which may have been flushed by synchronous commits.
        case ordered
        /// Nothing is asked of the drive: the file is safe from the process being killed, and a
        /// power loss may leave the old file, or the new one cut short, which opening reports. What
        /// a new, empty log needs in standard durability: the commits that go into it are not
        /// flushed either, and the first one that is flushes the log's name with it.
        case deferred

        /// The `flushesToDisk` of the file's synchronization before its rename; `nil` for none.
        var synchronizesFile: Bool? {
            switch self {
            case .flushed: true
            case .ordered: false
            case .deferred: nil
            }
        }
    }

    /// Returns an `errno` for an operation that should fail, or `nil` to let it run.
    var fault: @Sendable (Operation, String) -> Int32? = { _, _ in nil }

    /// Whether the snapshot, log and history the store writes are kept out of backups, as its lock file
    /// always is (see ``excludeFromBackup(_:)``).
    var excludesStoreFilesFromBackup = false

    /// Whether writers share memory: a mutex in the lock file's page and a mapping of the log.
    ///
    /// The engine's two leaves, chosen here once: on Linux writers share memory; on Apple
    /// platforms, which have no robust mutex, they lock the file with `flock` and append with
    /// `pwrite`. Tests turn it off to run that engine on Linux.
    var sharesMemory = FileSystem.canShareMemory

    /// Whether this platform has what ``sharesMemory`` needs, and the process did not ask for the
    /// leaves Apple platforms get with `PREFERENCES_ENGINE=portable` (so that the whole test suite
    /// runs them on Linux; see CONTRIBUTING.md).
    ///
    /// `getenv` rather than `ProcessInfo.environment`: that builds a dictionary of every variable,
    /// about a third of what opening a small store costs in a process that has not opened one.
    static let canShareMemory: Bool =
        preferences_mutex_is_supported() && getenv("PREFERENCES_ENGINE").map { String(cString: $0) } != "portable"

    /// The size of the file at `path`, or `nil` if there is no file there.
    func fileSize(at path: String) throws(PreferencesError) -> Int? {
        var status = stat()
        let result = try check(.read, path, allowing: ENOENT) { stat(path, &status) }
        return result == -1 ? nil : Int(status.st_size)
    }

    /// The bytes of a file that is never changed in place (a snapshot); `nil` if there is no file at
    /// `path`.
    ///
    /// Mapped where writers share memory (Linux, see ``sharesMemory`` and ``FileBytes``), read into
    /// memory elsewhere, and where the file cannot be mapped (an empty one, or on a file system
    /// without mappings). On Apple platforms a store may live on a network volume or behind a file
    /// provider, where a page of a mapping that cannot be read ends the process.
    func readOnlyBytes(at path: String) throws(PreferencesError) -> FileBytes? {
        let descriptor = try check(.open, path, allowing: ENOENT) { open(path, O_RDONLY | O_CLOEXEC) }
        if descriptor == -1 { return nil }
        defer { close(descriptor) }
        let length = Int(try status(ofDescriptor: descriptor, path: path).st_size)
        if sharesMemory, length > 0, fault(.map, path) == nil,
            let address = mmap(nil, length, PROT_READ, MAP_PRIVATE | Self.mapPopulatesPages, descriptor, 0),
            address != MAP_FAILED
        {
            return FileBytes(mappedAt: UnsafeRawPointer(address), length: length)
        }
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: length)
        var filled = 0
        do throws(PreferencesError) {
            _ = try readUntilFull(descriptor, path: path, into: UnsafeMutableRawBufferPointer(buffer), filled: &filled)
        } catch {
            buffer.deallocate()
            throw error
        }
        return FileBytes(adopting: buffer, count: filled)
    }

    /// Reads from `descriptor` into `buffer` until the file ends or `buffer` is full, counting in
    /// `filled` the bytes read.
    ///
    /// - Returns: Whether the file ended.
    private func readUntilFull(
        _ descriptor: Int32,
        path: String,
        into buffer: UnsafeMutableRawBufferPointer,
        filled: inout Int
    ) throws(PreferencesError) -> Bool {
        while filled < buffer.count {
            // At most 1 GiB a call, so that the count always fits the Int32 `check` returns.
            let count = try check(.read, path) {
                Int32(read(descriptor, buffer.baseAddress! + filled, min(buffer.count - filled, 1 << 30)))
            }
            if count == 0 {
                return true
            }
            filled += Int(count)
        }
        return false
    }

    /// Replaces the file at `path` with `bytes` so that a crash at any moment leaves either the old
    /// file or the new one: write a temporary file, sync it, rename it over, sync the directory.
    ///
    /// `persistence` says how far the file and its name must reach stable storage first; see
    /// ``Persistence``.
    ///
    /// The new file keeps the owner and mode of the one it replaces, or, when there is none, takes
    /// those of `template`: a compaction run by another user (root, say) must not lock the owner
    /// out, nor widen or narrow a mode they chose.
    ///
    /// A failure before the rename throws, and the old file is untouched. Once the rename is done
    /// the new file is what everyone reads, so a failure to sync the directory after it does not
    /// undo the write: it is returned, for the caller to report, as the durability it could not
    /// confirm.
    func replaceFile(
        at path: String,
        with bytes: [UInt8],
        ownedLike template: String,
        persistence: Persistence = .flushed
    ) throws(PreferencesError) -> PreferencesError? {
        let directory = FileSystem.folder(of: path)
        try createDirectory(at: directory)
        let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try writeNewFile(
            at: temporary, bytes: bytes, ownership: ownership(ofFirstOf: [path, template]), persistence: persistence
        )
        do throws(PreferencesError) {
            try check(.rename, path) { rename(temporary, path) }
        } catch {
            unlink(temporary)
            throw error
        }
        guard persistence != .deferred else { return nil }
        do throws(PreferencesError) {
            try syncDirectory(directory)
            return nil
        } catch {
            return error
        }
    }

    /// Removes a file, if there is one, and syncs its directory.
    func removeFile(at path: String) throws(PreferencesError) {
        guard try check(.remove, path, allowing: ENOENT, { unlink(path) }) == 0 else { return }
        try syncDirectory(FileSystem.folder(of: path))
    }

    /// Writes a file that must not exist yet, owned like `template`, and syncs it and its directory.
    func createFile(at path: String, with bytes: [UInt8], ownedLike template: String) throws(PreferencesError) {
        try writeNewFile(at: path, bytes: bytes, ownership: ownership(ofFirstOf: [template]), persistence: .flushed)
        try synchronizeFolder(of: path)
    }

    /// Removes the temporary files that a replacement of any of `paths`, files of one folder, left
    /// when it was killed before its rename.
    ///
    /// Only the holder of the store's exclusive lock writes temporary files, so while it holds the
    /// lock every one of them is a leftover.
    func removeTemporaryFiles(of paths: [String]) {
        for path in files(beside: paths, namedAfterThemWith: ".tmp-") {
            unlink(path)
        }
    }

    /// The copies kept of `path` when it was damaged (`path.damaged-<time>`).
    func copies(of path: String) -> [String] {
        files(beside: [path], namedAfterThemWith: ".damaged-")
    }

    /// The files in the folder of `paths` whose names begin with one of theirs and `infix`.
    private func files(beside paths: [String], namedAfterThemWith infix: String) -> [String] {
        guard let first = paths.first else { return [] }
        let directory = Self.folder(of: first)
        let prefixes = paths.map { Self.split($0).name + infix }
        return (try? fileNames(in: directory))?.filter { name in prefixes.contains(where: name.hasPrefix) }
            .map { Self.path(of: $0, in: directory) } ?? []
    }

    /// A path split at its last `/`: the folder (`.` when it names none, `/` for the root) and the
    /// name in it, empty for a path ending in `/`.
    ///
    /// Not `NSString`'s path methods: they cost more than listing the folder, on every open.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return (".", path) }
        let name = String(path[path.index(after: slash)...])
        return (slash == path.startIndex ? "/" : String(path[..<slash]), name)
    }

    /// The folder a path names its file in (see ``split(_:)``).
    static func folder(of path: String) -> String {
        split(path).directory
    }

    /// The path of the file named `name` in `folder`.
    static func path(of name: String, in folder: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// The names of the entries of the folder at `path`, but `.` and `..`.
    func fileNames(in path: String) throws(PreferencesError) -> [String] {
        // One pass of `readdir`: a `FileManager` listing costs far more for each file, which
        // opening a store in a fresh process would pay.
        let directory = path.isEmpty ? "." : path
        if let injected = fault(.list, directory) {
            throw PreferencesError(
                .fileOperationFailed(path: directory, operation: Operation.list.rawValue, errorNumber: injected))
        }
        guard let stream = opendir(directory) else {
            throw PreferencesError(
                .fileOperationFailed(path: directory, operation: Operation.list.rawValue, errorNumber: errno))
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(cString: bytes.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." {
                names.append(name)
            }
        }
        return names
    }

    func fileExists(at path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// Creates a file that must not exist yet, gives it `ownership`, writes it whole and syncs it; a
    /// file this call created is removed if any step fails, so no partial file is left behind.
    private func writeNewFile(
        at path: String,
        bytes: [UInt8],
        ownership: Ownership?,
        persistence: Persistence
    ) throws(PreferencesError) {
        let descriptor = try check(.open, path) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
        defer { close(descriptor) }
        do throws(PreferencesError) {
            if let ownership {
                try apply(ownership, to: descriptor, path: path)
            }
            try writeWhole(bytes, to: descriptor, path: path, persistence: persistence)
        } catch {
            unlink(path)
            throw error
        }
    }

    private func writeWhole(
        _ bytes: [UInt8],
        to descriptor: Int32,
        path: String,
        persistence: Persistence
    ) throws(PreferencesError) {
        try removeDataProtection(from: path)
        if excludesStoreFilesFromBackup {
            // Set on the file before its rename, which keeps it.
            excludeFromBackup(path)
        }
        var offset = 0
        while offset < bytes.count {
            let written = try check(.write, path) {
                bytes.withUnsafeBytes { buffer in
                    Int32(clamping: write(descriptor, buffer.baseAddress! + offset, buffer.count - offset))
                }
            }
            offset += Int(written)
        }
        if let synchronizes = persistence.synchronizesFile {
            _ = try check(.fsync, path) { Self.synchronize(descriptor, flushesToDisk: synchronizes) }
        }
    }

    /// Creates the store's folder at `path`, and the folders above it that are missing.
    ///
    /// Only the store's own folder loses its Data Protection (see ``removeDataProtection(from:)``),
    /// so that what the store creates in it is readable before first unlock too. The folders above
    /// it (`Application Support` on a fresh install) hold the app's other files, which keep the
    /// protection they would have had.
    func createDirectory(at path: String) throws(PreferencesError) {
        try createDirectory(at: path, isStoresOwn: true)
    }

    private func createDirectory(at path: String, isStoresOwn: Bool) throws(PreferencesError) {
        var status = stat()
        if stat(path, &status) == 0 { return }
        let parent = FileSystem.folder(of: path)
        if parent != path {
            try createDirectory(at: parent, isStoresOwn: false)
        }
        let result = try check(.createDirectory, path, allowing: EEXIST) { mkdir(path, 0o700) }
        if result == 0 {
            if isStoresOwn {
                try removeDataProtection(from: path)
            }
            try syncDirectory(parent.isEmpty ? "." : parent)
        }
    }

    /// Flushes the folder holding `path` to stable storage: the file's name, once created or renamed.
    func synchronizeFolder(of path: String) throws(PreferencesError) {
        try syncDirectory(FileSystem.folder(of: path))
    }

    /// Flushes the folder at `directory`, as ``folder(of:)`` names it, never empty.
    private func syncDirectory(_ directory: String) throws(PreferencesError) {
        let descriptor = try check(.fsyncDirectory, directory) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(descriptor) }
        _ = try check(.fsyncDirectory, directory) { fsync(descriptor) }
    }

    /// Runs a system call that returns -1 on failure, through the fault seam.
    ///
    /// Retries on `EINTR`. `allowing` names an `errno` (such as `ENOENT` for an optional file) that
    /// yields -1 instead of an error.
    @discardableResult
    func check(
        _ operation: Operation,
        _ path: String,
        allowing allowed: Int32? = nil,
        _ call: () -> Int32
    ) throws(PreferencesError) -> Int32 {
        if let injected = fault(operation, path) {
            throw PreferencesError(
                .fileOperationFailed(path: path, operation: operation.rawValue, errorNumber: injected)
            )
        }
        while true {
            let result = call()
            if result != -1 { return result }
            let error = errno
            if error == EINTR { continue }
            if error == allowed { return -1 }
            throw PreferencesError(.fileOperationFailed(path: path, operation: operation.rawValue, errorNumber: error))
        }
    }
}

extension PreferencesError {
    /// Whether a file operation failed because the file or its volume may not be written.
    var isPermissionDenied: Bool {
        guard case .fileOperationFailed(_, _, let errorNumber) = detail else { return false }
        return errorNumber == EACCES || errorNumber == EPERM || errorNumber == EROFS
    }

    /// Whether a file operation failed for lack of room: a full disk, or the user's quota.
    var isNoSpace: Bool {
        guard case .fileOperationFailed(_, _, let errorNumber) = detail else { return false }
        return errorNumber == ENOSPC || errorNumber == EDQUOT
    }
}
