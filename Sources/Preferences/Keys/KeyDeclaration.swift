/// What a store records of a key the app declares: its schema entry, kept with the data so that
/// tools such as `prefs` know the key's type and default without the app's code.
package struct KeyDeclaration: Sendable {
    /// The namespace schema entries are stored in: reserved, like the migration ledger.
    static let schemaNamespace = "_preferences.schema"

    let key: ResolvedKey
    /// The key's value type, as Swift names it: `Int`, `Optional<Theme>`.
    package let typeName: String
    /// The kinds of stored value the key reads.
    package let kinds: [StoredKind]
    /// For a key that reads an array or a dictionary, the kinds its items may be; else empty.
    package let itemKinds: [StoredKind]
    /// The default, stored as the key would store it; `nil` for `nil` and computed defaults.
    package let defaultValue: StoredValue?
    /// Whether each store computes the default.
    package let computesDefault: Bool
    package let summary: String?
    /// The rules its values must keep.
    package let rules: [RuleDeclaration]
    /// Why a stored value does not read as the key's type, or `nil` if it does; the function is
    /// `nil` for a declaration read from a schema.
    let readingFailure: (@Sendable (StoredValue) -> DecodeFailure?)?

    /// The key's namespace as stored: the app namespace's stored name, `""` for the global one.
    package var namespace: String { key.namespace }
    package var name: String { key.name }

    /// Where the entry is stored: one per declared key, named by the key's namespace and name.
    var schemaKey: ResolvedKey {
        ResolvedKey(namespace: Self.schemaNamespace, name: "\(key.namespace):\(key.name)")
    }

    /// The entry as stored: a dictionary, which any backend holds natively.
    var schemaValue: StoredValue {
        var fields: [String: StoredValue] = [
            "namespace": .string(key.namespace),
            "name": .string(key.name),
            "type": .string(typeName),
            "kinds": .array(kinds.map { .string($0.rawValue) }),
            "itemKinds": .array(itemKinds.map { .string($0.rawValue) }),
            "computesDefault": .bool(computesDefault),
        ]
        fields["default"] = defaultValue
        fields["summary"] = summary.map(StoredValue.string)
        if !rules.isEmpty {
            fields["rules"] = .array(rules.map(\.schemaValue))
        }
        return .dictionary(fields)
    }
}

extension KeyDeclaration {
    /// Reads a schema entry back, as a tool does; `nil` if it is not one.
    package init?(schemaValue: StoredValue) {
        guard case .dictionary(let fields) = schemaValue,
            case .string(let namespace)? = fields["namespace"], case .string(let name)? = fields["name"],
            case .string(let typeName)? = fields["type"], case .array(let kinds)? = fields["kinds"]
        else { return nil }
        self.init(
            key: ResolvedKey(namespace: namespace, name: name),
            typeName: typeName,
            kinds: Self.kinds(in: kinds),
            itemKinds: { if case .array(let kinds)? = fields["itemKinds"] { Self.kinds(in: kinds) } else { [] } }(),
            defaultValue: fields["default"],
            computesDefault: fields["computesDefault"] == .bool(true),
            summary: { if case .string(let summary)? = fields["summary"] { summary } else { nil } }(),
            rules: {
                if case .array(let rules)? = fields["rules"] { rules.compactMap(RuleDeclaration.init) } else { [] }
            }(),
            readingFailure: nil
        )
    }
}

extension KeyDeclaration {
    /// The kinds a schema entry lists, leaving out any a later version added.
    private static func kinds(in list: [StoredValue]) -> [StoredKind] {
        list.compactMap { if case .string(let kind) = $0 { StoredKind(rawValue: kind) } else { nil } }
    }
}

extension ResolvedKey {
    /// Whether the key holds a schema entry.
    var isSchemaEntry: Bool {
        namespace == KeyDeclaration.schemaNamespace
    }
}
