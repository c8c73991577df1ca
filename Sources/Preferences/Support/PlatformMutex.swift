#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `pthread_mutex_t` at a fixed address, for the locks inside one process.
///
/// The platform's mutex rather than `Mutex` from the Synchronization module, which needs macOS 15 /
/// iOS 18, and rather than `os_unfair_lock`, so that the lock Apple platforms run is the one the
/// tests run here. Every operation's result is checked: a failure means the mutex was misused
/// (unlocked by a thread that does not hold it, say), a programmer's mistake. A default mutex
/// reports few misuses, so debug builds use an error-checking one.
struct PlatformMutex: ~Copyable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A mutex; a recursive one lets the thread that holds it take it again.
    init(recursive: Bool = false) {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        Self.check(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        defer { pthread_mutexattr_destroy(&attributes) }
        if recursive {
            Self.check(
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE)), "pthread_mutexattr_settype")
        } else {
            #if DEBUG
                Self.check(
                    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype"
                )
            #endif
        }
        Self.check(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    func lock() {
        Self.check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
    }

    @inline(__always)
    func unlock() {
        Self.check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock")
    }

    @inline(__always)
    private static func check(_ result: Int32, _ function: StaticString) {
        precondition(result == 0, "\(function) failed with error \(result)")
    }
}
