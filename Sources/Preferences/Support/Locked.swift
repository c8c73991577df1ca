import CPreferencesAtomics

/// A value behind a lock: the store's shared state.
///
/// The lock is one word (`preferences_lock` in `CPreferencesAtomics`): free, it costs an atomic
/// operation to take and one to release, less than a `pthread_mutex_t`: every read takes it, and
/// a write many times. It is not recursive: nothing inside `withLock` takes the same lock again.
final class Locked<State>: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the lock: the state is only touched inside
    // `withLock`, while the lock is held, so no two threads ever reach it at once and no access to
    // it can overlap another. Both live behind pointers rather than in `var`s: the lock needs a
    // fixed address, and a `var` would cost every read the dynamic exclusivity check that the lock
    // already makes redundant.
    private let lock: UnsafeMutablePointer<UInt32>
    private let state: UnsafeMutablePointer<State>

    init(_ state: State) {
        lock = .allocate(capacity: 1)
        lock.initialize(to: 0)
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        lock.deallocate()
    }

    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        preferences_lock(lock)
        defer { preferences_unlock(lock) }
        return try body(&state.pointee)
    }
}
