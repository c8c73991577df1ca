/// The store's write lock: recursive, and running a closure each time its outermost holder lets go.
///
/// Writers go one at a time, and a transaction's body may write. What the closure does, delivering
/// changes to observers, must happen with no lock held, and only once a whole transaction is done.
final class WriteLock: @unchecked Sendable {
    // `@unchecked` because of `depth`, which is only read and written while `lock` is held.
    private let lock = RecursiveLock()
    private var depth = 0
    private let afterRelease: @Sendable () -> Void

    init(afterRelease: @escaping @Sendable () -> Void) {
        self.afterRelease = afterRelease
    }

    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        var isOutermost = false
        // Registered first, so it runs last: after the lock below has been released.
        defer {
            if isOutermost {
                afterRelease()
            }
        }
        return try lock.withLock { () throws(Failure) -> Result in
            depth += 1
            isOutermost = depth == 1
            defer { depth -= 1 }
            return try body()
        }
    }
}
