#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A recursive `pthread_mutex_t`, for the store's write lock.
///
/// Recursive so that code a write runs (a transaction's body) may itself write without
/// deadlocking. It guards no state of its own, only an order.
///
/// `Mutex` from Synchronization is not recursive, and would raise the Apple minimums to macOS 15
/// and iOS 18. The state itself sits behind ``Locked``'s cheaper lock.
final class RecursiveLock: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see that a mutex is safe to share: this one lives at
    // a fixed heap address from `init` to `deinit`, as pthreads requires, and holds no Swift state.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
