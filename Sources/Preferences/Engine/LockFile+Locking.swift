import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

// The writers' lock, one of two leaves chosen once, when the file is opened (``LockFile/usesMutex``):
//
// - Linux: a robust, process-shared mutex in the page. It costs no system call when nobody else
//   holds it, and when a holder dies holding it the next one is told (``LockFile/takeHolderDied()``),
//   so that it cuts the record the dead writer may have left half made.
// - Elsewhere (Apple platforms, or `PREFERENCES_ENGINE=portable`): `flock` on the file, exclusive for
//   writers and shared for readers: two system calls per lock, and a lock the kernel drops when its
//   holder dies.
//
// Either way the lock is held for a commit, a compaction or a catch-up, and from the first read of an
// `update` or a transaction to its commit: never across a suspension point.
extension LockFile {
    /// Takes the lock, exclusive for writers and shared for readers (the mutex is always
    /// exclusive), on the file the path names now.
    ///
    /// Blocks while another holds it in a conflicting mode. Afterwards the page is set up.
    ///
    /// - Parameters:
    ///   - exclusive: Whether to lock for writing; the mutex is exclusive either way.
    ///   - confirmingName: Whether to check that the file still has a name (see
    ///     ``confirm(stampedAt:)``); `false` leaves it to `confirm` under the mutex. `flock`
    ///     always checks: it costs two system calls of its own.
    /// - Throws: A ``PreferencesError`` if the file cannot be locked, opened or mapped.
    func lock(exclusive: Bool, confirmingName: Bool = true) throws(PreferencesError) {
        isHeld = try acquire(exclusive: exclusive, confirmingName: confirmingName, waits: true)
    }

    /// Takes the lock as ``lock(exclusive:confirmingName:)`` does if nobody holds it in a
    /// conflicting mode, and otherwise returns at once.
    ///
    /// Setting up a page that is not yet set up takes an exclusive `flock` for that moment.
    ///
    /// - Returns: Whether the lock is held now.
    /// - Throws: A ``PreferencesError`` if the file cannot be locked, opened or mapped.
    func lockIfFree(exclusive: Bool) throws(PreferencesError) -> Bool {
        isHeld = try acquire(exclusive: exclusive, confirmingName: true, waits: false)
        return isHeld
    }

    private func acquire(exclusive: Bool, confirmingName: Bool, waits: Bool) throws(PreferencesError) -> Bool {
        guard usesMutex else { return try lockFile(exclusive: exclusive, waits: waits) }
        while true {
            // A page not set up holds no mutex yet: locking its zeros would be locking nothing.
            guard pageIsSetUp, mutexIsSetUp else {
                try setUpUnderFileLock()
                continue
            }
            let result = waits ? preferences_mutex_lock(word(.mutex)) : preferences_mutex_trylock(word(.mutex))
            if result == EBUSY && !waits {
                return false
            }
            guard result == 0 || result == EOWNERDEAD else {
                throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: result))
            }
            // A file that lost its name was abandoned by the writer that found so (``abandonPage()``),
            // and its mutex keeps out nobody who opened the one at the path.
            if !pageIsSetUp {
                releaseMutex()
                try setUpUnderFileLock()
                continue
            }
            if confirmingName && !hasName {
                try leaveForFileAtPath()
                continue
            }
            holderDied = holderDied || result == EOWNERDEAD
            return true
        }
    }

    /// Lets go of the writers' lock, if it is still held: a move to the file at the path that
    /// failed part way (see ``LockFile/moveToFileAtPath()``) has let go of it already.
    func unlock() {
        guard isHeld else { return }
        isHeld = false
        if usesMutex {
            releaseMutex()
        } else {
            unlockFile()
        }
    }

    /// Lets go of `flock`.
    ///
    /// Like the mutex's unlock, a failure here is a broken invariant.
    func unlockFile() {
        let result = flock(descriptor, LOCK_UN)
        precondition(result == 0, "unlocking the lock of '\(path)' failed with errno \(errno)")
    }

    /// Whether a holder of the mutex died holding it since the last call; clears the mark.
    ///
    /// Call it holding the lock. The dead holder may have left a record half written after the
    /// log's last commit.
    func takeHolderDied() -> Bool {
        defer { holderDied = false }
        return holderDied
    }

    /// Whether the page's mutex was set up (by `preferences_mutex_init`): a page set up by a process
    /// that locks the file instead has none.
    var mutexIsSetUp: Bool {
        preferences_atomic_load(word(.mutexSetUp)) == Self.mutexSetUpMark
    }

    /// Unlocks the mutex this thread holds.
    ///
    /// A failure here is a broken invariant (unlocking a mutex this thread does not hold), so it
    /// stops the process rather than leave the store locked.
    func releaseMutex() {
        let result = preferences_mutex_unlock(word(.mutex))
        precondition(result == 0, "unlocking the lock of '\(path)' failed with errno \(result)")
    }

    /// Maps the file the path names, and sets up its page and mutex if it has none, under an
    /// exclusive `flock`: processes that set up the page at the same moment take turns.
    ///
    /// A page can be set up with no mutex: by a process that locks the file instead. Its mutex is
    /// set up then, and its commits kept. A mutex already set up is never set up again.
    func setUpUnderFileLock() throws(PreferencesError) {
        try lockFile(exclusive: true)
        defer { unlockFile() }
        if !mutexIsSetUp {
            let result = preferences_mutex_init(word(.mutex))
            guard result == 0 else {
                throw PreferencesError(
                    .fileOperationFailed(path: path, operation: "set up the lock in", errorNumber: result))
            }
            preferences_atomic_store(word(.mutexSetUp), Self.mutexSetUpMark)
        }
        if !pageIsSetUp {
            startPage()
        }
    }

    /// Takes `flock` on the file the path names now; with the exclusive lock, the page is set up
    /// afterwards (the mutex's page is set up by ``setUpUnderFileLock()``).
    ///
    /// - Parameters:
    ///   - exclusive: Whether to lock for writing.
    ///   - waits: Whether to wait for a holder; if not, and the file is held, returns `false`.
    /// - Returns: Whether the lock is held now.
    /// - Throws: A ``PreferencesError`` if the file cannot be locked, opened or mapped.
    @discardableResult
    func lockFile(exclusive: Bool, waits: Bool = true) throws(PreferencesError) -> Bool {
        let operation = (exclusive ? LOCK_EX : LOCK_SH) | (waits ? 0 : LOCK_NB)
        while true {
            while flock(descriptor, operation) == -1 {
                if errno == EWOULDBLOCK && !waits {
                    return false
                }
                guard errno == EINTR else {
                    throw PreferencesError(.fileOperationFailed(path: path, operation: "lock", errorNumber: errno))
                }
            }
            guard hasName else {
                // Deleted or replaced: a lock on this file no longer keeps out a writer that opened
                // the one at the path. Lock that one instead.
                unlockFile()
                try reopen()
                continue
            }
            if exclusive && !usesMutex && !pageIsSetUp {
                startPage()
            }
            return true
        }
    }
}
