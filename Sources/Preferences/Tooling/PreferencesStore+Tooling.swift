import Foundation

// Untyped access for the package's own tools, such as `prefs`: entries as they are stored, with
// their kind, written and read without a typed key. Not part of the public API.

extension PreferencesStore {
    /// Every entry outside the reserved namespaces, sorted by namespace and name, as stored.
    package func storedEntries() -> [(key: StoredKey, value: StoredValue)] {
        catchUpForRead()
        let entries = state.withLock { state in
            state.everySlot().compactMap { key, slot -> (ResolvedKey, StoredValue)? in
                guard !key.isReserved, let stored = slot.stored else { return nil }
                return (key, stored)
            }
        }
        return entries.sorted { $0.0 < $1.0 }.map { (storedKey(for: $0.0), $0.1) }
    }

    /// The entry stored at a key, as stored; `nil` if there is none.
    package func storedValue(at key: StoredKey) -> StoredValue? {
        storedValue(at: resolvedKey(for: key))
    }

    /// Writes entries as they are, and removes those given `nil`, in one commit: all or nothing.
    package func writeStoredValues(_ values: [(key: StoredKey, value: StoredValue?)]) throws {
        try withWriteLock {
            try withExclusiveAccess {
                try commit(
                    values.map { PendingChange(key: resolvedKey(for: $0.key), value: $0.value, valueType: nil) },
                    cause: .tool)
            }
        }
    }

    /// Folds the log into a new snapshot now, under the exclusive lock; nothing for other stores.
    package func compact() throws {
        guard let engine = backend as? FileEngine else { return }
        try withWriteLock {
            try withExclusiveAccess {
                // Reported even when the compaction then fails: damage it found, and copied.
                var problems: [PreferencesError] = []
                defer { errorChannel.report(problems) }
                try engine.compactNow(reporting: &problems)
            }
        }
    }

    /// Writes the history file again with what verifies, keeping a copy first, if it is damaged.
    ///
    /// - Returns: The damage found, with where the copy was kept; empty if there was none.
    package func repairHistory() throws -> [PreferencesError] {
        try withWriteLock {
            try withExclusiveAccess { try backend.repairHistory(flushesToDisk: durability == .synchronous) }
        }
    }

    /// Writes what a change in the history stored back to its key, as a change of its own whose
    /// cause is a restore: `prefs restore`, which knows no key's type.
    package func restoreStoredValue(of entry: HistoryEntry) throws {
        try commit(
            [PendingChange(key: resolvedKey(for: entry.key), value: entry.stored, valueType: nil)], cause: .restore)
    }

    /// Calls `handler` after each commit that changes any key outside the reserved namespaces,
    /// until the returned observation is cancelled or released.
    package func observeEveryKey(handler: @escaping @Sendable (PreferencesChange) -> Void) -> PreferencesObservation {
        addObserver(.everything) { [appNamespace] change in
            handler(change.publicChange(appNamespace: appNamespace))
        }
    }
}

extension FileEngine {
    func compactNow(reporting problems: inout [PreferencesError]) throws(PreferencesError) {
        try state.withLock { (state: inout State) throws(PreferencesError) in
            try compact(&state, reporting: &problems)
        }
    }
}

extension PreferencesStore {
    /// The schema stored by every `register` call on the store's data, sorted by namespace and name.
    package func declaredKeys() -> [KeyDeclaration] {
        catchUpForRead()
        let values = state.withLock { state in
            state.everySlot().compactMap { key, slot in key.isSchemaEntry ? slot.stored : nil }
        }
        return values.compactMap(KeyDeclaration.init(schemaValue:)).sorted { $0.key < $1.key }
    }
}
