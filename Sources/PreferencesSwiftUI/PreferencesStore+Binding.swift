#if canImport(SwiftUI)
    public import Preferences
    public import SwiftUI

    // Apple platforms only, and so never compiled on the project's Linux machines: a few lines over
    // the store's subscript, which the tests cover. Listed in CONTRIBUTING.md.

    extension PreferencesStore {
        /// A SwiftUI binding to a key: reading it reads the store, and setting it writes the store as
        /// the subscript does.
        ///
        /// ```swift
        /// Toggle("Large text", isOn: store.binding(for: .prefersLargeText))
        /// ```
        ///
        /// - Parameter key: The key to read and write.
        /// - Returns: A binding whose value is the key's.
        public func binding<Value>(for key: Preferences.PreferenceKey<Value>) -> Binding<Value> {
            Binding(get: { self[key] }, set: { self[key] = $0 })
        }
    }
#endif
