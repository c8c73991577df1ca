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
/// Linux, a Darwin notification on Apple platforms), and the committing process wakes it: no timer,
/// no wake-up while nothing changes. While nothing observes it parks on a semaphore of its own, which
/// no writer wakes. Stopping only clears a flag, so that it costs nothing under the store's locks:
/// the thread parks at the next commit it wakes for, and until then a writer elsewhere may wake it
/// once for nothing.
final class CommitWatcher: Sendable {
    private let lockFile: LockFile

    private struct State {
        var onCommit: (@Sendable () -> Void)?
        var observerCount = 0
        /// Whether the Observation framework may track a key of the store.
        var hasTrackedKeys = false
        var hasThread = false
        /// The watching thread, once it runs.
        var thread: ObjectIdentifier?
        /// Whether the thread sleeps on the commit signal now, rather than parked.
        var isWatching = false
        var isClosed = false

        var isNeeded: Bool { observerCount > 0 || hasTrackedKeys }
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
        let (hasThread, thread) = state.withLock { state in
            state.isClosed = true
            return (state.hasThread, state.thread)
        }
        // Released by the thread itself, when the store's catch-up held the last reference to the
        // store: the thread ends as that returns, and must not wait for itself.
        guard hasThread, thread != ObjectIdentifier(Thread.current) else { return }
        park.signal()
        // A wake that lands between the thread's last look at `isClosed` and its sleep is lost, so
        // wake it until it ends; it ends within microseconds of the wake that reaches it.
        for _ in 0..<1_000 {
            lockFile.wakeWaiters()
            if ended.wait(timeout: .now() + .milliseconds(1)) == .success { return }
        }
    }

    /// Sets what a commit elsewhere makes happen: the store's catch-up, captured weakly.
    func setHandler(_ onCommit: @escaping @Sendable () -> Void) {
        state.withLock { $0.onCommit = onCommit }
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
    /// tracked. Only the first start of all makes the thread.
    func update(hasTrackedKeys: Bool) {
        update { $0.hasTrackedKeys = hasTrackedKeys }
    }

    /// Changes what needs watching, and wakes the parked thread, or makes it, when something does.
    private func update(_ change: (inout State) -> Void) {
        let (isNeeded, needsThread) = state.withLock { state in
            change(&state)
            let needsThread = state.isNeeded && !state.hasThread
            if needsThread {
                state.hasThread = true
            }
            return (state.isNeeded, needsThread)
        }
        guard isNeeded else { return }
        if needsThread {
            startThread()
        } else {
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
        while true {
            let (isClosed, onCommit) = state.withLock { state in
                state.isWatching = !state.isClosed && state.isNeeded
                return (state.isClosed, state.isNeeded ? state.onCommit : nil)
            }
            guard !isClosed else { break }
            guard let onCommit else {
                if isWatching {
                    lockFile.endWatching()
                    isWatching = false
                }
                park.wait()
                continue
            }
            guard isWatching else {
                // Ready to be woken before the count is read; then a catch-up takes in what was
                // committed before, which woke nobody.
                lockFile.beginWatching()
                isWatching = true
                seen = lockFile.commitCount
                onCommit()
                continue
            }
            lockFile.waitForCommit(after: seen)
            let count = lockFile.commitCount
            if count != seen {
                seen = count
                onCommit()
            }
        }
        if isWatching {
            lockFile.endWatching()
        }
    }
}
