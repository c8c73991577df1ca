import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file that processes sharing a store lock, and the commit counter they share through it.
///
/// Writers hold `flock(LOCK_EX)` on it around each commit and compaction, and readers that catch
/// up hold `LOCK_SH`. Its first eight bytes, mapped into every process, count the commits and
/// compactions made by anyone: a store compares the count with the last one it saw before each
/// read. That costs one atomic load, and only a changed count costs a read of the log.
final class LockFile: @unchecked Sendable {
    // `@unchecked` because of the descriptor and the mapped page: the descriptor is only passed to
    // `flock`, which the kernel serialises, and the page is only read and written through the
    // atomic operations of `CPreferencesAtomics`.
    let path: String
    private let descriptor: Int32
    private let page: UnsafeMutableRawPointer
    private static let pageSize = 4096

    init(path: String, fileSystem: FileSystem) throws(PreferencesError) {
        let descriptor = try fileSystem.check(.open, path) { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
        do throws(PreferencesError) {
            var status = stat()
            try fileSystem.check(.read, path) { fstat(descriptor, &status) }
            if Int(status.st_size) < Self.pageSize {
                try fileSystem.check(.write, path) { ftruncate(descriptor, off_t(Self.pageSize)) }
            }
            guard let mapped = mmap(nil, Self.pageSize, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
                mapped != MAP_FAILED
            else {
                throw PreferencesError(.fileOperationFailed(path: path, operation: "map", errorNumber: errno))
            }
            self.path = path
            self.descriptor = descriptor
            page = mapped
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit {
        munmap(page, Self.pageSize)
        close(descriptor)
    }

    /// How many commits and compactions all processes have made on this store.
    var commitCount: UInt64 {
        preferences_atomic_load(page)
    }

    /// Counts one more commit or compaction; call it while holding the exclusive lock.
    func countCommit() -> UInt64 {
        preferences_atomic_increment(page)
    }

    /// Takes the lock: exclusive for writers, shared for readers.
    ///
    /// Blocks while another holds it in a conflicting mode.
    func lock(exclusive: Bool) throws(PreferencesError) {
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) == -1 {
            guard errno == EINTR else {
                throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: errno))
            }
        }
    }

    func unlock() {
        flock(descriptor, LOCK_UN)
    }
}
