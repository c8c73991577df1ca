import CPreferencesAtomics

/// A flag any thread may read without a lock, set and cleared by threads that hold one.
///
/// For a copy of some fact about state behind a lock, kept so that a thread can skip taking the
/// lock when the fact says there is nothing to do there. Every write happens under that lock; a
/// read sees the last write made before it, or one made since.
final class AtomicFlag: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see that the word is only read and written
    // atomically. It lives behind a pointer, at a fixed address, as atomics require.
    private let word: UnsafeMutablePointer<UInt64>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 0)
    }

    deinit {
        word.deallocate()
    }

    /// Whether the flag is set.
    var isSet: Bool {
        preferences_atomic_load(word) != 0
    }

    /// Sets or clears the flag.
    ///
    /// Call it holding the lock whose state it copies.
    func set(_ isSet: Bool) {
        preferences_atomic_store(word, isSet ? 1 : 0)
    }
}
