package import Foundation

/// Stored values as text: what `prefs` prints and reads from the command line, and the typed JSON
/// of ``PreferencesStore/export()`` and `prefs export`.
package enum ValueText {
    /// Why a text does not read as a value: a sentence naming the text and what was expected.
    package struct Failure: Error {
        package let message: String
    }

    /// The type names of `--type`, and what `read` shows.
    package static func typeName(of value: StoredValue) -> String {
        switch value {
        case .bool: "bool"
        case .signed, .unsigned: "int"
        case .double, .float: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .url: "url"
        case .array: "array"
        case .dictionary: "dictionary"
        case .encoded: "json"
        }
    }

    /// A type name with its article, such as "an int" or "a date".
    package static func described(_ type: String) -> String {
        (["array", "int"].contains(type) ? "an " : "a ") + type
    }

    package static let writableTypes = [
        "bool", "int", "double", "string", "date", "data", "url", "array", "dictionary", "json",
    ]

    /// Parses a command-line value as a type, in the text `prefs read` prints for one.
    ///
    /// - Parameters:
    ///   - text: The value's text.
    ///   - type: One of ``writableTypes``.
    ///   - template: For an array or dictionary, a value whose items show what each item is stored
    ///     as (see ``parseCollection(_:as:like:)``).
    /// - Returns: The value.
    /// - Throws: A ``Failure`` naming the text and what was expected.
    package static func parse(
        _ text: String, as type: String, like template: StoredValue? = nil
    ) throws(Failure) -> StoredValue {
        func invalid(_ expectation: String) -> Failure {
            Failure(message: "'\(text)' is not \(expectation).")
        }
        switch type {
        case "bool":
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw invalid("a bool (true, false, yes, no, 1 or 0)")
            }
        case "int":
            if let value = Int64(text) { return .signed(value) }
            if let value = UInt64(text) { return .unsigned(value) }
            throw invalid("an integer")
        case "double":
            guard let value = Double(text) else { throw invalid("a number") }
            return .double(value)
        case "string":
            return .string(text)
        case "date":
            guard let date = dateFormatter.date(from: text) ?? plainDateFormatter.date(from: text) else {
                throw invalid("an ISO 8601 date, such as 2026-11-21T09:30:00Z")
            }
            return .date(date.timeIntervalSinceReferenceDate)
        case "data":
            guard let data = Data(base64Encoded: text) else { throw invalid("base64 data") }
            return .data(data)
        case "url":
            guard let url = URL(string: text), url.scheme != nil else { throw invalid("an absolute URL") }
            return .url(url.absoluteString)
        case "array", "dictionary":
            return try parseCollection(text, as: type, like: template)
        case "json":
            guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil else {
                throw invalid("JSON")
            }
            return .encoded(Data(text.utf8))
        default:
            throw Failure(message: "unknown type '\(type)': use \(writableTypes.joined(separator: ", ")).")
        }
    }

    /// A value as one line of text.
    package static func text(_ value: StoredValue) -> String {
        switch value {
        case .bool(let value): "\(value)"
        case .signed(let value): "\(value)"
        case .unsigned(let value): "\(value)"
        case .double(let value): "\(value)"
        case .float(let value): "\(value)"
        case .string(let value): value
        case .data(let value): value.base64EncodedString()
        case .date(let seconds): dateFormatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
        case .url(let value): value
        case .encoded(let data): String(decoding: data, as: UTF8.self)
        case .array, .dictionary:
            (try? JSONSerialization.data(withJSONObject: json(value), options: [.sortedKeys, .fragmentsAllowed]))
                .map { String(decoding: $0, as: UTF8.self) } ?? "?"
        }
    }

    /// A value as a JSON object for `--json` output and `export`.
    package static func json(_ value: StoredValue) -> Any {
        switch value {
        case .bool(let value): value
        case .signed(let value): value
        case .unsigned(let value): value
        case .double(let value): value.isFinite ? value : "\(value)" as Any
        case .float(let value): Double(value).isFinite ? Double(value) : "\(value)" as Any
        case .array(let items): items.map(json)
        case .dictionary(let items): items.mapValues(json)
        case .encoded(let data):
            (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
                ?? String(decoding: data, as: UTF8.self)
        case .string, .data, .date, .url: text(value)
        }
    }

    /// A value as `export` writes it, `type` and `value`, so that `import` reads back exactly what
    /// was stored: numbers as their exact text (a NaN as its bit pattern), a date with its seconds
    /// too, a `Codable` value as its JSON text, and every item of an array or dictionary the same way.
    package static func exported(_ value: StoredValue) -> [String: Any] {
        var node: [String: Any] = ["type": typeName(of: value)]
        switch value {
        case .bool(let value): node["value"] = value
        case .signed(let value): node["value"] = "\(value)"
        case .unsigned(let value): node["value"] = "\(value)"
        case .double(let value): node["value"] = exactText(value)
        case .float(let value):
            node["type"] = "float"
            node["value"] = value.isNaN ? "0x" + String(value.bitPattern, radix: 16) : "\(value)"
        case .date(let seconds):
            node["value"] = text(value)
            node["seconds"] = exactText(seconds)
        case .array(let items): node["value"] = items.map(exported)
        case .dictionary(let items): node["value"] = items.mapValues(exported)
        case .string, .data, .url, .encoded: node["value"] = text(value)
        }
        return node
    }

    private static func exactText(_ value: Double) -> String {
        value.isNaN ? "0x" + String(value.bitPattern, radix: 16) : "\(value)"
    }

    /// Reads back what ``exported(_:)`` wrote: the other half of `export` and `import`.
    package static func value(fromExported node: [String: Any]) throws(Failure) -> StoredValue {
        guard let type = node["type"] as? String, let value = node["value"] else {
            throw Failure(message: "an entry in the file has no type and value.")
        }
        func invalid() -> Failure {
            Failure(message: "a \(type) value in the file does not read as one: \(value).")
        }
        switch type {
        case "bool":
            guard let flag = value as? Bool else { throw invalid() }
            return .bool(flag)
        case "double", "float":
            guard let text = value as? String else { throw invalid() }
            if text.hasPrefix("0x"), let bits = UInt64(text.dropFirst(2), radix: 16) {
                if type == "float", let pattern = UInt32(exactly: bits) { return .float(Float(bitPattern: pattern)) }
                return .double(Double(bitPattern: bits))
            }
            if type == "float", let number = Float(text) { return .float(number) }
            guard let number = Double(text) else { throw invalid() }
            return .double(number)
        case "date":
            if let seconds = (node["seconds"] as? String).flatMap(Double.init) { return .date(seconds) }
            guard let text = value as? String else { throw invalid() }
            return try parse(text, as: type)
        case "array":
            guard let items = value as? [Any] else { throw invalid() }
            return .array(
                try items.map { (item: Any) throws(Failure) in
                    guard let item = item as? [String: Any] else { throw invalid() }
                    return try Self.value(fromExported: item)
                })
        case "dictionary":
            guard let items = value as? [String: Any] else { throw invalid() }
            var values: [String: StoredValue] = [:]
            for (name, item) in items {
                guard let item = item as? [String: Any] else { throw invalid() }
                values[name] = try Self.value(fromExported: item)
            }
            return .dictionary(values)
        case "int":
            // Written as text, so that no JSON reader rounds a large one; a plain number reads too.
            return try parse(value as? String ?? "\(value)", as: type)
        default:
            guard let text = value as? String else { throw invalid() }
            return try parse(text, as: type)
        }
    }

    nonisolated(unsafe) package static let dateFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    nonisolated(unsafe) package static let plainDateFormatter = ISO8601DateFormatter()
}
