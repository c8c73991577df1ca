import Foundation

/// Reading values as sindresorhus/Defaults stores what `UserDefaults` cannot hold natively.
///
/// Its `CodableBridge` stores a `Codable` value (a URL and a `Codable` enum included) as the JSON
/// text of the value, in a string: `"{\"age\":3}"`, `"\"dark\""`, `"\"https:\\/\\/example.com\""`.
/// Arrays, sets and dictionaries of such values are arrays and dictionaries of such strings. These
/// readings come after the plain ones, so a string that is someone's text stays text for a
/// `String` key.
enum DefaultsLibraryValue {
    /// What the object means if Defaults wrote it: its JSON as a `Codable` value, and a JSON
    /// string unwrapped as text or a URL, item by item in an array or dictionary.
    static func candidates(for object: Any) -> [StoredValue] {
        guard let plain = PropertyListValue.candidates(for: object).first else { return [] }
        var candidates: [StoredValue] = []
        if let json = jsonText(of: plain) {
            candidates.append(.encoded(Data(json.utf8)))
        }
        if let text = eachItem(of: plain, unwrappedJSONString) {
            candidates.append(text)
            if let url = eachItem(of: text, url) {
                candidates.append(url)
            }
        }
        return candidates
    }

    /// The JSON a value holds: a string of JSON text, or an array or dictionary of them.
    private static func jsonText(of value: StoredValue) -> String? {
        switch value {
        case .string(let text):
            let isJSON = (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)) != nil
            return isJSON ? text : nil
        case .array(let items):
            var texts: [String] = []
            for item in items {
                guard let json = jsonText(of: item) else { return nil }
                texts.append(json)
            }
            return "[" + texts.joined(separator: ",") + "]"
        case .dictionary(let items):
            var members: [String] = []
            for (name, item) in items.sorted(by: { $0.key < $1.key }) {
                guard let json = jsonText(of: item), let quotedName = quoted(name) else { return nil }
                members.append(quotedName + ":" + json)
            }
            return "{" + members.joined(separator: ",") + "}"
        default:
            return nil
        }
    }

    /// `transform` of a value that is not an array or dictionary, and else of each of its items;
    /// `nil` if `transform` gives `nil` for any.
    private static func eachItem(of value: StoredValue, _ transform: (StoredValue) -> StoredValue?) -> StoredValue? {
        switch value {
        case .array(let items):
            var results: [StoredValue] = []
            for item in items {
                guard let result = eachItem(of: item, transform) else { return nil }
                results.append(result)
            }
            return .array(results)
        case .dictionary(let items):
            var results: [String: StoredValue] = [:]
            for (name, item) in items {
                guard let result = eachItem(of: item, transform) else { return nil }
                results[name] = result
            }
            return .dictionary(results)
        default:
            return transform(value)
        }
    }

    /// The text of a string that is a JSON string literal.
    private static func unwrappedJSONString(_ value: StoredValue) -> StoredValue? {
        guard case .string(let literal) = value, literal.hasPrefix("\""),
            let text = try? JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed)
                as? String
        else { return nil }
        return .string(text)
    }

    /// Text read as a URL, where it is an absolute one.
    private static func url(_ value: StoredValue) -> StoredValue? {
        guard case .string(let text) = value, let url = URL(string: text), url.scheme != nil else { return nil }
        return .url(url.absoluteString)
    }

    private static func quoted(_ text: String) -> String? {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) }
    }
}
