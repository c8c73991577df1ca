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
/// it. On Linux the lock is a robust, process-shared mutex in the page: it costs no system call
/// when nobody else holds it, and when a holder dies holding it the next one is told
/// (``takeHolderDied()``), so that it cuts the record the dead writer may have left half made. On
/// platforms with no robust mutex (Apple's) it is `flock` on the file, exclusive for writers and
/// shared for readers: two system calls per lock, and a lock the kernel drops when its holder dies.
///
/// Its first page, mapped into every process, holds:
///
/// ```
///  0  magic         UInt64  "PREFLCK2", written last when the page is set up
///  8  commitCount   UInt64  commits and compactions by anyone; starts at a random number
/// 16  generation    UInt64  the generation of the last acknowledged commit
/// 24  sequence      UInt64  its number in that generation's log (0: none since the compaction)
/// 32  committedEnd  UInt64  where its record ends in the log
/// 40  check         UInt64  a hash of the three words above, written after them; 0 when none
/// 48  waiters       UInt64  threads, in any process, sleeping until the commit count changes
/// 56  incarnation   UInt64  a random number each time the page is set up anew
/// 64  mutex                 the robust mutex (Linux), set up with the page under `flock`
/// ```
///
/// A store compares the count with the last one it saw before each read: one atomic load, and only
/// a changed count costs a read of the log. The count is only ever compared for equality, so a page
/// set up again (after the file was shortened or replaced) starts from a random number rather than
/// from 0, which a store may have seen before. The acknowledged commit tells opening whether records
/// are missing from the log, and where a write in progress began. Its three words are stored one
/// at a time, so a writer killed among them leaves some new and some old: the check, stored last,
/// then matches neither, and the page reads as having no acknowledged commit rather than a wrong one.
///
/// Another program may shorten or replace the file while processes use it. Touching a mapped page
/// past the end of a file would kill the process with `SIGBUS`, so the page is guarded (see
/// `CPreferencesAtomics`): it reads as zeros until the next ``lock(exclusive:)`` maps the file again.
/// A thread holding the mutex when that happens lets go of the mutex it locked, not of whatever
/// replaced it (``unlock()``). A lock also makes sure that the open file still has a name, and
/// locks the one at the path if not, so that two writers do not go on locking different files. A
/// writer with the log mapped asks the log's lock stamp rather than the kernel
/// (``confirm(stampedAt:)``), so a write that nobody else contends makes no system call, but for
/// one `fstat` every 32nd lock; without a stamp that names its page it checks with that `fstat`. (Checking on a timer instead
/// was tried: a writer that missed a replacement for a few milliseconds committed where another
/// process's readers never looked. The stamp cannot be missed that way: a process that makes a new
/// lock file stamps the log as it opens the store.)
final class LockFile: @unchecked Sendable {
    // `@unchecked` because of the descriptor and the mapped page. The page's address never changes
    // (it is mapped again in place, with `MAP_FIXED`), and it is only read and written through the
    // atomic operations of `CPreferencesAtomics`. `descriptor` changes only in
    // `lock(exclusive:)`, which, like `unlock()`, the engine calls one at a time, under its store's
    // write lock or before the store exists; and only under `remapping`, which is all a read that
    // maps a lost page again (`mapAgainIfLost()`) reads it under.
    let path: String
    private let fileSystem: FileSystem
    /// The files whose owner and mode a lock file created anew takes.
    private let templates: [String]
    private var descriptor: Int32
    /// Held to map the page again, and to switch `descriptor` to another file.
    ///
    /// A read maps a lost page again without the lock. Unserialised, it could read the descriptor
    /// of a file the writer had just left and closed, whose number the next file opened anywhere
    /// in the process takes, and lengthen and map that file as the lock page; or map the old file
    /// back over the new one the writer had just mapped.
    private let remapping = Locked(())
    private let page: UnsafeMutableRawPointer
    private let guardSlot: Int32
    /// The guard's mark of the page lost, read without a call: ``commitCount`` reads it on every read.
    private let lostMark: UnsafeRawPointer
    /// How many of the page's sleepers are threads of this object's: a writer need not wake its own.
    private let ownSleepers: UnsafeMutablePointer<UInt64>
    /// Whether the lock is the mutex in the page rather than `flock`.
    let usesMutex: Bool
    /// Whether a holder died holding the mutex since ``takeHolderDied()`` last answered.
    private var holderDied = false
    /// Locks confirmed by the stamp alone since the last check with `fstat`.
    private var locksSinceNameCheck = 0
    /// How many locks in a row the stamp alone may confirm (see ``confirm(stampedAt:)``): one
    /// `fstat` every 32 writes costs a write about 12 ns on average.
    static let locksBetweenNameChecks = 31
    /// What the mutex's holder needs to let go of it should its page be replaced: the entry after
    /// it on the thread's list of robust mutexes (see `preferences_mutex_abandon`).
    private var successor: UInt = 0
    private static let pageSize = 4096
    private static let magic: UInt64 = 0x3248_4B43_4C46_4552  // "PREFLCK2", little-endian

    private enum Word: Int {
        case magic = 0
        case commitCount = 8
        case generation = 16
        case sequence = 24
        case committedEnd = 32
        case check = 40
        case waiters = 48
        case incarnation = 56
        case mutex = 64
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
        usesMutex = fileSystem.sharesMemory && preferences_mutex_is_supported()
        // Unguarded only when every one of the guard's slots is taken; the page still works.
        guardSlot = Int32(preferences_guard_register(mapped, Self.pageSize))
        lostMark = preferences_guard_mark(guardSlot)
        if usesMutex {
            try setUpUnderFileLock()
        }
    }

    deinit {
        preferences_guard_unregister(guardSlot)
        munmap(page, Self.pageSize)
        close(descriptor)
        ownSleepers.deallocate()
    }

    /// Opens (creating if needed) the lock file at `path`, at least a page long.
    ///
    /// A lock file this creates takes the owner and mode of the first of `templates` that exists,
    /// so that a process run as another user (root, say) does not lock the store's owner out.
    private static func openFile(
        at path: String,
        fileSystem: FileSystem,
        ownedLike templates: [String]
    ) throws(PreferencesError) -> Int32 {
        let created = try fileSystem.check(.open, path, allowing: EEXIST) {
            open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        let descriptor =
            created != -1 ? created : try fileSystem.check(.open, path) { open(path, O_RDWR | O_CLOEXEC) }
        do throws(PreferencesError) {
            if created != -1 {
                // Readable before first unlock, like the store's other files: a lock file locked
                // then would leave the store read-only.
                try fileSystem.removeDataProtection(from: path)
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

    /// Makes the file at least a page long: new, or shortened by another program.
    private static func lengthenToAPage(
        _ descriptor: Int32,
        path: String,
        fileSystem: FileSystem
    ) throws(PreferencesError) {
        var status = stat()
        try fileSystem.check(.read, path) { fstat(descriptor, &status) }
        if Int(status.st_size) < pageSize {
            try fileSystem.check(.write, path) { ftruncate(descriptor, off_t(pageSize)) }
        }
    }

    private func word(_ word: Word) -> UnsafeMutableRawPointer {
        page + word.rawValue
    }

    /// How many commits and compactions all processes have made on this store, as a number only
    /// worth comparing with an earlier one; 0 while the page is not set up.
    ///
    /// A page lost to another program shortening the file reads 0, and would go on reading 0
    /// whatever others commit: a store that took that 0 for the count it had seen would never
    /// catch up again. So a 0 maps the file again first, and the count is the file's. So does a
    /// page the guard marks lost that reads otherwise: one thread's fault can replace the page
    /// after another has mapped the file again, and this process's next count written into that
    /// private page would hide the loss from every later read.
    var commitCount: UInt64 {
        let count = preferences_atomic_load(word(.commitCount))
        guard count == 0 || preferences_guard_mark_is_set(lostMark) else { return count }
        mapAgainIfLost()
        return preferences_atomic_load(word(.commitCount))
    }

    /// The last acknowledged commit, or `nil` if the page has none on record: it was set up anew, or
    /// a writer died while recording one.
    ///
    /// Read it holding the lock; read without it, a commit being recorded also reads as `nil`.
    var acknowledged: Acknowledged? {
        guard preferences_atomic_load(word(.magic)) == Self.magic else { return nil }
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
        while true {
            preferences_atomic_store(word(.generation), acknowledged.generation)
            preferences_atomic_store(word(.sequence), acknowledged.sequence)
            preferences_atomic_store(word(.committedEnd), UInt64(acknowledged.committedEnd))
            preferences_atomic_store(word(.check), Self.check(of: acknowledged))
            let count = preferences_atomic_increment_sequenced(word(.commitCount))
            // A system call only when someone else, in any process, sleeps on the count: this
            // object's own sleeper has nothing to learn from its own commit.
            if preferences_atomic_load_sequenced(word(.waiters)) > preferences_atomic_load_sequenced(ownSleepers) {
                preferences_wake_all(word(.commitCount))
            }
            // Shortened while this ran: what was written went to a page of zeros nobody else sees.
            guard preferences_guard_mark_is_set(lostMark), (try? restoreAfterLoss()) != nil else {
                return count
            }
        }
    }

    /// The random number the page was set up with: a new one each time it is set up anew.
    var incarnation: UInt64 {
        preferences_atomic_load(word(.incarnation))
    }

    /// Takes the lock, exclusive for writers and shared for readers (the mutex is always
    /// exclusive), on the file the path names now.
    ///
    /// Blocks while another holds it in a conflicting mode. Afterwards the page is mapped from the
    /// locked file and, with the exclusive lock, set up.
    ///
    /// - Parameters:
    ///   - exclusive: Whether to lock for writing; the mutex is exclusive either way.
    ///   - confirmingName: Whether to check that the file still has a name (see
    ///     ``confirm(stampedAt:)``); `false` leaves it to `confirm` under the mutex. `flock`
    ///     always checks: it costs two system calls of its own.
    /// - Throws: A ``PreferencesError`` if the file cannot be locked, opened or mapped.
    func lock(exclusive: Bool, confirmingName: Bool = true) throws(PreferencesError) {
        guard usesMutex else { return try lockFile(exclusive: exclusive) }
        while true {
            // A page set up anew holds no mutex yet: locking its zeros would be locking nothing.
            guard preferences_atomic_load(word(.magic)) == Self.magic else {
                try setUpUnderFileLock()
                continue
            }
            // Through a local: an inout access to the stored property is checked at run time.
            var successor: UInt = 0
            let result = preferences_mutex_lock(word(.mutex), &successor)
            self.successor = successor
            if result == PREFERENCES_MUTEX_LOST {
                try setUpUnderFileLock()
                continue
            }
            // Held by another for a while: look at the page again, which may have been replaced.
            if result == ETIMEDOUT {
                continue
            }
            guard result == 0 || result == EOWNERDEAD else {
                throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: result))
            }
            // A page lost to another program shortening the file is a private page of zeros now,
            // and a file deleted or replaced keeps out nobody who opened the one at the path: either
            // way, its mutex keeps nobody else out.
            if preferences_guard_mark_is_set(lostMark) || preferences_atomic_load(word(.magic)) != Self.magic {
                releaseMutex()
                try setUpUnderFileLock()
                continue
            }
            if confirmingName && !hasName {
                try leaveForFileAtPath()
                continue
            }
            holderDied = holderDied || result == EOWNERDEAD
            return
        }
    }

    /// Confirms that the lock this thread holds is on the file the path names, and records in
    /// `stamp` that it is; `false` if the file has lost its name.
    ///
    /// `stamp` is the log's lock stamp (see ``LogFile``), a word every process using the store
    /// maps. A holder writes its page's incarnation there only after checking that its file still
    /// has a name, and only over the value it read before checking. So a stamp holding this page's
    /// incarnation was written by a holder of this page, and no holder of another page has stamped
    /// since; a process that sets up a page on a new file at the path stamps it as it opens the
    /// store, and one that replaces the log stamps the log it replaces. This page is then current
    /// as far as any other process can tell, with no system call. Otherwise one `fstat` checks.
    ///
    /// Every ``locksBetweenNameChecks``th lock checks with `fstat` whatever the stamp says, so that
    /// a writer on a file deleted while no other process had the store open moves to the file at
    /// the path within that many writes, before a process that opens the store later can start a
    /// commit beside one of its own. A file deleted while its holder is inside a hold goes
    /// unnoticed until a later lock, as with a check by `fstat` on every lock.
    ///
    /// Call it holding the lock, taken with `confirmingName: false`. It makes at most one system
    /// call and waits for nobody, so it may run under the engine's own lock, which reads take.
    ///
    /// - Parameter stamp: The log's lock stamp, or `nil` when the store has no log mapped: then
    ///   only `fstat` can tell.
    /// - Returns: Whether the lock is confirmed. When it is not, call ``moveToFileAtPath()`` and
    ///   confirm again.
    func confirm(stampedAt stamp: UnsafeMutableRawPointer?) -> Bool {
        while true {
            let incarnation = self.incarnation
            let stamped = stamp.map { preferences_atomic_load_sequenced($0) }
            if stamped == incarnation && locksSinceNameCheck < Self.locksBetweenNameChecks {
                locksSinceNameCheck += 1
                return true
            }
            // With `flock`, `lock` has already checked the name.
            if usesMutex {
                guard hasName else { return false }
                locksSinceNameCheck = 0
            }
            guard let stamp, let stamped, stamped != incarnation else { return true }
            // Lost to another holder's stamp: check again, against what it wrote.
            if preferences_atomic_compare_exchange_sequenced(stamp, stamped, incarnation) {
                return true
            }
        }
    }

    /// Leaves the lock of a file that lost its name (see ``confirm(stampedAt:)``) for the lock of
    /// the file at the path, taken exclusively.
    ///
    /// It waits for the holders of the new file's lock, in any process: call it holding none of
    /// the engine's own locks.
    ///
    /// - Throws: A ``PreferencesError`` if the file at the path cannot be locked, opened or mapped.
    func moveToFileAtPath() throws(PreferencesError) {
        try leaveForFileAtPath()
        try lock(exclusive: true)
    }

    /// Lets go of the mutex of a file that lost its name, and switches to the file at the path.
    ///
    /// The page is abandoned before the mutex is let go: a store waiting for the mutex then finds
    /// the page not set up, and follows. Abandoned only afterwards, the store could take the mutex
    /// in between, confirm the page by a stamp it still finds in the log, and write beside this one
    /// once it holds the new file's lock.
    private func leaveForFileAtPath() throws(PreferencesError) {
        abandonPage()
        releaseMutex()
        try setUpUnderFileLock()
    }

    /// Whether a holder of the mutex died holding it since the last call; clears the mark.
    ///
    /// Call it holding the lock. The dead holder may have left a record half written after the
    /// log's last commit.
    func takeHolderDied() -> Bool {
        defer { holderDied = false }
        return holderDied
    }

    /// Maps the file the path names, and sets up its page and mutex if it has none, under an
    /// exclusive `flock`: processes that set up the page at the same moment take turns.
    ///
    /// A page can be set up with no mutex: by a process that locks the file instead, on an Apple
    /// platform or with a file system that shares no memory. Its mutex is set up then, and its
    /// commits kept.
    private func setUpUnderFileLock() throws(PreferencesError) {
        try lockFile(exclusive: true)
        defer { flock(descriptor, LOCK_UN) }
        let pageIsSetUp = preferences_atomic_load(word(.magic)) == Self.magic
        guard !pageIsSetUp || !preferences_mutex_is_set_up(word(.mutex)) else { return }
        let result = preferences_mutex_init(word(.mutex))
        guard result == 0 else {
            throw PreferencesError(
                .fileOperationFailed(path: path, operation: "set up the lock in", errorNumber: result))
        }
        if !pageIsSetUp {
            startPage()
        }
    }

    /// Fills in a page set up anew, the magic last, and wakes whoever slept on the page it replaces.
    ///
    /// A watcher asleep when another program shortened the file is counted in none of this page's
    /// words, so no writer would wake it: woken now, it sees a new count and sleeps again, counted.
    private func startPage() {
        preferences_atomic_store(word(.incarnation), UInt64.random(in: 1...UInt64.max))
        preferences_atomic_store(word(.check), 0)
        preferences_atomic_store(word(.commitCount), UInt64.random(in: 1...UInt64.max))
        preferences_atomic_store(word(.magic), Self.magic)
        preferences_wake_all(word(.commitCount))
    }

    /// Takes `flock` on the file the path names now; afterwards its page is mapped and, with the
    /// exclusive lock, set up (the mutex's page is set up by ``setUpUnderFileLock()``).
    private func lockFile(exclusive: Bool) throws(PreferencesError) {
        while true {
            while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) == -1 {
                guard errno == EINTR else {
                    throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: errno))
                }
            }
            guard hasName else {
                // Deleted or replaced: a lock on this file no longer keeps out a writer that opened
                // the one at the path. Lock that one instead.
                flock(descriptor, LOCK_UN)
                try reopen()
                continue
            }
            do throws(PreferencesError) {
                try restorePage(exclusive: exclusive && !usesMutex)
            } catch {
                flock(descriptor, LOCK_UN)
                throw error
            }
            return
        }
    }

    func unlock() {
        if usesMutex {
            releaseMutex()
        } else {
            flock(descriptor, LOCK_UN)
        }
    }

    /// Unlocks the mutex this thread locked, even when another program shortened the file meanwhile.
    ///
    /// The page was then replaced, and the unlock went to zeros or to the file's new page: the mutex
    /// it locked may still be held, should its page come back (one thread's fault can put zeros in
    /// after another thread has mapped the file again), and is still on the thread's list of robust
    /// mutexes. The page is mapped again, and the mutex unlocked there if it is, or else unlisted.
    private func releaseMutex() {
        guard preferences_mutex_unlock(word(.mutex)) == PREFERENCES_MUTEX_LOST else { return }
        // Whether or not the page is marked lost: the guard's handler marks it just after putting
        // zeros in too, and another thread may have taken the mark it made just before.
        try? mapAgainIfNeeded(always: true)
        preferences_mutex_abandon(word(.mutex), successor)
    }

    /// Whether the locked file still has a name: none once it was deleted, or replaced by a file
    /// renamed over it.
    ///
    /// `fstat` of the open file rather than `stat` of the path: it costs a third as much on every
    /// lock. What it cannot see, the file renamed away and another put in its place, no program of
    /// ours does.
    private var hasName: Bool {
        var status = stat()
        return fstat(descriptor, &status) != 0 || status.st_nlink > 0
    }

    /// Whether ``waitForCommit(after:)`` can sleep on this platform; where it cannot, poll.
    static var canWait: Bool { preferences_can_wait() }

    /// Sleeps until the commit count differs from `count`, or ``wakeWaiters()``; may return early.
    ///
    /// It sleeps on the count's low 32 bits (the first four bytes of the little-endian word). The
    /// waiters' count and the commit count are each changed before the other is read, on both sides,
    /// so either the sleeper sees the new count or the writer sees the sleeper and wakes it.
    ///
    /// A page set up anew while this slept (another program shortened the file) never counted this
    /// sleeper, so it is not counted down there: counted down, the next sleeper would go uncounted,
    /// and no writer would wake it.
    func waitForCommit(after count: UInt64) {
        // On a page lost to the file being shortened, it would sleep where no writer can wake it.
        mapAgainIfLost()
        // Read before counting itself: were the page set up anew in between, this sleeper is
        // counted there and never counted down, which costs writers a needless wake, never a lost one.
        let incarnation = preferences_atomic_load_sequenced(word(.incarnation))
        preferences_atomic_increment_sequenced(ownSleepers)
        preferences_atomic_increment_sequenced(word(.waiters))
        if preferences_atomic_load_sequenced(word(.commitCount)) == count {
            preferences_wait(word(.commitCount), UInt32(truncatingIfNeeded: count))
        }
        if preferences_atomic_load_sequenced(word(.incarnation)) == incarnation {
            preferences_atomic_decrement_sequenced(word(.waiters))
        }
        preferences_atomic_decrement_sequenced(ownSleepers)
    }

    /// Wakes every thread sleeping in ``waitForCommit(after:)``, in every process.
    func wakeWaiters() {
        preferences_wake_all(word(.commitCount))
    }

    /// Maps the file again, without the lock, if the page was lost to another program shortening it.
    ///
    /// Serialised with a writer switching files by `remapping`; setting up the page is left to the
    /// next writer. Never inlined: it is the rare path of ``commitCount``, which every read takes.
    @inline(never)
    func mapAgainIfLost() {
        try? mapAgainIfNeeded()
    }

    /// Maps the file again if the page was lost, or `always`; should that fail, the page stays
    /// marked lost.
    private func mapAgainIfNeeded(always: Bool = false) throws(PreferencesError) {
        try remapping.withLock { (_: inout Void) throws(PreferencesError) in
            guard preferences_guard_take_lost(guardSlot) || always else { return }
            do throws(PreferencesError) {
                try map(descriptor)
            } catch {
                preferences_guard_mark_lost(guardSlot)
                throw error
            }
        }
    }

    /// Maps the file again after the page was lost while this process held the lock, and sets it up.
    private func restoreAfterLoss() throws(PreferencesError) {
        if usesMutex {
            try setUpUnderFileLock()
        } else {
            try restorePage(exclusive: true)
        }
    }

    /// Maps the file again if the page was lost, and sets it up if it holds no page yet.
    private func restorePage(exclusive: Bool) throws(PreferencesError) {
        try mapAgainIfNeeded()
        if exclusive && preferences_atomic_load(word(.magic)) != Self.magic {
            startPage()
        }
    }

    /// Switches to the file now at the path, mapped in place of the old one, whose page it abandons.
    private func reopen() throws(PreferencesError) {
        abandonPage()
        let newDescriptor = try Self.openFile(at: path, fileSystem: fileSystem, ownedLike: templates)
        try remapping.withLock { (_: inout Void) throws(PreferencesError) in
            do throws(PreferencesError) {
                try map(newDescriptor)
            } catch {
                close(newDescriptor)
                throw error
            }
            close(descriptor)
            descriptor = newDescriptor
            _ = preferences_guard_take_lost(guardSlot)
        }
    }

    /// Marks the page of a file that lost its name as not set up, for the stores still on it.
    ///
    /// Its count moves on, so their next read looks, and finds the page not set up, so a catch-up
    /// under the lock moves them to the file at the path too; so does their next lock. Its sleepers
    /// are woken for the same reason.
    private func abandonPage() {
        preferences_atomic_store(word(.magic), 0)
        preferences_atomic_increment_sequenced(word(.commitCount))
        preferences_wake_all(word(.commitCount))
    }

    /// Maps the first page of `descriptor` at the page's address, lengthening the file if it was shortened.
    private func map(_ descriptor: Int32) throws(PreferencesError) {
        try Self.lengthenToAPage(descriptor, path: path, fileSystem: fileSystem)
        let mapped = mmap(page, Self.pageSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, descriptor, 0)
        guard mapped == page else {
            throw PreferencesError(.fileOperationFailed(path: path, operation: "map", errorNumber: errno))
        }
    }
}
