/// Serial numbers for key objects: each `PreferenceKey` made takes the next.
///
/// A store keeps the slots of the keys it is read through in an array by serial (see
/// `StoreState.withSlot(for:serial:tracking:_:)`), so that a read finds its slot without hashing, and,
/// reading keys in the order they were declared, in the order they lie in memory. The counter is
/// one number: nothing is kept per key. Zero is no serial, which every key made after the
/// counter's last number gets.
enum KeySerials {
    private static let last = Locked<UInt32>(0)

    /// The next serial, or zero once they have run out.
    static func next() -> UInt32 {
        last.withLock { last in
            guard last < .max else { return 0 }
            last += 1
            return last
        }
    }
}
