import CPreferencesAtomics

/// Where a store keeps the marks ``ObservedKey`` sets: one word per slot, handed out in order from
/// blocks that never move.
///
/// Neighbouring slots' marks share cache lines, so that a write of a key not in the cache finds
/// its mark beside others it wrote: a word allocated apart for each key cost a write at 10,000
/// keys a cache miss of its own. Call ``make()`` holding the store's state lock.
struct TrackingMarks {
    /// A block of marks, each zero until set.
    ///
    /// Kept alive by every ``TrackingMark`` in it: a key path the Observation framework holds may
    /// be hashed after its store is gone.
    final class Block: @unchecked Sendable {
        // `@unchecked`: the words are only read and written atomically, through their addresses.
        static let capacity = 512
        let words: UnsafeMutablePointer<UInt64>

        init() {
            words = .allocate(capacity: Self.capacity)
            words.initialize(repeating: 0, count: Self.capacity)
        }

        deinit {
            words.deallocate()
        }
    }

    private var block = Block()
    private var used = 0

    /// A mark no other slot has, not set.
    mutating func make() -> TrackingMark {
        if used == Block.capacity {
            block = Block()
            used = 0
        }
        defer { used += 1 }
        return TrackingMark(block: block, word: block.words + used)
    }
}

/// One slot's mark, set once the Observation framework tracks the key (see ``ObservedKey``).
///
/// Never cleared. Any thread may set it; a store reads it under its state lock.
struct TrackingMark: @unchecked Sendable {
    // `@unchecked`: `word` is only read and written atomically, and `block` keeps it allocated.
    private let block: TrackingMarks.Block
    private let word: UnsafeMutablePointer<UInt64>

    fileprivate init(block: TrackingMarks.Block, word: UnsafeMutablePointer<UInt64>) {
        self.block = block
        self.word = word
    }

    var isSet: Bool {
        preferences_atomic_load(word) != 0
    }

    func set() {
        preferences_atomic_store(word, 1)
    }
}
