import Dispatch
import Foundation

/// Tells a store, while it has observers, that another store or process committed, so that they
/// hear of it without waiting for the store's next read or write.
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
        /// Set once the Observation framework tracks a key of the store: from then on the watch
        /// never stops, since nothing says when tracking ends.
        var isAlwaysNeeded = false
    }

    private let state = Locked(State())

    init(lockFile: LockFile) {
        self.lockFile = lockFile
    }

    deinit {
        state.withLock { $0.isAlwaysNeeded = false }
        update(isNeeded: false)
    }

    /// Sets what a commit elsewhere makes happen: the store's catch-up, captured weakly.
    func setHandler(_ onCommit: @escaping @Sendable () -> Void) {
        state.withLock { $0.onCommit = onCommit }
    }

    /// Watches from now on, whoever observes: for keys the Observation framework tracks.
    func watchAlways() {
        state.withLock { $0.isAlwaysNeeded = true }
        update(isNeeded: true)
    }

    /// Starts watching when someone observes, and stops when nobody does.
    func update(isNeeded: Bool) {
        let stopped = state.withLock { state -> Bool in
            let isNeeded = isNeeded || state.isAlwaysNeeded
            let isRunning = state.sleeper != nil || state.timer != nil
            if isNeeded, !isRunning, let onCommit = state.onCommit {
                if LockFile.canWait {
                    state.sleeper = startSleeper(onCommit)
                } else {
                    state.timer = startTimer(onCommit)
                }
            } else if !isNeeded, isRunning {
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
