/// The backend of an in-memory store, for tests and previews: nothing outlives the store.
struct InMemoryBackend: PreferencesBackend {
    var location: String { "memory" }

    func commit(_ changes: [EntryChange]) throws(PreferencesError) -> [PreferencesError] {
        []  // The store's own memory is the only copy.
    }
}

/// The backend of a store whose file could not be opened: every write fails with the reason.
struct UnavailableBackend: PreferencesBackend {
    let location: String
    let reason: PreferencesError

    func commit(_ changes: [EntryChange]) throws(PreferencesError) -> [PreferencesError] {
        throw PreferencesError(.storeUnavailable(path: location, reason: reason.description))
    }
}
