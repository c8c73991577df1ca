/// A value behind a mutex: the store's shared state.
final class Locked<State>: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the lock: `state` is only touched inside
    // `withLock`, while a non-recursive lock is held, so no two threads ever reach it at once and
    // no access to it can overlap another.
    private let lock = SystemLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&state) }
    }
}
