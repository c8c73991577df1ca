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

    /// The store given when the property was made, if one was.
    private let givenStore: PreferencesStore?

    /// The store the property reads and writes: the one it was given, or else
    /// ``PreferencesStore/current`` as of now.
    public var store: PreferencesStore {
        givenStore ?? .current
    }

    /// Creates a property backed by a key of a store.
    ///
    /// - Parameters:
    ///   - key: The key the property reads and writes.
    ///   - store: The store; if you give none, ``PreferencesStore/current`` each time the property
    ///     is read or written: the standard store, unless a test bound its own.
    public init(_ key: PreferenceKey<Value>, store: PreferencesStore? = nil) {
        self.key = key
        givenStore = store
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

    /// Removes the key's stored value, so that the property reads the key's default (or an
    /// override layer's value).
    ///
    /// As setting the property does, it reports a removal that cannot be written through
    /// ``PreferencesStore/errors`` rather than throwing; use ``PreferencesStore/reset(_:)`` to
    /// handle the error yourself.
    public func reset() {
        let store = store
        do throws(PreferencesError) {
            try store.remove(key)
        } catch {
            store.errorChannel.report(error)
        }
    }
}
