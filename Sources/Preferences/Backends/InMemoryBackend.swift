/// The backend of a store that keeps its values in memory only: for tests and previews, and for a
/// store whose file could not be opened, which refuses every write with the reason.
struct InMemoryBackend: PreferencesBackend {
    var location = "memory"
    /// Why writes are refused, for a store whose file could not be opened.
    var refusal: PreferencesError?

    func makeCommitWatcher() -> CommitWatcher? { nil }
    var commitCount: UInt64 { 0 }

    func catchUpWithoutWaiting(_ apply: (BackendUpdate) -> Void) -> Bool {
        true
    }

    /// Nobody else commits here: there is never anything to catch up with.
    func catchUp(_ apply: (BackendUpdate) -> Void) throws(PreferencesError) {}

    func withExclusiveAccess<Result>(_ apply: (BackendUpdate) -> Void, _ body: () throws -> Result) throws -> Result {
        try body()
    }

    func commit(_ record: Record, flushesToDisk: Bool) throws(PreferencesError) -> BackendUpdate {
        if let refusal {
            throw PreferencesError(.storeUnavailable(path: location, reason: refusal.description))
        }
        return BackendUpdate(commitCount: 0)  // The store's own memory is the only copy.
    }

    func flush() throws(PreferencesError) {}
}
