/// Where a store's entries live: a small protocol over tagged entries.
///
/// A store keeps every entry in memory and serves reads from there; a backend only makes
/// committed changes durable. ``commit(_:)`` is called with the store's write lock held, one batch
/// at a time, and the store applies a batch to memory only after the backend accepted it, so
/// memory never runs ahead of what is stored.
protocol PreferencesBackend: Sendable {
    /// A path or name for messages.
    var location: String { get }

    /// Makes a batch of changes durable, all or nothing.
    ///
    /// - Returns: Problems that did not stop the commit, for the store to report, such as a
    ///   durability that could not be confirmed after the new data was already in place.
    /// - Throws: Why nothing was committed.
    func commit(_ changes: [EntryChange]) throws(PreferencesError) -> [PreferencesError]
}

/// The full identity of a stored entry: its resolved namespace (empty for the global namespace) and its name.
struct StorageKey: Hashable, Sendable, Comparable {
    var namespace: String
    var name: String

    static func < (lhs: StorageKey, rhs: StorageKey) -> Bool {
        if lhs.namespace != rhs.namespace {
            return lhs.namespace.utf8.lexicographicallyPrecedes(rhs.namespace.utf8)
        }
        return lhs.name.utf8.lexicographicallyPrecedes(rhs.name.utf8)
    }
}

/// One change in a committed batch: a new value for a key, or its removal.
struct EntryChange: Equatable, Sendable {
    var key: StorageKey
    /// `nil` removes the entry.
    var value: StoredValue?
}
