#if canImport(SwiftUI)
    public import Preferences
    public import SwiftUI

    // Apple platforms only, and so never compiled on the project's Linux machines: a few lines over
    // the store's subscript and `Preference`, which the tests cover. Listed in CONTRIBUTING.md.
    // `Preferences.PreferenceKey`, because SwiftUI has a `PreferenceKey` too.

    /// A preference as a property of a SwiftUI view, whose projected value is a `Binding`.
    ///
    /// ```swift
    /// struct ReaderSettingsView: View {
    ///     @PreferenceState(.prefersLargeText) var largeText: Bool
    ///
    ///     var body: some View {
    ///         Toggle("Large text", isOn: $largeText)
    ///     }
    /// }
    /// ```
    ///
    /// The view redraws when the key changes, in this process or another: reading the property in
    /// `body` reads the store, which the Observation framework tracks per key.
    ///
    /// Given no store, the property uses the one the view's environment holds
    /// (`.preferencesStore(_:)`, for previews), and else `PreferencesStore.current`,
    /// looked up each time it is read or written.
    @propertyWrapper
    public struct PreferenceState<Value: Sendable>: DynamicProperty {
        private let key: Preferences.PreferenceKey<Value>
        private let givenStore: PreferencesStore?
        @Environment(\.preferencesStore) private var environmentStore

        /// Creates a property backed by a key of a store.
        ///
        /// - Parameters:
        ///   - key: The key the property reads and writes.
        ///   - store: The store; if you give none, the environment's, else `PreferencesStore.current`,
        ///     each time the property is read or written.
        public init(_ key: Preferences.PreferenceKey<Value>, store: PreferencesStore? = nil) {
            self.key = key
            givenStore = store
        }

        /// The store the property reads and writes now.
        private var store: PreferencesStore {
            givenStore ?? environmentStore ?? .current
        }

        /// The key's value in the store.
        public var wrappedValue: Value {
            get { store[key] }
            nonmutating set { store[key] = newValue }
        }

        /// A binding to the key, for controls such as `Toggle` and `TextField`.
        public var projectedValue: Binding<Value> {
            store.binding(for: key)
        }

        /// Removes the key's stored value, as `Preference.reset()` does.
        public func reset() {
            Preference(key, store: store).reset()
        }
    }

    // Not declared `Sendable`: it holds an `Environment`, whose conformance Apple's documentation
    // does not state, and a view's properties need not be `Sendable`. Declared so, it would not
    // build should `Environment` not be.
    @available(*, unavailable)
    extension PreferenceState: Sendable {}
#endif
