#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a mutex: the store's shared state.
///
/// A `pthread_mutex_t` rather than `Mutex` from Synchronization, which would raise the Apple minimums
/// to macOS 15 and iOS 18. It can be recursive for the store's write lock, so that code a write
/// runs (a transaction's body) may itself write without deadlocking.
final class Locked<State>: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the mutex: `state` is only touched inside
    // `withLock`, between `pthread_mutex_lock` and `pthread_mutex_unlock` on a mutex that lives at a
    // fixed heap address for the object's lifetime.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ state: State, recursive: Bool = false) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        if recursive {
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        }
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
