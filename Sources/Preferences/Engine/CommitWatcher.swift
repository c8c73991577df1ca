import Dispatch
import Foundation

/// Tells a store, while something observes it, that another store or process committed, so that
/// observers hear of it without waiting for the store's next read or write.
///
/// It runs while a stream or callback observes, or while the Observation framework may track a key
/// (see ``StoreState/track(_:)``), and stops when neither does.
///
/// On Linux a thread sleeps on the commit count in the shared lock page (a futex), and the
/// committing process wakes it: no timer, no wake-up while nothing changes, and a write pays for the
/// wake-up only while someone sleeps. Where the system cannot sleep on a shared word, a timer
/// compares the count every 50 ms instead.
final class CommitWatcher: Sendable {
    static let pollingInterval = DispatchTimeInterval.milliseconds(50)

    private let lockFile: LockFile

    private struct State {
        var onCommit: (@Sendable () -> Void)?
        /// The sleeping thread's stop flag, while one runs.
        var sleeper: Locked<Bool>?
        var timer: (any DispatchSourceTimer)?
        /// Whether a stream or callback observes the store.
        var hasObservers = false
        /// Whether the Observation framework may track a key of the store (see
        /// ``StoreState/track(_:)``).
        var hasTrackedKeys = false

        var isNeeded: Bool { hasObservers || hasTrackedKeys }
        var isRunning: Bool { sleeper != nil || timer != nil }
    }

    private let state = Locked(State())

    init(lockFile: LockFile) {
        self.lockFile = lockFile
    }

    deinit {
        update { state in
            state.hasObservers = false
            state.hasTrackedKeys = false
        }
    }

    /// Sets what a commit elsewhere makes happen: the store's catch-up, captured weakly.
    func setHandler(_ onCommit: @escaping @Sendable () -> Void) {
        state.withLock { $0.onCommit = onCommit }
    }

    /// Whether it watches now: for a test.
    var isRunning: Bool { state.withLock { $0.isRunning } }

    /// Watches while a stream or callback observes the store.
    func update(hasObservers: Bool) {
        update { $0.hasObservers = hasObservers }
    }

    /// Watches while the Observation framework may track a key of the store.
    func update(hasTrackedKeys: Bool) {
        update { $0.hasTrackedKeys = hasTrackedKeys }
    }

    /// Changes why it watches, then starts or stops to match.
    private func update(_ change: (inout State) -> Void) {
        let stopped = state.withLock { state -> Bool in
            change(&state)
            if state.isNeeded, !state.isRunning, let onCommit = state.onCommit {
                if LockFile.canWait {
                    state.sleeper = startSleeper(onCommit)
                } else {
                    state.timer = startTimer(onCommit)
                }
            } else if !state.isNeeded, state.isRunning {
                state.timer?.cancel()
                state.timer = nil
                state.sleeper?.withLock { $0 = true }
                state.sleeper = nil
                return true
            }
            return false
        }
        if stopped {
            // Sleepers in other processes wake too, find the count unchanged, and sleep again.
            lockFile.wakeWaiters()
        }
    }

    private func startSleeper(_ onCommit: @escaping @Sendable () -> Void) -> Locked<Bool> {
        let isStopped = Locked(false)
        let lockFile = lockFile
        let thread = Thread {
            var seen = lockFile.commitCount
            // A commit made after the store last caught up but before this thread read the count
            // wakes nobody: catch up with it now.
            onCommit()
            while !isStopped.withLock({ $0 }) {
                lockFile.waitForCommit(after: seen)
                let count = lockFile.commitCount
                if count != seen, !isStopped.withLock({ $0 }) {
                    seen = count
                    onCommit()
                }
            }
        }
        thread.name = "Preferences commit watcher"
        thread.start()
        return isStopped
    }

    private func startTimer(_ onCommit: @escaping @Sendable () -> Void) -> any DispatchSourceTimer {
        let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        source.schedule(
            deadline: .now() + Self.pollingInterval, repeating: Self.pollingInterval, leeway: .milliseconds(10))
        source.setEventHandler(handler: onCommit)
        source.resume()
        return source
    }
}
