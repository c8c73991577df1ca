/// The backend of a store that keeps its values in memory only: for tests and previews, and for a
/// store whose file could not be opened, which refuses every write with the reason.
struct InMemoryBackend: UnsharedBackend {
    var location = "memory"
    /// Why writes are refused, for a store whose file could not be opened.
    var refusal: PreferencesError?

    func commit(_ record: Record, flushesToDisk: Bool) throws(PreferencesError) -> BackendUpdate {
        if let refusal {
            throw PreferencesError(.storeUnavailable(path: location, reason: refusal.description))
        }
        return BackendUpdate(commitCount: 0)  // The store's own memory is the only copy.
    }

    func flush() throws(PreferencesError) {}
}
