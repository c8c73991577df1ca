/// The namespace and name that identify a stored value.
///
/// Stores list their contents as stored keys, and errors name the key they concern with one.
public struct StoredKey: Hashable, Sendable {
    /// The namespace the value is stored in; the store's own app namespace is ``PreferenceNamespace/app``.
    public let namespace: PreferenceNamespace

    /// The key's name within its namespace.
    public let name: String

    /// Creates a stored key.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: The namespace the value is stored in.
    public init(_ name: String, in namespace: PreferenceNamespace = .app) {
        self.name = name
        self.namespace = namespace
    }
}

extension StoredKey: CustomStringConvertible {
    /// The key as `namespace:name`, such as `app:theme` or `com.vendor.sdk:flag`.
    public var description: String { "\(namespace):\(name)" }
}

extension StoredKey {
    /// The first rule of key declarations this key breaks, in words, or `nil` if it breaks none: for
    /// tools that take keys as text, which must not write where a declared key never could, such
    /// as the library's reserved namespaces.
    package var ruleBroken: String? {
        if let rule = KeyValidation.violation(in: name, isNamespace: false) {
            return "its name \(rule)"
        }
        if let identifier = namespace.customIdentifier,
            let rule = KeyValidation.violation(in: identifier, isNamespace: true)
        {
            return "its namespace \(rule)"
        }
        return nil
    }
}

extension StoredKey {
    /// Reads a key written as ``description`` writes it, `namespace:name`; `nil` if the text is not one.
    package init?(parsing text: String) {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let namespace = String(text[..<colon])
        let name = String(text[text.index(after: colon)...])
        guard !namespace.isEmpty, !name.isEmpty, !name.contains(":") else { return nil }
        switch namespace {
        case "app": self.init(name, in: .app)
        case "global": self.init(name, in: .global)
        default: self.init(name, in: .custom(namespace))
        }
        if ruleBroken != nil {
            return nil
        }
    }
}
