/// The backend of an in-memory store, for tests and previews: nothing outlives the store.
struct InMemoryBackend: PreferencesBackend {
    var location: String { "memory" }
    var hasOtherWriters: Bool { false }
    var commitCount: UInt64 { 0 }

    func catchUp() throws(PreferencesError) -> BackendUpdate {
        BackendUpdate(commitCount: 0)
    }

    func withExclusiveAccess<Result>(_ body: (BackendUpdate) throws -> Result) throws -> Result {
        try body(BackendUpdate(commitCount: 0))
    }

    func commit(_ record: Record, durability: PreferencesStore.Durability) throws(PreferencesError) -> BackendUpdate {
        BackendUpdate(commitCount: 0)  // The store's own memory is the only copy.
    }

    func flush() throws(PreferencesError) {}
}

/// The backend of a store whose file could not be opened: every write fails with the reason.
struct UnavailableBackend: PreferencesBackend {
    let location: String
    let reason: PreferencesError
    var hasOtherWriters: Bool { false }
    var commitCount: UInt64 { 0 }

    func catchUp() throws(PreferencesError) -> BackendUpdate {
        BackendUpdate(commitCount: 0)
    }

    func withExclusiveAccess<Result>(_ body: (BackendUpdate) throws -> Result) throws -> Result {
        try body(BackendUpdate(commitCount: 0))
    }

    func commit(_ record: Record, durability: PreferencesStore.Durability) throws(PreferencesError) -> BackendUpdate {
        throw PreferencesError(.storeUnavailable(path: location, reason: reason.description))
    }

    func flush() throws(PreferencesError) {}
}
