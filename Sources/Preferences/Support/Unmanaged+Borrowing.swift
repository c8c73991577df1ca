extension Unmanaged {
    /// Runs `body` on the referenced object, which the caller guarantees to be alive throughout,
    /// without retaining it: `_withUnsafeGuaranteedRef`, for a body that throws a typed error
    /// (that one only rethrows `any Error`).
    @inline(__always)
    func withBorrowedReference<Result, Failure: Error>(
        _ body: (Instance) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let outcome = _withUnsafeGuaranteedRef { instance in
            Swift.Result { () throws(Failure) -> Result in try body(instance) }
        }
        return try outcome.get()
    }
}
