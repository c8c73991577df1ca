import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// Every writer must lock the same file: a lock file deleted or replaced while stores have it open
// keeps out nobody who opens the one at the path. A lock makes sure that the open file still has a
// name, and moves to the one at the path if not. A writer with the log mapped asks the log's lock
// stamp rather than the kernel (``LockFile/confirm(stampedAt:)``), so a write that nobody else
// contends makes no system call, but for one `fstat` every 32nd lock. (Not a check on a timer: a
// writer that missed a replacement for a few milliseconds would commit where another process's
// readers never look. The stamp cannot be missed that way: a process that makes a new lock file
// stamps the log as it opens the store.)
extension LockFile {
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
    /// commit beside one of its own.
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
    /// - Throws: A ``PreferencesError`` if the file at the path cannot be locked, opened or mapped;
    ///   no lock is held then (see ``isHeld``).
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
    func leaveForFileAtPath() throws(PreferencesError) {
        abandonPage()
        releaseMutex()
        isHeld = false
        try setUpUnderFileLock()
    }

    /// Whether the locked file still has a name: none once it was deleted, or replaced by a file
    /// renamed over it.
    ///
    /// `fstat` of the open file rather than `stat` of the path: it runs on every lock, and looks
    /// up no path. What it cannot see, the file renamed away and another put in its place, no
    /// program of ours does.
    var hasName: Bool {
        var status = stat()
        return fstat(descriptor, &status) != 0 || status.st_nlink > 0
    }

    /// Switches to the file now at the path, mapped in place of the old one, whose page it abandons.
    func reopen() throws(PreferencesError) {
        abandonPage()
        let newDescriptor = try Self.openFile(at: path, fileSystem: fileSystem, ownedLike: templates)
        do throws(PreferencesError) {
            try map(newDescriptor)
        } catch {
            close(newDescriptor)
            throw error
        }
        close(descriptor)
        descriptor = newDescriptor
        try claimPresence()
    }

    /// Marks the page of a file that lost its name as not set up, for the stores still on it.
    ///
    /// Its count moves on, so their next read looks, and finds the page not set up, so a catch-up
    /// under the lock moves them to the file at the path too; so does their next lock. Its sleepers
    /// are woken for the same reason.
    func abandonPage() {
        preferences_atomic_store(word(.magic), 0)
        preferences_atomic_increment_sequenced(word(.commitCount))
        commitSignal.wakeAll(on: word(.commitCount))
    }
}
