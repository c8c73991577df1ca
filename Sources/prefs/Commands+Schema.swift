import Foundation
import Preferences

extension Commands {
    /// Prints the schema the app stored with `register`: as JSON, or as a skeleton of the managed
    /// app configuration an administrator fills in.
    mutating func schema() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let declarations = store.declaredKeys()
        guard !declarations.isEmpty else {
            throw ToolError(.notFound, "the store holds no schema: the app has not registered its keys.")
        }
        switch invocation.format ?? "json" {
        case "json":
            output.raw(Output.jsonText(declarations.map(Self.schemaObject)))
        case "plist":
            var skeleton: [String: Any] = [:]
            for declaration in declarations {
                let key = Self.storedKey(of: declaration)
                // Managed settings name app and global keys plainly, as launch arguments do.
                let name = key.namespace == .app || key.namespace == .global ? key.name : key.description
                skeleton[name] = Self.skeletonValue(for: declaration)
            }
            guard let data = try? PropertyListSerialization.data(fromPropertyList: skeleton, format: .xml, options: 0)
            else {
                throw ToolError(.storeFailed, "the schema cannot be written as a property list.")
            }
            output.raw(String(decoding: data, as: UTF8.self))
        case let other:
            throw ToolError(.usage, "unknown format '\(other)': use json or plist.")
        }
        return .success
    }

    /// The declared keys' defaults, for the keys that have one and no stored value.
    static func unsetDefaults(in store: PreferencesStore) -> [(key: StoredKey, value: StoredValue)] {
        store.declaredKeys().compactMap { declaration in
            let key = storedKey(of: declaration)
            guard store.storedValue(at: key) == nil, let value = declaration.defaultValue else { return nil }
            return (key, value)
        }
    }

    /// The declaration of a key, if the app registered it.
    static func declaration(of key: StoredKey, in store: PreferencesStore) -> KeyDeclaration? {
        store.declaredKeys().first { storedKey(of: $0) == key }
    }

    /// The `--type` names of the kinds a declaration reads.
    static func typeNames(of declaration: KeyDeclaration) -> [String] {
        var names: [String] = []
        for kind in declaration.kinds {
            let name = ValueText.typeName(of: kind.sample)
            if !names.contains(name) {
                names.append(name)
            }
        }
        return names
    }

    static func storedKey(of declaration: KeyDeclaration) -> StoredKey {
        StoredKey(declaration.name, in: Invocation.namespace(declaration.namespace))
    }

    private static func schemaObject(_ declaration: KeyDeclaration) -> [String: Any] {
        var object: [String: Any] = [
            "key": storedKey(of: declaration).description,
            "type": declaration.typeName,
            "reads": typeNames(of: declaration),
            "computesDefault": declaration.computesDefault,
        ]
        object["default"] = declaration.defaultValue.map(ValueText.exported)
        object["summary"] = declaration.summary
        return object
    }

    /// The default as a property list holds it, or an empty value of the key's first kind.
    private static func skeletonValue(for declaration: KeyDeclaration) -> Any {
        if let value = declaration.defaultValue {
            if case .encoded(let json) = value,
                let object = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
            {
                return object
            }
            return PropertyListValue.object(for: value, envelopes: false)
        }
        // A `Codable` value reads data too, but an administrator writes it as a dictionary.
        switch declaration.kinds.contains(.encoded) ? .encoded : declaration.kinds.first {
        case .bool: return false
        case .signed, .unsigned: return 0
        case .double, .float: return 0.0
        case .data: return Data()
        case .date: return Date(timeIntervalSinceReferenceDate: 0)
        case .array: return [Any]()
        case .dictionary, .encoded: return [String: Any]()
        case .string, .url, nil: return ""
        }
    }
}
