import CPreferencesAtomics

// Waking other processes' observers through the commit signal (``CommitSignal``, a futex on Linux,
// a Darwin notification on Apple platforms), by a writer only while the page counts a sleeper (see
// ``LockFile/publish(_:)``); where there is no signal, a sleep lasts 50 ms (see ``CommitSignal``).
extension LockFile {
    /// Whether ``waitForCommit(after:)`` sleeps until woken on this platform; where it cannot, it
    /// returns after 50 ms.
    static var canWait: Bool { CommitSignal.canWait }

    /// Makes ready to sleep in ``waitForCommit(after:)``: call it before reading the count to wait
    /// on, so that a commit in between wakes the sleep.
    func beginWatching() {
        commitSignal.beginSleeping()
    }

    /// Ends what ``beginWatching()`` began, once no thread sleeps in ``waitForCommit(after:)``.
    func endWatching() {
        commitSignal.endSleeping()
    }

    /// Sleeps until the commit count differs from `count`, or ``wakeWaiters()``; may return early.
    ///
    /// Call it between ``beginWatching()`` and ``endWatching()``.
    ///
    /// The waiters' count and the commit count are each changed before the other is read, on both
    /// sides, so either the sleeper sees the new count or the writer sees the sleeper and wakes it.
    /// (On Linux it sleeps on the count's low 32 bits, the first four bytes of the little-endian word.)
    ///
    /// A page set up anew while this slept (the lock file was replaced) never counted this sleeper,
    /// so it is not counted down there: counted down, the next sleeper would go uncounted, and no
    /// writer would wake it.
    func waitForCommit(after count: UInt64) {
        // Read before counting itself: were the page set up anew in between, this sleeper is
        // counted there and never counted down, which costs writers a needless wake, never a lost one.
        let incarnation = preferences_atomic_load_sequenced(word(.incarnation))
        preferences_atomic_increment_sequenced(ownSleepers)
        preferences_atomic_increment_sequenced(word(.waiters))
        if preferences_atomic_load_sequenced(word(.commitCount)) == count {
            commitSignal.sleep(on: word(.commitCount), expecting: UInt32(truncatingIfNeeded: count))
        }
        if preferences_atomic_load_sequenced(word(.incarnation)) == incarnation {
            preferences_atomic_decrement_sequenced(word(.waiters))
        }
        preferences_atomic_decrement_sequenced(ownSleepers)
    }

    /// Wakes every thread sleeping in ``waitForCommit(after:)``, in every process.
    func wakeWaiters() {
        commitSignal.wakeAll(on: word(.commitCount))
    }
}
