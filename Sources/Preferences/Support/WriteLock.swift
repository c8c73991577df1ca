import CPreferencesAtomics

/// The store's write lock: recursive, and running a closure once its outermost holder lets go.
///
/// Writers go one at a time, and a transaction's body may write. What the closure does, delivering
/// changes to observers, must happen with no lock held, and only once a whole transaction is done.
///
/// It is a lock of one word (`preferences_lock`, as ``Locked``'s), with the thread that holds it
/// and how many times over beside it: taking it free costs an atomic operation and naming the
/// thread, taking it again a comparison, where a recursive `pthread_mutex_t` would cost every
/// write more.
final class WriteLock: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see the lock. The lock word and the holder are only
    // reached through atomic operations; the depth only by the thread that holds the lock. All three
    // sit behind one pointer rather than in `var`s: the lock needs a fixed address, and a `var`
    // would cost every access a dynamic exclusivity check.
    private let words: UnsafeMutableRawPointer
    private static let lockOffset = 0
    private static let holderOffset = 8
    private static let depthOffset = 16

    init() {
        words = .allocate(byteCount: 24, alignment: 8)
        words.initializeMemory(as: UInt64.self, repeating: 0, count: 3)
    }

    deinit {
        words.deallocate()
    }

    private var depth: Int {
        get { words.load(fromByteOffset: Self.depthOffset, as: Int.self) }
        set { words.storeBytes(of: newValue, toByteOffset: Self.depthOffset, as: Int.self) }
    }

    /// Whether the calling thread holds the lock once, not inside another hold of its own.
    ///
    /// What it does then is not part of a larger whole, such as a transaction. Call it holding the
    /// lock.
    var isHeldOnce: Bool {
        depth == 1
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
        let thread = UInt64(preferences_thread_identity())
        let holder = words + Self.holderOffset
        // Only this thread can have stored its own name there: another thread's store, or a stale
        // one, never equals it.
        let isOutermost = preferences_atomic_load(holder) != thread
        // Registered first, so it runs last: after the lock below has been released.
        defer {
            if isOutermost {
                afterRelease()
            }
        }
        if isOutermost {
            preferences_lock(words + Self.lockOffset)
            preferences_atomic_store(holder, thread)
        }
        depth += 1
        defer {
            depth -= 1
            if isOutermost {
                preferences_atomic_store(holder, 0)
                preferences_unlock(words + Self.lockOffset)
            }
        }
        return try body()
    }
}
