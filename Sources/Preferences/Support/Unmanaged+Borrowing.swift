extension Unmanaged {
    /// Runs `body` on the referenced object, which the caller guarantees to be alive throughout.
    ///
    /// Through the public `takeUnretainedValue()`, which the optimiser turns into a borrow where it
    /// can prove the caller's guarantee, and into a retain and a release where it cannot.
    @inline(__always)
    func withBorrowedReference<Result, Failure: Error>(
        _ body: (Instance) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(takeUnretainedValue())
    }
}
