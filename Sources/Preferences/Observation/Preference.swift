/// A property backed by a preference, for plain Swift types: models, services, command-line tools.
///
/// ```swift
/// final class ReaderSettings {
///     @Preference(.prefersLargeText) var prefersLargeText: Bool
///     @Preference(.theme, store: .inMemory()) var theme: Theme
/// }
///
/// settings.prefersLargeText = true              // writes to the store
/// for await theme in settings.$theme.changes {  // the projected value gives the key and its changes
///     apply(theme)
/// }
/// ```
///
/// Reading the property reads the store, so it is always current, and inside
/// `withObservationTracking` it tracks the key. Setting it behaves as the store's subscript does: a
/// value that cannot be written keeps the old one, and the problem reaches ``PreferencesStore/errors``.
@propertyWrapper
public struct Preference<Value: Sendable>: Sendable {
    /// The key the property reads and writes.
    public let key: PreferenceKey<Value>

    /// The store the property reads and writes.
    public let store: PreferencesStore

    /// Creates a property backed by a key of a store.
    ///
    /// - Parameters:
    ///   - key: The key the property reads and writes.
    ///   - store: The store; ``PreferencesStore/standard`` unless you give another, as tests and
    ///     previews do.
    public init(_ key: PreferenceKey<Value>, store: PreferencesStore = .standard) {
        self.key = key
        self.store = store
    }

    /// The key's value in the store.
    public var wrappedValue: Value {
        get { store[key] }
        nonmutating set { store[key] = newValue }
    }

    /// The wrapper itself, reached with `$name`: its key, its store and its changes.
    public var projectedValue: Preference<Value> {
        self
    }

    /// The key's values as they change, starting with the current one: ``PreferencesStore/changes(for:initial:)``.
    public var changes: AsyncStream<Value> {
        store.changes(for: key)
    }
}
