import Preferences
import Testing

/// Gives the test it marks an in-memory store of its own as `PreferencesStore.current`, so that
/// the property wrappers its code makes never reach the standard store: the trait the "Testing and
/// previews" article shows.
struct InMemoryPreferences: TestTrait, TestScoping {
    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @concurrent @Sendable () async throws -> Void
    ) async throws {
        try await PreferencesStore.withCurrent(.inMemory()) {
            try await function()
        }
    }
}

extension Trait where Self == InMemoryPreferences {
    /// An in-memory store of its own as `PreferencesStore.current`, for each run of the test.
    static var inMemoryPreferences: Self { Self() }
}
