/// The container you extend to declare keys, so that a store can be subscripted with a leading dot.
///
/// Declare each key once, as a static property of an extension:
///
/// ```swift
/// extension PreferenceKeys {
///     static let prefersLargeText = PreferenceKey<Bool>("largeText", default: false)
/// }
///
/// store[.prefersLargeText] = true
/// ```
///
/// `PreferenceKeys` has no state and cannot be created; ``PreferenceKey`` is its subclass, which
/// is what lets Swift find the static properties from a leading dot where a `PreferenceKey<Value>`
/// is expected.
///
/// In a file that imports SwiftUI too, whose `PreferenceKey` protocol shares our key's name, write
/// `Preferences.PreferenceKey<Bool>`, or ``Key`` inside the extension.
public class PreferenceKeys: @unchecked Sendable {
    // `@unchecked` because a class that is subclassed cannot be checked for `Sendable`; it is
    // safe because `PreferenceKeys` has no stored properties at all.

    /// A shorter name for ``PreferenceKey`` inside `extension PreferenceKeys`, free of any clash
    /// with SwiftUI's `PreferenceKey` protocol.
    ///
    /// ```swift
    /// import Preferences
    /// import SwiftUI
    ///
    /// extension PreferenceKeys {
    ///     static let showsBadge = Key<Bool>("showsBadge", default: true)
    /// }
    /// ```
    public typealias Key = PreferenceKey

    init() {}

    /// The key's full identity in a store with this app namespace.
    ///
    /// Every instance is a ``PreferenceKey``, which overrides it.
    func resolvedKey(appNamespace: String) -> ResolvedKey {
        preconditionFailure("only PreferenceKey instances exist")
    }

    /// What a store records when the app declares the key.
    ///
    /// Every instance is a ``PreferenceKey``, which overrides it.
    func declaration(appNamespace: String) -> KeyDeclaration {
        preconditionFailure("only PreferenceKey instances exist")
    }
}
