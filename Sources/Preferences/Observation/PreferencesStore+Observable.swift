#if canImport(Observation)
    public import Observation

    /// A store works with the Observation framework, and so with SwiftUI: reading `store[.key]` inside
    /// `withObservationTracking`, or in a view's `body`, tracks that key alone. A change to another key
    /// does not fire it.
    ///
    /// ```swift
    /// struct SettingsView: View {
    ///     let store: PreferencesStore
    ///
    ///     var body: some View {
    ///         Toggle("Large text", isOn: Binding(
    ///             get: { store[.prefersLargeText] },
    ///             set: { store[.prefersLargeText] = $0 }
    ///         ))
    ///     }
    /// }
    /// ```
    extension PreferencesStore: Observable {}

    extension PreferencesStore {
        /// Tells the Observation framework that a key changed, after the commit.
        func announce(_ path: KeyPath<PreferencesStore, Int>) {
            observationRegistrar.willSet(self, keyPath: path)
            observationRegistrar.didSet(self, keyPath: path)
        }

        /// Tells the Observation framework that a key was read.
        func trackAccess(_ path: KeyPath<PreferencesStore, Int>) {
            observationRegistrar.access(self, keyPath: path)
        }
    }
#endif

/// The argument of a key's observation key path, so that each key has a path of its own.
struct ObservedKey: Hashable, Sendable {
    let key: ResolvedKey
}

extension PreferencesStore {
    /// A member per key, for the Observation framework to tell keys apart: each key has a key path
    /// of its own, `\.[observing: key]`.
    subscript(observing key: ObservedKey) -> Int { 0 }
}
