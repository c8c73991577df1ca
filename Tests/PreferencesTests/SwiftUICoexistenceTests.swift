import Preferences
import SwiftUIStandIn
import Testing

// This file imports a module with a `PreferenceKey` protocol of its own, as a SwiftUI view file
// does. It compiles only if both documented spellings of our key stay unambiguous.

extension PreferenceKeys {
    fileprivate static let qualified = Preferences.PreferenceKey<Bool>("qualified", default: true)
    fileprivate static let shortName = Key<Int>("shortName", default: 3)
}

/// A conformance to the other module's protocol, so that its name is in use here too.
private struct ViewPreference: SwiftUIStandIn.PreferenceKey {}

struct SwiftUICoexistenceTests {
    @Test func keysDeclaredBesideAnotherPreferenceKeyTypeWork() throws {
        let store = PreferencesStore.inMemory()
        #expect(store[.qualified] == true)
        store[.shortName] = 4
        #expect(try store.value(for: .shortName) == 4)
    }
}
