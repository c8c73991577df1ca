/// The store's memory: one slot per key that has been stored or read.
struct StoreState {
    var slots: [StorageKey: Slot] = [:]
    /// The backend's commit count when memory was last brought up to date with it.
    var seenCommitCount: UInt64 = 0

    /// Applies changes committed elsewhere, or by this store.
    mutating func apply(_ changes: [EntryChange]) {
        for change in changes {
            slots[change.key, default: Slot()].replace(with: change.value)
        }
    }
}

/// What a store knows about one key.
struct Slot {
    /// The stored value; `nil` when there is no entry.
    var stored: StoredValue?
    /// `stored`, decoded by the last key that read it, for types whose decoding costs something.
    var decoded: (any Sendable)?
    /// Changes whenever `stored` does, so that a value decoded outside the lock is cached only if
    /// it is still current, and a read failure is reported once per stored value.
    var generation: UInt64 = 0
    /// The value type the key was first used with in this process.
    var valueType: (any Any.Type)?
    /// The other value types already reported as conflicting with `valueType`.
    var reportedConflicts: Set<ObjectIdentifier> = []
    /// The generation whose read failure was last reported.
    var reportedFailureGeneration: UInt64?

    init(stored: StoredValue? = nil) {
        self.stored = stored
    }

    /// Records the value type a key is used with; returns the first type if it is another one,
    /// not reported before.
    mutating func register(_ type: any Any.Type) -> (any Any.Type)? {
        guard let first = valueType else {
            valueType = type
            return nil
        }
        if first == type { return nil }
        return reportedConflicts.insert(ObjectIdentifier(type)).inserted ? first : nil
    }

    mutating func replace(with value: StoredValue?) {
        stored = value
        decoded = nil
        generation &+= 1
    }
}
