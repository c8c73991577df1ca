/// A typed, namespaced key with a default value: everything a store needs to read and write one preference.
///
/// Declare keys once, in an extension of ``PreferenceKeys``, and read them from a store with a
/// leading dot:
///
/// ```swift
/// extension PreferenceKeys {
///     static let prefersLargeText = PreferenceKey<Bool>("largeText", default: false)
///     static let theme = PreferenceKey<Theme>("theme", default: .system)   // RawRepresentable
///     static let pet = PreferenceKey<Pet?>("pet")                          // Codable, no value by default
///     static let sdkFlag = PreferenceKey<Bool>("flag", default: false, in: .custom("com.vendor.sdk"))
/// }
///
/// store[.prefersLargeText] = true
/// ```
///
/// The initialiser you call chooses how values are stored, at compile time: natively for a
/// ``DirectPreferenceValue``, as the raw value for a `RawRepresentable` type whose raw value is
/// direct, and encoded for any other `Codable` type. An optional key reads `nil` when nothing is
/// stored, unless it was given a default, and assigning `nil` removes the entry.
///
/// A key's identity is its namespace and name. Names and namespaces that are empty, contain a
/// control character or a colon, are not in Unicode Normalization Form C, or (for namespaces)
/// begin with an underscore are programming errors: declaring such a key stops the program with a
/// message naming the key and the rule. See <doc:DeclaringKeys>.
///
/// In a file that also imports SwiftUI, which has a `PreferenceKey` protocol of its own, write
/// `Preferences.PreferenceKey`, or ``PreferenceKeys/Key`` inside `extension PreferenceKeys`.
public final class PreferenceKey<Value: Sendable>: PreferenceKeys, @unchecked Sendable {
    // `@unchecked` only because `Sendable` cannot be checked for a subclass; every stored
    // property is an immutable `let` of a `Sendable` type, and the superclass has no state.

    // The fields a read or a write touches come first, before any of the generic type's, so that
    // they lie at offsets the compiler knows and within the object's first 64 bytes: a key not
    // used for a while then costs one cache line, not two (with 10,000 keys, a read or a write
    // mostly finds its key out of the caches).

    let codec: KeyCodec<Value>

    /// The key as a store whose app namespace is the default one stores it: built once, so that
    /// a read builds no key and hashes no string.
    let defaultResolvedKey: ResolvedKey

    /// Whether the key is in the app namespace, whose stored name each store chooses.
    let isInAppNamespace: Bool

    /// Whether each store computes the default with `computeDefault`, rather than using `defaultValue`.
    ///
    /// A `Bool`, so that the read path tests it without touching the optional closure.
    let hasComputedDefault: Bool

    /// The value a store returns when nothing is stored for the key, or what is stored cannot be read.
    ///
    /// For a key declared with a computed default, the value it computed when the key was created;
    /// each store computes its own, once: read it with ``PreferencesStore/defaultValue(for:)``.
    public let defaultValue: Value

    /// The key's name within its namespace.
    public let name: String

    /// The namespace the key's name lives in.
    public let namespace: PreferenceNamespace

    /// A sentence saying what the key is for, given with ``described(_:)``: the schema that
    /// ``PreferencesStore/register(_:)-(PreferenceKeys...)`` stores, and `prefs schema`, show it.
    public let summary: String?

    /// The key as the last store with another app namespace stores it, kept for the next read and
    /// write there: building it allocates the object a resolved key keeps its strings in.
    private let lastResolvedKey = Locked<ResolvedKey?>(nil)

    let computeDefault: (@Sendable () -> Value)?

    /// The rules given with ``constrained(to:)``, as the schema records them.
    let rules: [RuleDeclaration]

    /// Whether the store's history keeps the key's changes: `false` once declared ``withoutHistory()``.
    public var keepsHistory: Bool { !defaultResolvedKey.keepsNoHistory }

    /// A number no other key object of the process has (see ``KeySerials``), for `defaultResolvedKey`:
    /// a store finds the key's slot in an array by it, without hashing.
    let serial: UInt32

    init(
        name: String,
        namespace: PreferenceNamespace,
        defaultValue: Value,
        codec: KeyCodec<Value>,
        computeDefault: (@Sendable () -> Value)? = nil,
        summary: String? = nil,
        rules: [RuleDeclaration] = [],
        keepsHistory: Bool = true
    ) {
        KeyValidation.validate(name: name, namespace: namespace)
        self.name = name
        self.namespace = namespace
        self.defaultValue = defaultValue
        self.codec = codec
        self.computeDefault = computeDefault
        self.summary = summary
        self.rules = rules
        hasComputedDefault = computeDefault != nil
        defaultResolvedKey = ResolvedKey(
            namespace: namespace.resolved(appNamespace: PreferenceNamespace.defaultAppNamespace), name: name,
            encodesAhead: true, keepsNoHistory: !keepsHistory)
        serial = KeySerials.next()
        if case .app = namespace.kind {
            isInAppNamespace = true
        } else {
            isInAppNamespace = false
        }
        super.init()
    }

    private convenience init(
        name: String,
        namespace: PreferenceNamespace,
        codec: KeyCodec<Value>,
        computeDefault: @escaping @Sendable () -> Value
    ) {
        self.init(
            name: name, namespace: namespace, defaultValue: computeDefault(), codec: codec,
            computeDefault: computeDefault)
    }

    /// The same key, with a sentence saying what it is for.
    ///
    /// ```swift
    /// static let largeText = PreferenceKey<Bool>("largeText", default: false)
    ///     .described("Shows every text one size larger.")
    /// ```
    ///
    /// - Parameter summary: What the key is for, as an administrator or a tool should read it.
    /// - Returns: A key with the same name, namespace, type and default.
    public func described(_ summary: String) -> PreferenceKey<Value> {
        PreferenceKey(
            name: name, namespace: namespace, defaultValue: defaultValue, codec: codec,
            computeDefault: computeDefault, summary: summary, rules: rules, keepsHistory: keepsHistory)
    }

    /// The same key, its changes kept out of the store's history: for secrets and tokens.
    ///
    /// ```swift
    /// static let sessionToken = PreferenceKey<String?>("sessionToken").withoutHistory()
    /// ```
    ///
    /// The store still writes each change to its log, which is how it survives a crash, but never
    /// moves one into the history file, and ``PreferencesStore/history(for:)`` never shows one.
    /// Removing the key's value compacts the store at once, so that no file keeps an old value,
    /// and drops whatever history the key had from before it was declared so. See <doc:History>.
    ///
    /// - Returns: A key with the same name, namespace, type, default, summary and rules.
    public func withoutHistory() -> PreferenceKey<Value> {
        PreferenceKey(
            name: name, namespace: namespace, defaultValue: defaultValue, codec: codec,
            computeDefault: computeDefault, summary: summary, rules: rules, keepsHistory: false)
    }

    override func resolvedKey(appNamespace: String) -> ResolvedKey {
        guard isInAppNamespace, appNamespace != PreferenceNamespace.defaultAppNamespace else {
            return defaultResolvedKey
        }
        return resolvedKey(inAppNamespace: appNamespace)
    }

    /// The key as a store whose app namespace is `appNamespace`, not the default one, stores it.
    func resolvedKey(inAppNamespace appNamespace: String) -> ResolvedKey {
        if let last = lastResolvedKey.withLock({ $0 }), last.namespace == appNamespace {
            return last
        }
        let key = defaultResolvedKey.inNamespace(appNamespace)
        lastResolvedKey.withLock { $0 = key }
        return key
    }

    override func declaration(appNamespace: String) -> KeyDeclaration {
        let codec = codec
        return KeyDeclaration(
            key: resolvedKey(appNamespace: appNamespace),
            typeName: typeName(Value.self),
            kinds: codec.acceptedKinds,
            itemKinds: codec.acceptedItemKinds,
            defaultValue: hasComputedDefault ? nil : (try? codec.encode(defaultValue)) ?? nil,
            computesDefault: hasComputedDefault,
            summary: summary,
            rules: rules,
            readingFailure: { stored in
                do throws(DecodeFailure) {
                    _ = try codec.decode(stored)
                    return nil
                } catch {
                    return error
                }
            }
        )
    }
}

extension PreferenceKey {
    /// Creates a key of a type the store keeps natively whose default each store computes, once.
    ///
    /// ```swift
    /// static let firstSeen = PreferenceKey<Date>("firstSeen") { .now }
    /// ```
    ///
    /// A store calls `makeDefault` the first time it needs the default and keeps what it returned
    /// for as long as it is open; nothing is stored until you write the key. The key's
    /// ``defaultValue`` is one value computed when the key was created.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    ///   - makeDefault: Computes the default.
    public convenience init(
        _ name: String, in namespace: PreferenceNamespace = .app, default makeDefault: @escaping @Sendable () -> Value
    ) where Value: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, codec: .direct, computeDefault: makeDefault)
    }

    /// Creates a key of a `RawRepresentable` type whose default each store computes, once.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    ///   - makeDefault: Computes the default.
    public convenience init(
        _ name: String, in namespace: PreferenceNamespace = .app, default makeDefault: @escaping @Sendable () -> Value
    ) where Value: RawRepresentable, Value.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, codec: .rawValue, computeDefault: makeDefault)
    }

    /// Creates a key of a `Codable` type whose default each store computes, once.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    ///   - makeDefault: Computes the default.
    @_disfavoredOverload
    public convenience init(
        _ name: String, in namespace: PreferenceNamespace = .app, default makeDefault: @escaping @Sendable () -> Value
    ) where Value: Codable {
        self.init(name: name, namespace: namespace, codec: .codable, computeDefault: makeDefault)
    }

    /// Creates a key of a `RawRepresentable` and `Codable` type, stored as its raw value, whose
    /// default each store computes, once.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    ///   - makeDefault: Computes the default.
    public convenience init(
        _ name: String, in namespace: PreferenceNamespace = .app, default makeDefault: @escaping @Sendable () -> Value
    ) where Value: RawRepresentable & Codable, Value.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, codec: .rawValue, computeDefault: makeDefault)
    }
}

extension PreferenceKey {
    /// Creates a key for a type the store keeps natively, such as `Bool`, `Int`, `String`, `Date` or `URL`.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init(_ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app)
    where Value: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .direct)
    }

    /// Creates a key for a `RawRepresentable` type, stored as its raw value.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init(_ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app)
    where Value: RawRepresentable, Value.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .rawValue)
    }

    // Disfavoured: `Optional` is `Codable` too, and Swift prefers this non-generic initialiser to
    // the optional ones below, which would store an optional key's `nil` as JSON `null`.

    /// Creates a key for a `Codable` type, stored encoded as JSON.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    @_disfavoredOverload
    public convenience init(_ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app)
    where Value: Codable {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .codable)
    }

    /// Creates a key for a type that is both `RawRepresentable` and `Codable`, stored as its raw value.
    ///
    /// The raw value is the smaller and more readable form, and it is what `@AppStorage` stores.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init(_ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app)
    where Value: RawRepresentable & Codable, Value.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .rawValue)
    }
}

extension PreferenceKey {
    /// Creates a key for an optional value of a type the store keeps natively; `nil` when nothing is stored.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(_ name: String, in namespace: PreferenceNamespace = .app)
    where Value == Wrapped?, Wrapped: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: nil, codec: .optional(.direct))
    }

    /// Creates a key for an optional `RawRepresentable` value, stored as its raw value; `nil` when nothing is stored.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(_ name: String, in namespace: PreferenceNamespace = .app)
    where Value == Wrapped?, Wrapped: RawRepresentable, Wrapped.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: nil, codec: .optional(.rawValue))
    }

    /// Creates a key for an optional `Codable` value, stored encoded as JSON; `nil` when nothing is stored.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(_ name: String, in namespace: PreferenceNamespace = .app)
    where Value == Wrapped?, Wrapped: Codable {
        self.init(name: name, namespace: namespace, defaultValue: nil, codec: .optional(.codable))
    }

    /// Creates a key for an optional value that is both `RawRepresentable` and `Codable`, stored as its raw value.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(_ name: String, in namespace: PreferenceNamespace = .app)
    where Value == Wrapped?, Wrapped: RawRepresentable & Codable, Wrapped.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: nil, codec: .optional(.rawValue))
    }
}

extension PreferenceKey {
    /// Creates a key for an optional value of a type the store keeps natively, with a default.
    ///
    /// Storing `nil` removes the stored value, so a read then returns `defaultValue`, not `nil`.
    /// The value is stored as a non-optional key's would be.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(
        _ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app
    )
    where Value == Wrapped?, Wrapped: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .optional(.direct))
    }

    /// Creates a key for an optional `RawRepresentable` value, stored as its raw value, with a default.
    ///
    /// Storing `nil` removes the stored value, so a read then returns `defaultValue`, not `nil`.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(
        _ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app
    )
    where Value == Wrapped?, Wrapped: RawRepresentable, Wrapped.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .optional(.rawValue))
    }

    /// Creates a key for an optional `Codable` value, stored encoded as JSON, with a default.
    ///
    /// Storing `nil` removes the stored value, so a read then returns `defaultValue`, not `nil`;
    /// `nil` is never stored as JSON `null`.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(
        _ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app
    )
    where Value == Wrapped?, Wrapped: Codable {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .optional(.codable))
    }

    /// Creates a key for an optional value that is both `RawRepresentable` and `Codable`, stored as
    /// its raw value, with a default.
    ///
    /// Storing `nil` removes the stored value, so a read then returns `defaultValue`, not `nil`.
    ///
    /// - Parameters:
    ///   - name: The key's name within its namespace.
    ///   - defaultValue: The value read when nothing is stored.
    ///   - namespace: Where the name lives; the app's own namespace unless you say otherwise.
    public convenience init<Wrapped>(
        _ name: String, default defaultValue: Value, in namespace: PreferenceNamespace = .app
    )
    where Value == Wrapped?, Wrapped: RawRepresentable & Codable, Wrapped.RawValue: DirectPreferenceValue {
        self.init(name: name, namespace: namespace, defaultValue: defaultValue, codec: .optional(.rawValue))
    }
}

extension PreferenceKey: CustomStringConvertible {
    /// The key as `namespace:name`, such as `app:theme`.
    public var description: String { "\(namespace):\(name)" }
}
