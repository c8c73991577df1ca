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
            output.raw(try Self.managedSkeleton(of: declarations))
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

    /// The `--type` names of the kinds a declaration reads, the one it stores first: a `Codable`
    /// key stores JSON, though it also reads data.
    static func typeNames(of declaration: KeyDeclaration) -> [String] {
        var names: [String] = []
        let kinds = declaration.kinds.contains(.encoded) ? [.encoded] + declaration.kinds : declaration.kinds
        for kind in kinds {
            let name = ValueText.typeName(of: kind.sample)
            if !names.contains(name) {
                names.append(name)
            }
        }
        return names
    }

    /// A value whose items show what a declared array's or dictionary's items are stored as: the
    /// default, if it has items, else one item of the first kind the key reads.
    static func itemTemplate(of declaration: KeyDeclaration) -> StoredValue? {
        switch declaration.defaultValue {
        case .array(let items)? where !items.isEmpty: return declaration.defaultValue
        case .dictionary(let items)? where !items.isEmpty: return declaration.defaultValue
        default: break
        }
        guard let item = declaration.itemKinds.first?.sample else { return nil }
        return declaration.kinds.contains(.array) ? .array([item]) : .dictionary(["item": item])
    }

    /// The type name of the first item of an array or dictionary whose kind the declared key's
    /// items cannot be; `nil` when every item's can, or the schema does not say.
    static func unreadableItem(of value: StoredValue, for declaration: KeyDeclaration) -> String? {
        let items: [StoredValue] =
            switch value {
            case .array(let items): items
            case .dictionary(let items): Array(items.values)
            default: []
            }
        guard !declaration.itemKinds.isEmpty else { return nil }
        return items.first { !declaration.itemKinds.contains($0.kind) }.map(ValueText.typeName)
    }

    /// A rule as an administrator or a tool writes values: its bounds and values as stored, so that
    /// an enum's allowed values read as the raw values to write, not as Swift names its cases.
    static func ruleText(_ rule: RuleDeclaration) -> String {
        switch rule.check {
        case .range(let lower?, let upper?): "between \(ValueText.text(lower)) and \(ValueText.text(upper))"
        case .range(let lower?, nil): "at least \(ValueText.text(lower))"
        case .range(nil, let upper?): "at most \(ValueText.text(upper))"
        case .rangeBelow(let lower?, let limit):
            "at least \(ValueText.text(lower)) and below \(ValueText.text(limit))"
        case .rangeBelow(nil, let limit): "below \(ValueText.text(limit))"
        case .allowed(let values): "one of " + values.map(ValueText.text).joined(separator: ", ")
        case .range(nil, nil), .maximumCount, .predicate: rule.description
        }
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
        if !declaration.rules.isEmpty {
            object["rules"] = declaration.rules.map(ruleObject)
        }
        return object
    }

    /// A rule as the JSON schema shows it: in words, and in values where a tool can check it.
    private static func ruleObject(_ rule: RuleDeclaration) -> [String: Any] {
        var object: [String: Any] = ["rule": ruleText(rule)]
        switch rule.check {
        case .range(let lower, let upper):
            object["minimum"] = lower.map(ValueText.exported)
            object["maximum"] = upper.map(ValueText.exported)
        case .rangeBelow(let lower, let limit):
            object["minimum"] = lower.map(ValueText.exported)
            object["below"] = ValueText.exported(limit)
        case .allowed(let values):
            object["allowed"] = values.map(ValueText.exported)
        case .maximumCount(let maximum):
            object["maximumCount"] = maximum
        case .predicate:
            break
        }
        return object
    }

    /// A property list of the managed settings an administrator can fill in.
    ///
    /// Each key with a fixed default holds it, and a comment names the keys left out because no
    /// default could stand for them. Every key left in the file is forced, so the skeleton never
    /// invents a value.
    private static func managedSkeleton(of declarations: [KeyDeclaration]) throws(ToolError) -> String {
        var skeleton: [String: Any] = [:]
        var leftOut: [String] = []
        var rules: [String: String] = [:]
        for declaration in declarations {
            let key = storedKey(of: declaration)
            // Managed settings name app and global keys plainly, as launch arguments do.
            let name = key.namespace == .app || key.namespace == .global ? key.name : key.description
            let ruleList = declaration.rules.map(ruleText).joined(separator: "; ")
            if !declaration.computesDefault, let value = declaration.defaultValue {
                skeleton[name] = propertyListObject(for: value)
                if !ruleList.isEmpty {
                    rules[name] = ruleList
                }
            } else {
                leftOut.append("\(name) (\(declaration.typeName)" + (ruleList.isEmpty ? ")" : ", \(ruleList))"))
            }
        }
        guard let data = try? PropertyListSerialization.data(fromPropertyList: skeleton, format: .xml, options: 0)
        else {
            throw ToolError(.storeFailed, "the schema cannot be written as a property list.")
        }
        var comment = [
            "Every key left in this file is forced: the app cannot change it.",
            "Delete the keys you do not mean to manage.",
        ]
        if !leftOut.isEmpty {
            comment.append("Left out, having no fixed default: " + leftOut.joined(separator: ", ") + ".")
        }
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map(String.init)
        // Each key's rules go above it, where an administrator filling the value in sees them.
        for (name, rule) in rules {
            let keyLine = "\t<key>\(xmlEscaped(name))</key>"
            if let index = lines.firstIndex(of: keyLine) {
                lines.insert("\t" + xmlComment("\(name) must be \(rule)."), at: index)
            }
        }
        let root = lines.firstIndex { $0.hasPrefix("<plist") }.map { $0 + 1 } ?? 0
        lines.insert(contentsOf: comment.map(xmlComment), at: root)
        return lines.joined(separator: "\n")
    }

    private static func xmlComment(_ text: String) -> String {
        // A comment may not hold "--".
        "<!-- " + text.replacingOccurrences(of: "--", with: "- -") + " -->"
    }

    private static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    /// A default as a property list holds it: a `Codable` value as the dictionary or array an
    /// administrator writes, not as data.
    private static func propertyListObject(for value: StoredValue) -> Any {
        if case .encoded(let json) = value,
            let object = try? JSONSerialization.jsonObject(with: json, options: [.fragmentsAllowed])
        {
            return object
        }
        return PropertyListValue.object(for: value, envelopes: false)
    }
}
