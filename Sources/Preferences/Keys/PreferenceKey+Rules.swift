extension PreferenceKey {
    /// The same key, with a rule its values must keep.
    ///
    /// ```swift
    /// static let zoom = PreferenceKey<Int>("zoom", default: 100).constrained(to: .range(50...200))
    /// ```
    ///
    /// Give several rules by calling it again; a value must keep them all. See ``PreferenceRule``
    /// for what happens to a value that breaks one.
    ///
    /// A default that breaks the rule is a programming error: declaring the key stops the program
    /// with a message naming the key and the rule.
    ///
    /// - Parameter rule: What the key's values must be.
    /// - Returns: A key with the same name, namespace, type, default and summary, and the rule.
    public func constrained(to rule: PreferenceRule<Value>) -> PreferenceKey<Value> {
        precondition(
            rule.admits(defaultValue),
            "The default of key '\(name)' must be \(rule.description), but is \(describeValue(defaultValue))")
        return PreferenceKey(
            name: name, namespace: namespace, defaultValue: defaultValue, codec: codec.constrained(by: rule),
            computeDefault: computeDefault, summary: summary,
            rules: rules + [RuleDeclaration(rule, codec: codec.unconstrained ?? codec)], keepsHistory: keepsHistory)
    }

    /// The same optional key, with a rule its values other than `nil` must keep.
    ///
    /// - Parameter rule: What the key's values must be, when it has one.
    /// - Returns: A key with the same name, namespace, type, default and summary, and the rule.
    public func constrained<Wrapped>(to rule: PreferenceRule<Wrapped>) -> PreferenceKey<Value>
    where Value == Wrapped? {
        constrained(to: rule.allowingNil)
    }

    /// Whether a store accepts the value for this key: it keeps every rule of the key's, and
    /// encodes as the key stores it.
    ///
    /// Check a text field's input before writing it:
    ///
    /// ```swift
    /// TextField("Zoom", value: $zoomInput, format: .number)
    ///     .foregroundStyle(PreferenceKeys.zoom.accepts(zoomInput) ? .primary : .red)
    /// ```
    ///
    /// - Parameter value: The value to check.
    /// - Returns: `false` where a write of the value would throw ``PreferencesError/Code/invalidValue``
    ///   or ``PreferencesError/Code/encodingFailed``.
    public func accepts(_ value: Value) -> Bool {
        do throws(EncodeFailure) {
            // `nil` for an optional key's `nil`, which removes the entry: accepted too.
            _ = try codec.encode(value)
            return true
        } catch {
            return false
        }
    }
}
