/// How much history a file store keeps: the last changes of each key, and at most so many bytes
/// in all.
///
/// ```swift
/// let store = try PreferencesStore(fileURL: url, history: HistoryRetention(changesPerKey: 100, maximumBytes: 4_000_000))
/// ```
///
/// Each process applies the limits it opened the store with when it compacts. See <doc:History>.
public struct HistoryRetention: Sendable, Hashable {
    /// How many of each key's changes to keep, newest first.
    public var changesPerKey: Int
    /// How many bytes the history file may keep, newest first; it may grow to twice as many
    /// between prunings.
    public var maximumBytes: Int

    /// Limits for the history a store keeps.
    ///
    /// - Parameters:
    ///   - changesPerKey: How many of each key's changes to keep, newest first; 0 keeps none.
    ///   - maximumBytes: How many bytes of history to keep, newest first; 0 keeps none.
    public init(changesPerKey: Int, maximumBytes: Int) {
        // At most a quarter of `Int.max`: "no limit" written as `.max` must not overflow the
        // pruning's arithmetic.
        self.changesPerKey = min(max(0, changesPerKey), Int.max / 4)
        self.maximumBytes = min(max(0, maximumBytes), Int.max / 4)
    }

    /// The last 32 changes of each key, and at most 1 MiB in all.
    public static let standard = HistoryRetention(changesPerKey: 32, maximumBytes: 1 << 20)

    /// No history: compaction drops the log's records, as it did before history existed.
    public static let off = HistoryRetention(changesPerKey: 0, maximumBytes: 0)

    /// Every change, never pruned.
    ///
    /// For the `prefs` tool, which must not prune an app's history to limits of its own: the app's
    /// next pruning applies the app's.
    package static let unpruned = HistoryRetention(changesPerKey: Int.max / 4, maximumBytes: Int.max / 4)

    /// Whether any history is kept.
    public var keepsHistory: Bool { changesPerKey > 0 && maximumBytes > 0 }
}
