/// The store's write lock: recursive, and running a closure once its outermost holder lets go.
///
/// Writers go one at a time, and a transaction's body may write. What the closure does, delivering
/// changes to observers, must happen with no lock held, and only once a whole transaction is done.
final class WriteLock: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the lock: the depth is only read and written by
    // the thread that holds it. It lives behind a pointer rather than in a `var`, which would cost
    // every access a dynamic exclusivity check.
    private let mutex = PlatformMutex(recursive: true)
    private let depth: UnsafeMutablePointer<Int>

    init() {
        depth = .allocate(capacity: 1)
        depth.initialize(to: 0)
    }

    deinit {
        depth.deallocate()
    }

    /// Whether the calling thread holds the lock once, not inside another hold of its own.
    ///
    /// What it does then is not part of a larger whole, such as a transaction. Call it holding the
    /// lock.
    var isHeldOnce: Bool {
        depth.pointee == 1
    }

    /// Runs `body` with the lock held, then, if this was the outermost hold, `afterRelease` once
    /// the lock is released.
    ///
    /// `afterRelease` is passed with each call rather than kept: kept, it could not reach the store
    /// without a weak reference, which makes every retain of the store take the runtime's slow path.
    func withLock<Result, Failure: Error>(
        _ body: () throws(Failure) -> Result,
        afterRelease: () -> Void
    ) throws(Failure) -> Result {
        mutex.lock()
        depth.pointee += 1
        let isOutermost = depth.pointee == 1
        // Registered first, so it runs last: after the lock below has been released.
        defer {
            if isOutermost {
                afterRelease()
            }
        }
        defer {
            depth.pointee -= 1
            mutex.unlock()
        }
        return try body()
    }
}
