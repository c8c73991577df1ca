import Dispatch

// Bringing memory up to date with commits made elsewhere: by another store on the same files, in
// this process or another.
//
// A read must never wait for another process, nor run an observer's code. So a read catches up
// without the file lock or the store's write lock, reading only what the lock page says was
// committed, and applies what it found to memory while the backend still holds its own short lock,
// so that a commit of this process cannot slip in between and be overwritten. It hands the changes
// to a background thread to deliver. Whatever it cannot do that way (a compaction it saw half-way,
// damage to report) a background catch-up does under the locks.

extension PreferencesStore {
    /// Catches up before a read, without waiting for another process or for this store's writers.
    ///
    /// It may wait for the backend's own short lock, which a commit of this process holds while it
    /// writes (and, rarely, compacts).
    ///
    /// A value another process wrote is seen by the next read after that write returned, unless the
    /// files cannot be read without the lock just then (a compaction half done, damage); a
    /// background catch-up then follows at once.
    func catchUpForRead() {
        let commitCount = backend.commitCount
        guard state.withLock({ $0.seenCommitCount != commitCount }) else { return }
        if !backend.catchUpWithoutWaiting({ absorb($0) }) {
            catchUpInBackground()
        }
        if changeHub.hasPending {
            // The store is kept until its changes are delivered: a moment.
            DispatchQueue.global(qos: .userInitiated).async { self.changeHub.deliverPending(announcingThrough: self) }
        }
    }

    /// Catches up, under the lock, on a background thread; once, however many reads ask.
    private func catchUpInBackground() {
        let isNew = state.withLock { state in
            defer { state.isCatchingUpInBackground = true }
            return !state.isCatchingUpInBackground
        }
        guard isNew else { return }
        DispatchQueue.global(qos: .userInitiated).async { [weak self] in
            guard let self else { return }
            state.withLock { $0.isCatchingUpInBackground = false }
            catchUpIfNeeded()
        }
    }

    /// Catches up, under the lock, if the backend's commit count shows a commit memory has not
    /// seen: for writers, observers being added, and the commit watcher's thread, which may wait.
    ///
    /// - Returns: Whether it took in commits made elsewhere.
    @discardableResult
    func catchUpIfNeeded() -> Bool {
        let commitCount = backend.commitCount
        guard state.withLock({ $0.seenCommitCount != commitCount }) else { return false }
        return catchUp()
    }

    /// Applies the commits made elsewhere, under the lock.
    ///
    /// A failure is reported, and memory marked current as of the count read before the attempt,
    /// so that the next reads do not retry it; the next commit catches up under the exclusive lock.
    /// A commit that lands while the attempt fails still changes the count, and the next read
    /// catches up with it: the count read after the failure would have marked it seen unapplied.
    ///
    /// - Returns: Whether it took in commits made elsewhere.
    @discardableResult
    func catchUp() -> Bool {
        let commitCount = backend.commitCount
        var tookIn = false
        do {
            try withWriteLock { () throws(PreferencesError) in
                try backend.catchUp { update in
                    tookIn = tookIn || !update.records.isEmpty
                    absorb(update)
                }
            }
        } catch {
            state.withLock { $0.seenCommitCount = commitCount }
            errorChannel.report(error)
        }
        return tookIn
    }
}
