#if canImport(SwiftUI)
    public import Preferences
    public import SwiftUI

    // Apple platforms only, and so never compiled on the project's Linux machines: an environment
    // value and a modifier, as SwiftUI documents them. Listed in CONTRIBUTING.md.

    extension EnvironmentValues {
        /// The store `@PreferenceState` properties given no store use in this part of the view
        /// hierarchy; `nil`, the default, for `PreferencesStore.current`.
        public var preferencesStore: PreferencesStore? {
            get { self[PreferencesStoreEnvironmentKey.self] }
            set { self[PreferencesStoreEnvironmentKey.self] = newValue }
        }
    }

    private struct PreferencesStoreEnvironmentKey: EnvironmentKey {
        static let defaultValue: PreferencesStore? = nil
    }

    extension View {
        /// Gives the `@PreferenceState` properties of this view, and of the views inside it, that
        /// were given no store, this one: for a preview, an in-memory store holding what it shows.
        ///
        /// ```swift
        /// #Preview {
        ///     let store = PreferencesStore.inMemory()
        ///     store[.prefersLargeText] = true
        ///     return ReaderSettingsView().preferencesStore(store)
        /// }
        /// ```
        ///
        /// Like `environment(_:_:)`, which it calls, it may be called from any isolation.
        ///
        /// - Parameter store: The store to use.
        /// - Returns: The view, with the store in its environment.
        nonisolated public func preferencesStore(_ store: PreferencesStore) -> some View {
            environment(\.preferencesStore, store)
        }
    }
#endif
