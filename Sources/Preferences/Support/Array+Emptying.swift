extension Array {
    /// Removes every element and keeps the buffer, for an array reused on every write.
    ///
    /// One element at a time: `removeAll(keepingCapacity:)` destroys the elements through generic
    /// metadata, looked up on every call. Always inlined, so that a write pays for no call.
    @inline(__always)
    mutating func empty() {
        while !isEmpty {
            removeLast()
        }
    }
}
