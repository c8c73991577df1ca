/// A value behind a mutex: the store's shared state.
final class Locked<State>: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the lock: the state is only touched inside
    // `withLock`, while a non-recursive lock is held, so no two threads ever reach it at once and
    // no access to it can overlap another. It lives behind a pointer rather than in a `var`, which
    // spares every read the dynamic exclusivity check that the lock already makes redundant.
    private let lock = SystemLock()
    private let state: UnsafeMutablePointer<State>

    init(_ state: State) {
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
    }

    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.withLock { () throws(Failure) -> Result in try body(&state.pointee) }
    }
}
