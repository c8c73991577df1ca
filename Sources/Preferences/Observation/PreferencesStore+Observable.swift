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
        /// A member per key, for the Observation framework to tell keys apart: each key has a key path
        /// of its own, `\.[observing: key]`.
        subscript(observing key: StorageKey) -> Int { 0 }

        /// Tells the Observation framework that a key changed, after the commit.
        func announce(_ path: KeyPath<PreferencesStore, Int>) {
            observationRegistrar.willSet(self, keyPath: path)
            observationRegistrar.didSet(self, keyPath: path)
        }

        /// Tells the Observation framework that a key changed, after the commit, through the path
        /// its slot holds: retaining it cost a write of one key a retain and a release.
        func announce(_ path: Unmanaged<KeyPath<PreferencesStore, Int>>) {
            path._withUnsafeGuaranteedRef { announce($0) }
        }

        /// Tells the Observation framework that a key was read.
        func trackAccess(_ path: Unmanaged<KeyPath<PreferencesStore, Int>>) {
            path._withUnsafeGuaranteedRef { observationRegistrar.access(self, keyPath: $0) }
        }
    }
#endif

extension Slot {
    /// The key path the Observation framework knows this key by, made on first use and kept.
    ///
    /// Unretained: the slot holds the path for as long as the slot lives, and a slot lives as long
    /// as its store. Passed to `access` retained, as a strong reference read out of a `var` must
    /// be, it cost a read of an Int 51 of its 579 instructions.
    func observationKeyPath(for key: StorageKey) -> Unmanaged<KeyPath<PreferencesStore, Int>> {
        if let observationPath {
            return Unmanaged.passUnretained(observationPath)
        }
        let path = \PreferencesStore.[observing: key]
        observationPath = path
        return Unmanaged.passUnretained(path)
    }
}
