import Foundation

/// The rules for names and namespaces, checked once when a key is declared.
///
/// Each rule keeps two different keys from ever meaning the same stored entry, in this library's
/// file or in a `UserDefaults` suite, where a namespaced key is stored as `namespace:name`.
enum KeyValidation {
    /// The character between a namespace and a name wherever the two are written as one string.
    static let separator: Character = ":"

    /// The first rule that a name or namespace identifier breaks, or `nil` if it breaks none.
    static func violation(in identifier: String, isNamespace: Bool) -> String? {
        if identifier.isEmpty {
            return "it must not be empty"
        }
        if identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "it must not contain control characters"
        }
        if identifier.contains(separator) {
            return "it must not contain '\(separator)', which separates a namespace from a name"
        }
        // Swift's `==` treats canonically equivalent strings as equal, while file formats and
        // `UserDefaults` compare their bytes; requiring one normal form keeps the two views in step.
        // ASCII is always in it, and is checked without normalising, which would cost Foundation's
        // expensive first use when a store opens in a fresh process.
        if !identifier.utf8.allSatisfy({ $0 < 0x80 })
            && !identifier.utf8.elementsEqual(identifier.precomposedStringWithCanonicalMapping.utf8)
        {
            return "it must be in Unicode Normalization Form C (precomposed)"
        }
        if isNamespace && identifier.hasPrefix("_") {
            return "namespaces beginning with '_' are reserved for the library"
        }
        return nil
    }

    /// Stops the program if a key's name or namespace breaks a rule: a mistake in a key declaration
    /// that no user input can cause and no caller could handle.
    static func validate(name: String, namespace: PreferenceNamespace) {
        if let rule = violation(in: name, isNamespace: false) {
            fatalError("Invalid preference key name \(String(reflecting: name)) in namespace '\(namespace)': \(rule).")
        }
        if let identifier = namespace.customIdentifier, let rule = violation(in: identifier, isNamespace: true) {
            fatalError(
                "Invalid namespace \(String(reflecting: identifier)) for preference key \(String(reflecting: name)): \(rule)."
            )
        }
    }

    /// Stops the program if a store's app namespace breaks a rule.
    static func validate(appNamespace: String) {
        if let rule = violation(in: appNamespace, isNamespace: true) {
            fatalError("Invalid app namespace \(String(reflecting: appNamespace)) for a preferences store: \(rule).")
        }
    }
}
