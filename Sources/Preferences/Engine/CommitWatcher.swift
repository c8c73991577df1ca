import Dispatch
import Foundation

/// Tells a store, while something observes it, that another store or process committed, so that
/// observers hear of it without waiting for the store's next read or write.
///
/// Something observes while a stream or callback is registered, or while a key read through the
/// subscript may be tracked by the Observation framework (see ``StoreState/track(_:)``).
///
/// One thread watches, made the first time something observes and kept until the watcher is
/// released. While something observes it sleeps on the commit signal (``CommitSignal``: a futex on
/// Linux, a Darwin notification on Apple platforms), and the committing process wakes it: no wake-up
/// while nothing changes. While nothing observes it parks on a semaphore of its own, which no writer
/// wakes. Stopping only clears a flag, so that it costs nothing under the store's locks: the thread
/// goes on until it has caught up with a commit from elsewhere made after the stop, then parks.
final class CommitWatcher: Sendable {
    private let lockFile: LockFile

    private struct State {
        /// The store's catch-up: returns whether it took in commits made elsewhere.
        var onCommit: (@Sendable () -> Bool)?
        var observerCount = 0
        /// Whether the Observation framework may track a key of the store.
        var hasTrackedKeys = false
        var hasThread = false
        /// The watching thread, once it runs.
        var thread: ObjectIdentifier?
        /// Whether the thread sleeps on the commit signal, rather than parked or about to park.
        var isWatching = false
        /// Whether the thread waits on `park`, or is about to: only then does a change signal it.
        var isParked = false
        /// Whether the watch, no longer needed, still owes a catch-up that takes in a commit from
        /// elsewhere.
        ///
        /// Announced, that commit's change reaches a tracker installed after the read that ended the
        /// watch (see ``StoreState/track(_:)``). Owed even if the thread has not yet begun.
        var owesCatchUp = false
        var isClosed = false

        var isNeeded: Bool { observerCount > 0 || hasTrackedKeys }
        var watches: Bool { isNeeded || owesCatchUp }
    }

    private let state = Locked(State())
    /// Where the thread parks while nothing observes.
    private let park = DispatchSemaphore(value: 0)
    /// Signalled by the thread as it ends.
    private let ended = DispatchSemaphore(value: 0)

    init(lockFile: LockFile) {
        self.lockFile = lockFile
    }

    deinit {
        let (hasThread, thread, isWatching) = state.withLock { state in
            state.isClosed = true
            return (state.hasThread, state.thread, state.isWatching)
        }
        // Released by the thread itself, when the store's catch-up held the last reference to the
        // store: the thread ends as that returns, and must not wait for itself.
        guard hasThread, thread != ObjectIdentifier(Thread.current) else { return }
        park.signal()
        guard isWatching else {
            // Parked, or about to look at `isClosed`: nothing to wake in other processes.
            _ = ended.wait(timeout: .now() + .seconds(1))
            return
        }
        // A wake that lands between the thread's last look at `isClosed` and its sleep is lost, so
        // wake it until it ends; it ends within microseconds of the wake that reaches it.
        for _ in 0..<1_000 {
            lockFile.wakeWaiters()
            if ended.wait(timeout: .now() + .milliseconds(1)) == .success { return }
        }
    }

    /// Sets what a commit elsewhere makes happen: the store's catch-up, captured weakly, which
    /// returns whether it took in commits made elsewhere.
    func setHandler(_ onCommit: @escaping @Sendable () -> Bool) {
        let wakesThread = state.withLock { state in
            state.onCommit = onCommit
            defer { state.isParked = false }
            return state.isParked
        }
        if wakesThread {
            park.signal()
        }
    }

    /// Whether anything observes now.
    var isNeeded: Bool { state.withLock { $0.isNeeded } }

    /// Whether the thread sleeps on the commit signal now, rather than parked: for a test.
    var isWatching: Bool { state.withLock { $0.isWatching } }

    /// Watches from now on, until as many ``observerRemoved()`` calls.
    func observerAdded() {
        update { $0.observerCount += 1 }
    }

    func observerRemoved() {
        update { $0.observerCount -= 1 }
    }

    /// Watches while the Observation framework may track a key of the store.
    ///
    /// Called under the store's state lock, in the order the store's keys start and stop being
    /// tracked: it takes only this watcher's lock, but for the store's first tracked key, which
    /// makes the thread, and a start that finds it parked, which wakes it.
    func update(hasTrackedKeys: Bool) {
        update { $0.hasTrackedKeys = hasTrackedKeys }
    }

    /// Changes what needs watching; makes the thread, or wakes it from its park, when something does.
    private func update(_ change: (inout State) -> Void) {
        let (needsThread, wakesThread) = state.withLock { state in
            let wasNeeded = state.isNeeded
            change(&state)
            guard state.isNeeded else {
                if wasNeeded {
                    state.owesCatchUp = true
                }
                return (false, false)
            }
            state.owesCatchUp = false
            let needsThread = !state.hasThread
            let wakesThread = state.isParked
            state.hasThread = true
            state.isParked = false
            return (needsThread, wakesThread)
        }
        if needsThread {
            startThread()
        } else if wakesThread {
            park.signal()
        }
    }

    private func startThread() {
        let (lockFile, state, park, ended) = (lockFile, state, park, ended)
        let thread = Thread {
            Self.watch(lockFile, state, park)
            ended.signal()
        }
        thread.name = "Preferences commit watcher"
        thread.start()
    }

    /// The thread's loop: sleeps on the commit signal while something observes, parks while
    /// nothing does, and ends once the watcher is released.
    private static func watch(_ lockFile: LockFile, _ state: Locked<State>, _ park: DispatchSemaphore) {
        state.withLock { $0.thread = ObjectIdentifier(Thread.current) }
        var isWatching = false
        var seen: UInt64 = 0
        /// Begins or ends watching, and says so to the watcher's state.
        func setWatching(_ watching: Bool) {
            guard watching != isWatching else { return }
            if watching {
                lockFile.beginWatching()
            } else {
                lockFile.endWatching()
            }
            isWatching = watching
            state.withLock { $0.isWatching = watching }
        }
        while true {
            let (isClosed, watches, handler) = state.withLock { state in
                let parks = !state.isClosed && (state.onCommit == nil || !state.watches)
                state.isParked = parks
                return (state.isClosed, state.watches, state.onCommit)
            }
            guard !isClosed else { break }
            guard let onCommit = handler, watches else {
                setWatching(false)
                park.wait()
                continue
            }
            guard isWatching else {
                // Ready to be woken before the count is read; then a catch-up takes in what was
                // committed before, which woke nobody.
                setWatching(true)
                seen = lockFile.commitCount
                _ = onCommit()
                continue
            }
            lockFile.waitForCommit(after: seen)
            let count = lockFile.commitCount
            guard count != seen else { continue }
            seen = count
            let isStillNeeded = state.withLock { $0.isNeeded }
            let caughtUp = onCommit()
            // The watch stopped before this catch-up, and it took in a commit from elsewhere (this
            // store's own wake it too, when other processes sleep): the catch-up it owed. The next
            // turn parks, unless something needs the watch again meanwhile.
            if !isStillNeeded && caughtUp {
                state.withLock { state in
                    if !state.isNeeded {
                        state.owesCatchUp = false
                    }
                }
            }
        }
        setWatching(false)
    }
}
