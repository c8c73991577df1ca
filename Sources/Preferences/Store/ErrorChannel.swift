/// Delivers a store's reported errors to every subscribed stream.
///
/// Errors reported while nobody is subscribed (a damaged file found while opening, before any code
/// could subscribe) are kept, up to ``backlogLimit``, and delivered to the next subscriber.
final class ErrorChannel: Sendable {
    static let backlogLimit = 100

    private struct State {
        var subscribers: [UInt64: AsyncStream<PreferencesError>.Continuation] = [:]
        var nextID: UInt64 = 0
        var backlog: [PreferencesError] = []
    }

    private let state = Locked(State())

    func report(_ error: PreferencesError) {
        let subscribers = state.withLock { state in
            if state.subscribers.isEmpty {
                state.backlog.append(error)
                if state.backlog.count > Self.backlogLimit {
                    state.backlog.removeFirst()
                }
            }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers {
            subscriber.yield(error)
        }
    }

    func report(_ errors: [PreferencesError]) {
        for error in errors {
            report(error)
        }
    }

    /// Removes and returns the errors reported while nobody was subscribed.
    func takeBacklog() -> [PreferencesError] {
        state.withLock { state in
            defer { state.backlog.removeAll() }
            return state.backlog
        }
    }

    func subscribe() -> AsyncStream<PreferencesError> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PreferencesError.self,
            bufferingPolicy: .bufferingNewest(Self.backlogLimit)
        )
        let (id, backlog) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            defer { state.backlog.removeAll() }
            return (id, state.backlog)
        }
        // Yielded after unlocking. An error reported in between may arrive before the backlog;
        // every error still arrives exactly once.
        for error in backlog {
            continuation.yield(error)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }
}
