extension PreferenceKey {
    /// Creates a key stored through a codec of your own: as the native type the codec stores.
    ///
    /// ```swift
    /// static let favourites = PreferenceKey<Set<String>>("favourites", default: [], codec: .sortedArray())
    /// ```
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    ///   - codec: How the key's values are stored; see ``PreferenceCodec``.
    public convenience init<Stored>(
        _ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app,
        codec: PreferenceCodec<Value, Stored>
    ) {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: KeyCodec(codec))
    }

    /// Creates a key for an optional value stored through a codec of your own; `nil` when nothing
    /// is stored, and assigning `nil` removes the entry.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    ///   - codec: How the key's values are stored; see ``PreferenceCodec``.
    public convenience init<Wrapped, Stored>(
        _ name: String, in namespace: PreferenceNamespace = .app, codec: PreferenceCodec<Wrapped, Stored>
    ) where Value == Wrapped? {
        self.init(name: name, namespace: namespace, defaultValue: nil, codec: .unshared(optional: KeyCodec(codec)))
    }
}
