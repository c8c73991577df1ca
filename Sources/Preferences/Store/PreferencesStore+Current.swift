extension PreferencesStore {
    /// The store bound by ``withCurrent(_:operation:)-7jqhk`` for the running task.
    @TaskLocal static var bound: PreferencesStore?

    /// The store that property wrappers given no store use: ``standard``, unless the running task
    /// bound another with ``withCurrent(_:operation:)-7jqhk``.
    ///
    /// Resolved each time it is read, so that a wrapper made before a test or a preview bound its
    /// own store still reads that store, and one made while the standard store could not open uses
    /// it once it can.
    public static var current: PreferencesStore {
        bound ?? .standard
    }

    /// Runs `operation` with `store` as ``current``: for a test or a preview, so that the code it
    /// runs, and the property wrappers that code reads, never touch the standard store.
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
    /// The binding is a task-local value: it holds on this thread until `operation` returns, and
    /// in the tasks `operation` starts, but not in detached tasks or other threads.
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
