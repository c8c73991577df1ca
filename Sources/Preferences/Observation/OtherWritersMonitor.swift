import Dispatch

/// Looks for commits made by other processes while anyone observes the store, so that observers
/// hear of them without waiting for the store's next read or write.
///
/// Every 50 ms it compares the commit count that processes share through the store's lock file
/// with the one the store last saw: one atomic load. Only a changed count makes the store catch up
/// and deliver. It runs only while observers are registered. A file watcher could not do better:
/// the count lives in a mapped page, and changes to mapped memory raise no file events.
final class OtherWritersMonitor: Sendable {
    static let interval = DispatchTimeInterval.milliseconds(50)

    private struct State {
        var check: (@Sendable () -> Void)?
        var timer: (any DispatchSourceTimer)?
    }

    private let state = Locked(State())

    deinit {
        state.withLock { $0.timer?.cancel() }
    }

    /// Sets what each tick does: the store's catch-up, captured weakly by the store once it exists.
    func setCheck(_ check: @escaping @Sendable () -> Void) {
        state.withLock { $0.check = check }
    }

    func update(isNeeded: Bool) {
        state.withLock { state in
            if isNeeded, state.timer == nil, let check = state.check {
                let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
                source.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(10))
                source.setEventHandler(handler: check)
                source.resume()
                state.timer = source
            } else if !isNeeded, let running = state.timer {
                running.cancel()
                state.timer = nil
            }
        }
    }
}
