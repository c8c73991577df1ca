extension PreferencesStore {
    /// The store bound by ``withCurrent(_:operation:)-7jqhk`` for the running task.
    @TaskLocal static var bound: PreferencesStore?

    /// The store that property wrappers given no store use: ``standard``, unless the running task
    /// bound another with ``withCurrent(_:operation:)-7jqhk``.
    ///
    /// Resolved each time it is read, so that a wrapper made before a test bound its own store
    /// still reads that store, and one made while the standard store could not open uses it once
    /// it can.
    public static var current: PreferencesStore {
        bound ?? .standard
    }

    /// Runs `operation` with `store` as ``current``: for a test, so that the property wrappers the
    /// code under test reads, given no store, use `store` rather than the standard one.
    ///
    /// ```swift
    /// @Test func largeTextMakesTheFontBigger() {
    ///     PreferencesStore.withCurrent(.inMemory()) {
    ///         let settings = ReaderSettings()       // @Preference(.prefersLargeText) var largeText
    ///         settings.largeText = true
    ///         #expect(settings.fontSize == 20)
    ///     }
    /// }
    /// ```
    ///
    /// The binding is a task-local value: it holds while `operation` runs and in the tasks it
    /// starts, but not in detached tasks, on Dispatch queues, in notification or callback handlers,
    /// or in a SwiftUI view's `body`, which runs later, outside it: a preview passes its store to
    /// the wrappers (`store:`) instead. Code given a store explicitly, `.standard` included, keeps
    /// it.
    ///
    /// - Parameters:
    ///   - store: The store ``current`` gives while `operation` runs.
    ///   - operation: The code to run.
    /// - Returns: What `operation` returned.
    public static func withCurrent<Result>(
        _ store: PreferencesStore,
        operation: () throws -> Result
    ) rethrows -> Result {
        try $bound.withValue(store, operation: operation)
    }

    /// Runs `operation` with `store` as ``current``, in the tasks it starts too: the asynchronous
    /// form of ``withCurrent(_:operation:)-7jqhk``.
    ///
    /// - Parameters:
    ///   - store: The store ``current`` gives while `operation` runs.
    ///   - operation: The code to run.
    /// - Returns: What `operation` returned.
    public static func withCurrent<Result>(
        _ store: PreferencesStore,
        operation: () async throws -> Result
    ) async rethrows -> Result {
        try await $bound.withValue(store, operation: operation)
    }
}
