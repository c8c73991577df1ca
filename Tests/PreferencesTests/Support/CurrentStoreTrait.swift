import Preferences
import Testing

/// Gives each test it marks, or each test of a suite it marks, an in-memory store of its own as
/// `PreferencesStore.current`, so that the property wrappers its code makes never reach the
/// standard store: the trait the "Testing and previews" article shows.
struct InMemoryPreferences: TestTrait, SuiteTrait, TestScoping {
    // On a suite, around each of its tests, each with a store of its own.
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @concurrent @Sendable () async throws -> Void
    ) async throws {
        // A suite's own scope binds nothing: each test case gets its store.
        guard testCase != nil else { return try await function() }
        try await PreferencesStore.withCurrent(.inMemory()) {
            try await function()
        }
    }
}

extension Trait where Self == InMemoryPreferences {
    /// An in-memory store of its own as `PreferencesStore.current`, for each run of each test.
    static var inMemoryPreferences: Self { Self() }
}
