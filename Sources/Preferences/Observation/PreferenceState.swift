#if canImport(SwiftUI)
    public import SwiftUI

    // Apple platforms only, and so never compiled on the project's Linux machines: a few lines over
    // `Preference`, which the tests cover. Listed in CONTRIBUTING.md. `Preferences.PreferenceKey`,
    // because SwiftUI has a `PreferenceKey` too.

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
    @propertyWrapper
    public struct PreferenceState<Value: Sendable>: DynamicProperty, Sendable {
        private let preference: Preference<Value>

        /// Creates a property backed by a key of a store.
        ///
        /// - Parameters:
        ///   - key: The key the property reads and writes.
        ///   - store: The store; if you give none, ``PreferencesStore/current`` each time the
        ///     property is read or written.
        public init(_ key: Preferences.PreferenceKey<Value>, store: PreferencesStore? = nil) {
            preference = Preference(key, store: store)
        }

        /// The key's value in the store.
        public var wrappedValue: Value {
            get { preference.wrappedValue }
            nonmutating set { preference.wrappedValue = newValue }
        }

        /// A binding to the key, for controls such as `Toggle` and `TextField`.
        public var projectedValue: Binding<Value> {
            preference.store.binding(for: preference.key)
        }

        /// Removes the key's stored value, as ``Preference/reset()`` does.
        public func reset() {
            preference.reset()
        }
    }
#endif
