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
    let key: StorageKey
}

extension PreferencesStore {
    /// A member per key, for the Observation framework to tell keys apart: each key has a key path
    /// of its own, `\.[observing: key]`.
    subscript(observing key: ObservedKey) -> Int { 0 }
}

extension Slot {
    /// The key path to announce a change of this key through: `nil` unless the key was read
    /// through the subscript at some point.
    ///
    /// The Observation framework tracks only key paths a read passed to its registrar's `access`,
    /// which only the subscript does, with this path: a key never read that way has no observer to
    /// tell of a change, and its writes skip the framework's `willSet` and `didSet`. The flag is set
    /// under the store's state lock before the read's value is read, so a write that commits after
    /// that read finds it.
    var announcedPath: KeyPath<PreferencesStore, Int>? {
        isReadThroughSubscript ? observationPath : nil
    }
}
