/// A value behind a lock: the store's shared state.
///
/// It is not recursive: nothing inside `withLock` takes the same lock again.
final class Locked<State>: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the lock: the state is only touched inside
    // `withLock`, while the lock is held, so no two threads ever reach it at once and no access to
    // it can overlap another. The state lives behind a pointer rather than in a `var`: a `var`
    // would cost every read the dynamic exclusivity check that the lock already makes redundant.
    private let mutex = PlatformMutex()
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
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&state.pointee)
    }
}
