/// The backend of a store that keeps its values in memory only: for tests and previews, and for a
/// store whose file could not be opened, which refuses every write with the reason.
///
/// A class, like every backend, so that the store calls it through one reference: a struct
/// backend would be copied out of its existential box on every write.
final class InMemoryBackend: PreferencesBackend {
    let location: String
    /// Why writes are refused, for a store whose file could not be opened.
    let refusal: PreferencesError?

    init(location: String = "memory", refusal: PreferencesError? = nil) {
        self.location = location
        self.refusal = refusal
    }

    // Nobody else commits here: nothing to catch up with, nobody to lock out or wake.
    var commitCount: UInt64 { 0 }

    func makeCommitWatcher() -> CommitWatcher? { nil }

    func catchUp(_ apply: (BackendUpdate) -> Void) throws(PreferencesError) {}

    func catchUpWithoutWaiting(_ apply: (BackendUpdate) -> Void) -> Bool { true }

    func withExclusiveAccess<Result>(_ apply: (BackendUpdate) -> Void, _ body: () throws -> Result) throws -> Result {
        try body()
    }

    func commit(
        _ record: Record,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        apply(try commit(), true)
    }

    func commitExclusively(
        _ change: EntryChange,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        apply(try commit(), true)
    }

    private func commit() throws(PreferencesError) -> BackendUpdate {
        if let refusal {
            throw PreferencesError(.storeUnavailable(path: location, reason: refusal.description))
        }
        return BackendUpdate(commitCount: 0)  // The store's own memory is the only copy.
    }

    func flush() throws(PreferencesError) {}
}
