import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file's owner, group and permission bits, carried over to the file that replaces it.
struct Ownership: Equatable {
    var user: uid_t
    var group: gid_t
    var mode: mode_t
}

extension FileSystem {
    /// The ownership of the first of `paths` that exists, or `nil` if none does.
    func ownership(ofFirstOf paths: [String]) -> Ownership? {
        for path in paths {
            var status = stat()
            if stat(path, &status) == 0 {
                return Ownership(user: status.st_uid, group: status.st_gid, mode: status.st_mode & 0o7777)
            }
        }
        return nil
    }

    /// Gives the open file at `path` an owner, group and mode.
    ///
    /// The owner is changed only when it differs from this process's, which only a privileged
    /// process can do; failing to is an error, because a file left owned by another user locks its
    /// owner out.
    func apply(_ ownership: Ownership, to descriptor: Int32, path: String) throws(PreferencesError) {
        var status = stat()
        try check(.setOwnership, path) { fstat(descriptor, &status) }
        if status.st_uid != ownership.user || status.st_gid != ownership.group {
            try check(.setOwnership, path) { fchown(descriptor, ownership.user, ownership.group) }
        }
        if status.st_mode & 0o7777 != ownership.mode {
            try check(.setOwnership, path) { fchmod(descriptor, ownership.mode) }
        }
    }

    /// Whether the folder holding `path` lets every user create files in it and keeps them from
    /// removing each other's: world-writable and sticky, as `/tmp` is.
    ///
    /// There another user can make a file at a path before its owner does, or a link in its place.
    func isSharedFolder(holding path: String) -> Bool {
        var status = stat()
        guard stat(FileSystem.folder(of: path), &status) == 0 else { return false }
        return status.st_mode & S_IWOTH != 0 && status.st_mode & S_ISVTX != 0
    }

    /// The path with every symbolic link in its last component followed, so that the files kept
    /// beside it (the log, the lock) are beside the real file; the path itself if it is no link.
    ///
    /// A link to a file that does not exist yet resolves to where that file will be.
    func resolvingLinks(_ path: String) -> String {
        var resolved = path
        // As many links as the system itself follows before it gives up with ELOOP.
        for _ in 0..<40 {
            var status = stat()
            guard lstat(resolved, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return resolved }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let count = readlink(resolved, &target, target.count - 1)
            guard count > 0 else { return resolved }
            let destination = String(decoding: target[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if destination.hasPrefix("/") {
                resolved = destination
            } else {
                resolved = FileSystem.path(of: destination, in: FileSystem.folder(of: resolved))
            }
        }
        return resolved
    }
}
