/// The space a preference key's name lives in.
///
/// Two keys with the same name in different namespaces are different keys. There are three kinds:
///
/// - ``app``: the app's own keys, the default. A store maps it to its
///   ``PreferencesStore/appNamespace``, which is `"app"` unless configured, so an app and its
///   extensions that open the same store see the same values.
/// - ``global``: no namespace at all: the plain names that existing `UserDefaults` and
///   `@AppStorage` entries use.
/// - ``custom(_:)``: a namespace of a library's own, such as `"com.vendor.sdk"`, so that its keys
///   never collide with the app's.
///
/// ```swift
/// extension PreferenceKeys {
///     static let sdkFlag = PreferenceKey<Bool>("flag", default: false, in: .custom("com.vendor.sdk"))
/// }
/// ```
public struct PreferenceNamespace: Hashable, Sendable {
    enum Kind: Hashable {
        case app
        case global
        case custom(String)
    }

    let kind: Kind

    /// The app's own namespace, resolved by each store to its ``PreferencesStore/appNamespace``.
    public static let app = PreferenceNamespace(kind: .app)

    /// What ``app`` resolves to unless a store is told otherwise (see
    /// ``PreferencesStore/defaultAppNamespace``).
    static let defaultAppNamespace = "app"

    /// No namespace: the plain names that `UserDefaults` and `@AppStorage` use.
    public static let global = PreferenceNamespace(kind: .global)

    /// A namespace of its own, for a library or a feature that must never collide with the app.
    ///
    /// The identifier follows the same rules as a key's name (see <doc:DeclaringKeys>); an
    /// identifier that breaks them stops the program when a key is declared with it.
    ///
    /// - Parameter identifier: A reverse-DNS identifier such as `"com.vendor.sdk"`.
    /// - Returns: The namespace with that identifier.
    public static func custom(_ identifier: String) -> PreferenceNamespace {
        PreferenceNamespace(kind: .custom(identifier))
    }

    /// The identifier of a custom namespace; `nil` for ``app`` and ``global``.
    public var customIdentifier: String? {
        if case .custom(let identifier) = kind { identifier } else { nil }
    }

    /// The namespace as stored, with ``app`` replaced by the store's app namespace.
    ///
    /// The global namespace is the empty string, which no custom namespace can be.
    func resolved(appNamespace: String) -> String {
        switch kind {
        case .app: appNamespace
        case .global: ""
        case .custom(let identifier): identifier
        }
    }
}

extension PreferenceNamespace {
    /// The namespace a stored namespace string stands for, as seen by a store.
    init(stored: String, appNamespace: String) {
        if stored == appNamespace {
            self = .app
        } else if stored.isEmpty {
            self = .global
        } else {
            self = .custom(stored)
        }
    }
}

extension PreferenceNamespace: CustomStringConvertible {
    /// `app`, `global`, or the custom identifier.
    public var description: String {
        switch kind {
        case .app: "app"
        case .global: "global"
        case .custom(let identifier): identifier
        }
    }
}
