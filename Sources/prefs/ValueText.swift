import Foundation
import Preferences

/// Stored values as `prefs` prints them and reads them from the command line.
enum ValueText {
    /// The type names of `--type`, and what `read` shows.
    static func typeName(of value: StoredValue) -> String {
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
    static func described(_ type: String) -> String {
        (["array", "int"].contains(type) ? "an " : "a ") + type
    }

    static let writableTypes = ["bool", "int", "double", "string", "date", "data", "url", "json"]

    /// Parses a command-line value as a type.
    static func parse(_ text: String, as type: String) throws(ToolError) -> StoredValue {
        func invalid(_ expectation: String) -> ToolError {
            ToolError(.usage, "'\(text)' is not \(expectation).")
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
        case "json":
            guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil else {
                throw invalid("JSON")
            }
            return .encoded(Data(text.utf8))
        default:
            throw ToolError(.usage, "unknown type '\(type)': use \(writableTypes.joined(separator: ", ")).")
        }
    }

    /// A value as one line of text.
    static func text(_ value: StoredValue) -> String {
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
    static func json(_ value: StoredValue) -> Any {
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

    /// Reads back what ``json(_:)`` wrote for a type: the other half of `export` and `import`.
    static func value(fromJSON object: Any, type: String) throws(ToolError) -> StoredValue {
        switch type {
        case "array", "dictionary":
            guard let value = PropertyListValue.candidates(for: object).first else {
                throw ToolError(.usage, "a \(type) value in the file does not read as one.")
            }
            return value
        case "json":
            guard
                let data = try? JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
            else { throw ToolError(.usage, "a json value in the file cannot be encoded.") }
            return .encoded(data)
        case "string", "data", "date", "url":
            guard let text = object as? String else {
                throw ToolError(.usage, "a \(type) value in the file is not text.")
            }
            return try parse(text, as: type)
        default:
            return try parse("\(object)", as: type)
        }
    }

    nonisolated(unsafe) static let dateFormatter: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    nonisolated(unsafe) static let plainDateFormatter = ISO8601DateFormatter()
}
