import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file that processes sharing a store lock, and the page of facts they share through it.
///
/// Writers hold its lock around each commit and compaction, and so do readers that catch up under
/// it (see `LockFile+Locking.swift`). Its first page, mapped into every process, holds:
///
/// ```
///   0  magic         UInt64  "PREFLCK3", written last when the page is set up
///   8  commitCount   UInt64  commits and compactions by anyone; starts at a random number
///  16  generation    UInt64  the generation of the last acknowledged commit
///  24  sequence      UInt64  its number in that generation's log (0: none since the compaction)
///  32  committedEnd  UInt64  where its record ends in the log
///  40  check         UInt64  a hash of the three words above, written after them; 0 when none
///  48  waiters       UInt64  threads, in any process, sleeping until the commit count changes
///  56  incarnation   UInt64  a random number each time the page is set up anew
///  64  mutex                 the robust mutex (Linux), at most 64 bytes
/// 128  mutexSetUp    UInt64  "PREFMTX1" once the mutex is set up, written after it
/// ```
///
/// A store compares the count with the last one it saw before each read: one atomic load, and only
/// a changed count costs a read of the log. The count is only ever compared for equality, so a page
/// set up again (on a new lock file) starts from a random number rather than from 0, which a store
/// may have seen before. The acknowledged commit tells opening whether records are missing from the
/// log, and where a write in progress began. Its three words are stored one at a time, so a writer
/// killed among them leaves some new and some old: the check, stored last, then matches neither,
/// and the page reads as having no acknowledged commit rather than a wrong one.
///
/// Invariants:
/// - The page's address never changes: a new file at the path is mapped in place (`MAP_FIXED`).
/// - Every word is read and written through the atomic operations of `CPreferencesAtomics`.
/// - The mutex is set up under an exclusive `flock`, and never again while the page says it is set
///   up, but by an opener that finds nobody else has the file open (``claimPresence()``):
///   re-initialising a mutex another process may hold or wait on is undefined.
///
/// The file is mapped, so another program shortening it while a store has it open makes the next
/// touch of the page end the process with `SIGBUS`, as with LMDB's `lock.mdb` and SQLite's `-shm`.
/// The library installs no signal handler. A lock file shortened while no store has it open is
/// lengthened and set up anew by the next store that opens it.
final class LockFile: @unchecked Sendable {
    // `@unchecked` because of the descriptor and the mapped page. The page is only read and written
    // through atomic operations. `descriptor` changes only in `reopen()`, which, like every lock and
    // unlock, the engine calls one at a time: under its store's write lock, or before the store exists.
    let path: String
    let fileSystem: FileSystem
    /// The files whose owner and mode a lock file created anew takes.
    let templates: [String]
    var descriptor: Int32
    let page: UnsafeMutableRawPointer
    /// How many of the page's sleepers are threads of this object's: a writer need not wake its own.
    let ownSleepers: UnsafeMutablePointer<UInt64>
    /// What commit watchers sleep on, and writers wake them through.
    let commitSignal: CommitSignal
    /// Whether the lock is the mutex in the page rather than `flock`.
    let usesMutex: Bool
    /// Whether a holder died holding the mutex since ``takeHolderDied()`` last answered.
    var holderDied = false
    /// Whether the writers' lock is held through this object: from a ``lock(exclusive:confirmingName:)``
    /// that returned to the ``unlock()`` after it, or to a move to the file at the path that let
    /// go of it and then failed.
    var isHeld = false
    /// Locks confirmed by the stamp alone since the last check with `fstat`.
    var locksSinceNameCheck = 0
    /// How many locks in a row the stamp alone may confirm (see ``confirm(stampedAt:)``): one
    /// `fstat` every 32 writes costs a write about 12 ns on average.
    static let locksBetweenNameChecks = 31
    static let pageSize = 4096
    static let magic: UInt64 = 0x334B_434C_4645_5250  // "PREFLCK3", little-endian
    static let mutexSetUpMark: UInt64 = 0x3158_544D_4645_5250  // "PREFMTX1", little-endian

    enum Word: Int {
        case magic = 0
        case commitCount = 8
        case generation = 16
        case sequence = 24
        case committedEnd = 32
        case check = 40
        case waiters = 48
        case incarnation = 56
        case mutex = 64
        case mutexSetUp = 128
    }

    /// The last commit a writer acknowledged, as the page records it.
    struct Acknowledged: Equatable {
        var generation: UInt64
        /// Its number in the log of `generation`; 0 when none was made since the compaction.
        var sequence: UInt64
        /// Where its record ends in the log.
        var committedEnd: Int
    }

    /// Opens the lock file at `path`, creating it owned like the first of `templates` that exists.
    ///
    /// Opening waits for nobody: the page is set up by the first lock that finds it is not.
    init(path: String, fileSystem: FileSystem, ownedLike templates: [String] = []) throws(PreferencesError) {
        let descriptor = try Self.openFile(at: path, fileSystem: fileSystem, ownedLike: templates)
        guard let mapped = mmap(nil, Self.pageSize, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
            mapped != MAP_FAILED
        else {
            let error = errno
            close(descriptor)
            throw PreferencesError(.fileOperationFailed(path: path, operation: "map", errorNumber: error))
        }
        self.path = path
        self.fileSystem = fileSystem
        self.templates = templates
        self.descriptor = descriptor
        page = mapped
        ownSleepers = .allocate(capacity: 1)
        ownSleepers.initialize(to: 0)
        commitSignal = CommitSignal(lockFilePath: path)
        usesMutex = fileSystem.sharesMemory && preferences_mutex_is_supported()
        try claimPresence()
    }

    deinit {
        munmap(page, Self.pageSize)
        close(descriptor)
        ownSleepers.deallocate()
    }

    /// Opens (creating if needed) the lock file at `path`, at least a page long.
    ///
    /// A lock file this creates takes the owner and mode of the first of `templates` that exists,
    /// so that a process run as another user (root, say) does not lock the store's owner out.
    ///
    /// In a folder every user can write (``FileSystem/isSharedFolder(holding:)``), another user may
    /// have made the lock file first, or a link in its place: one that is a link, or owned by
    /// another user, is refused with the reason, and the store opens read-only.
    static func openFile(
        at path: String,
        fileSystem: FileSystem,
        ownedLike templates: [String]
    ) throws(PreferencesError) -> Int32 {
        let created = try fileSystem.check(.open, path, allowing: EEXIST) {
            open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        let isShared = created == -1 && fileSystem.isSharedFolder(holding: path)
        let descriptor =
            created != -1
            ? created
            : try fileSystem.check(.open, path, allowing: isShared ? ELOOP : nil) {
                open(path, O_RDWR | O_CLOEXEC | (isShared ? O_NOFOLLOW : 0))
            }
        guard descriptor != -1 else {
            throw PreferencesError(
                .storeUnavailable(
                    path: path, reason: "its lock file is a symbolic link in a folder other users can write"))
        }
        do throws(PreferencesError) {
            if isShared {
                try refuseIfOwnedByAnotherUser(descriptor, path: path, fileSystem: fileSystem)
            }
            if created != -1 {
                // Readable before first unlock, like the store's other files: a lock file locked
                // then would leave the store read-only.
                try fileSystem.removeDataProtection(from: path)
                fileSystem.excludeFromBackup(path)
                if let ownership = fileSystem.ownership(ofFirstOf: templates) {
                    try fileSystem.apply(ownership, to: descriptor, path: path)
                }
            }
            try lengthenToAPage(descriptor, path: path, fileSystem: fileSystem)
            return descriptor
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Throws if the open lock file belongs to a user other than this process's, or is not a plain
    /// file of one name (a hard link another user made to a file of this user's).
    private static func refuseIfOwnedByAnotherUser(
        _ descriptor: Int32,
        path: String,
        fileSystem: FileSystem
    ) throws(PreferencesError) {
        let status = try fileSystem.status(ofDescriptor: descriptor, path: path)
        guard status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1 else {
            throw PreferencesError(
                .storeUnavailable(
                    path: path,
                    reason: "its lock file is not a plain file of one name in a folder other users can write"))
        }
        guard status.st_uid != geteuid() else { return }
        throw PreferencesError(
            .storeUnavailable(
                path: path,
                reason: "its lock file belongs to user \(status.st_uid), not to this process's user \(geteuid()), "
                    + "in a folder other users can write"))
    }

    /// Makes the file at least a page long: new, or shortened by another program while closed.
    ///
    /// A page lengthened from nothing reads as zeros, which the next lock sets up anew. It is
    /// written, not just lengthened with `ftruncate`: a page with no blocks behind it would take
    /// them at the first store into the mapping, and on a full disk that store would end the
    /// process with `SIGBUS`. Written, a full disk is an error here.
    ///
    /// Written under an exclusive `flock`, as a page is set up: two stores opening a new lock file
    /// at once would otherwise both find it short, and the second would write zeros over the page,
    /// and the mutex, that the first had set up and was holding by then.
    static func lengthenToAPage(
        _ descriptor: Int32,
        path: String,
        fileSystem: FileSystem
    ) throws(PreferencesError) {
        guard try fileSystem.status(ofDescriptor: descriptor, path: path).st_size < pageSize else { return }
        while flock(descriptor, LOCK_EX) == -1 {
            guard errno == EINTR else {
                throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: errno))
            }
        }
        defer { flock(descriptor, LOCK_UN) }
        let size = Int(try fileSystem.status(ofDescriptor: descriptor, path: path).st_size)
        guard size < pageSize else { return }
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize - size, alignment: 8)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        try fileSystem.store(UnsafeRawBufferPointer(zeros), to: descriptor, path: path, at: size)
    }

    func word(_ word: Word) -> UnsafeMutableRawPointer {
        page + word.rawValue
    }

    /// How many commits and compactions all processes have made on this store, as a number only
    /// worth comparing with an earlier one; 0 while the page is not set up.
    var commitCount: UInt64 {
        preferences_atomic_load(word(.commitCount))
    }

    /// The random number the page was set up with: a new one each time it is set up anew.
    var incarnation: UInt64 {
        preferences_atomic_load(word(.incarnation))
    }

    /// Whether the page was set up, and not abandoned since (see ``abandonPage()``).
    var pageIsSetUp: Bool {
        preferences_atomic_load(word(.magic)) == Self.magic
    }

    /// The last acknowledged commit, or `nil` if the page has none on record: it was set up anew, or
    /// a writer died while recording one.
    ///
    /// Read it holding the lock; read without it, a commit being recorded also reads as `nil`.
    var acknowledged: Acknowledged? {
        guard pageIsSetUp else { return nil }
        let check = preferences_atomic_load(word(.check))
        let acknowledged = Acknowledged(
            generation: preferences_atomic_load(word(.generation)),
            sequence: preferences_atomic_load(word(.sequence)),
            committedEnd: Int(clamping: preferences_atomic_load(word(.committedEnd)))
        )
        return check == Self.check(of: acknowledged) ? acknowledged : nil
    }

    /// What the three words of an acknowledged commit hash to: never 0, the value of a page with none.
    ///
    /// Each word is multiplied by its own odd constant, so words of two different commits mixed
    /// together match the check of neither (but with a chance of one in 2⁶⁴).
    static func check(of acknowledged: Acknowledged) -> UInt64 {
        let mixed =
            acknowledged.generation &* 0x9E37_79B9_7F4A_7C15
            ^ acknowledged.sequence &* 0xC2B2_AE3D_27D4_EB4F
            ^ UInt64(truncatingIfNeeded: acknowledged.committedEnd) &* 0x1656_67B1_9E37_79F9
        return mixed == 0 ? 1 : mixed
    }

    /// Records an acknowledged commit or a compaction and counts it; call it holding the exclusive lock.
    ///
    /// - Returns: The new commit count.
    func publish(_ acknowledged: Acknowledged) -> UInt64 {
        preferences_atomic_store(word(.generation), acknowledged.generation)
        preferences_atomic_store(word(.sequence), acknowledged.sequence)
        preferences_atomic_store(word(.committedEnd), UInt64(acknowledged.committedEnd))
        preferences_atomic_store(word(.check), Self.check(of: acknowledged))
        let count = preferences_atomic_increment_sequenced(word(.commitCount))
        // A system call only when someone else, in any process, sleeps on the count: this object's
        // own sleeper has nothing to learn from its own commit.
        if preferences_atomic_load_sequenced(word(.waiters)) > preferences_atomic_load_sequenced(ownSleepers) {
            commitSignal.wakeAll(on: word(.commitCount))
        }
        return count
    }

    /// Takes this open file's presence lock (see `preferences_presence_claim`), held for as long as
    /// the file is open.
    ///
    /// Found alone, nobody alive uses the page: it was copied or restored with the store, or every
    /// process using it crashed. Its mutex may then be held by a thread that is no process's, for
    /// ever, so it is set up anew at the next lock, and its sleepers' count starts from zero. Only
    /// the mutex leaf needs it: a lock taken with `flock` does not outlive its holder, nor travel
    /// with a copy.
    ///
    /// - Throws: A ``PreferencesError`` if the lock cannot be taken.
    func claimPresence() throws(PreferencesError) {
        guard usesMutex else { return }
        let claim = preferences_presence_claim(descriptor)
        guard claim >= 0 else {
            // A platform without the lock keeps the page as it is.
            if claim == -ENOTSUP { return }
            throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: -claim))
        }
        guard claim == 1 else { return }
        if mutexIsSetUp {
            preferences_atomic_store(word(.mutexSetUp), 0)
        }
        if preferences_atomic_load(word(.waiters)) != 0 {
            preferences_atomic_store(word(.waiters), 0)
        }
        let shared = preferences_presence_share(descriptor)
        guard shared == 0 else {
            throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: shared))
        }
    }

    /// Fills in a page set up anew, the magic last, and wakes whoever slept on the page it replaces.
    func startPage() {
        preferences_atomic_store(word(.incarnation), UInt64.random(in: 1...UInt64.max))
        preferences_atomic_store(word(.check), 0)
        preferences_atomic_store(word(.commitCount), UInt64.random(in: 1...UInt64.max))
        preferences_atomic_store(word(.magic), Self.magic)
        commitSignal.wakeAll(on: word(.commitCount))
    }

    /// Maps the first page of `descriptor` at the page's address, lengthening the file if it is short.
    func map(_ descriptor: Int32) throws(PreferencesError) {
        try Self.lengthenToAPage(descriptor, path: path, fileSystem: fileSystem)
        let mapped = mmap(page, Self.pageSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, descriptor, 0)
        guard mapped == page else {
            throw PreferencesError(.fileOperationFailed(path: path, operation: "map", errorNumber: errno))
        }
    }
}
