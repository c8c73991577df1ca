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
        var candidates: [StoredValue] = []
        if let json = jsonText(of: object) {
            candidates.append(.encoded(Data(json.utf8)))
        }
        if let text = unwrappedText(of: object) {
            candidates.append(text)
            if let url = urlValue(of: text) {
                candidates.append(url)
            }
        }
        return candidates
    }

    /// The JSON the object holds: a string of JSON text, or an array or dictionary of them.
    private static func jsonText(of object: Any) -> String? {
        switch object {
        case let string as String:
            let isJSON = (try? JSONSerialization.jsonObject(with: Data(string.utf8), options: .fragmentsAllowed)) != nil
            return isJSON ? string : nil
        case let array as [Any]:
            var items: [String] = []
            for item in array {
                guard let json = jsonText(of: item) else { return nil }
                items.append(json)
            }
            return "[" + items.joined(separator: ",") + "]"
        case let dictionary as [String: Any]:
            var members: [String] = []
            for (name, item) in dictionary.sorted(by: { $0.key < $1.key }) {
                guard let json = jsonText(of: item), let quotedName = quoted(name) else { return nil }
                members.append(quotedName + ":" + json)
            }
            return "{" + members.joined(separator: ",") + "}"
        default:
            return nil
        }
    }

    /// A JSON string literal's text, as a stored string; arrays and dictionaries of them, item by item.
    private static func unwrappedText(of object: Any) -> StoredValue? {
        switch object {
        case let string as String:
            guard string.hasPrefix("\""),
                let text = try? JSONSerialization.jsonObject(with: Data(string.utf8), options: .fragmentsAllowed)
                    as? String
            else { return nil }
            return .string(text)
        case let array as [Any]:
            var items: [StoredValue] = []
            for item in array {
                guard let text = unwrappedText(of: item) else { return nil }
                items.append(text)
            }
            return .array(items)
        case let dictionary as [String: Any]:
            var items: [String: StoredValue] = [:]
            for (name, item) in dictionary {
                guard let text = unwrappedText(of: item) else { return nil }
                items[name] = text
            }
            return .dictionary(items)
        default:
            return nil
        }
    }

    /// Unwrapped text read as URLs, where every text is an absolute URL.
    private static func urlValue(of value: StoredValue) -> StoredValue? {
        switch value {
        case .string(let text):
            guard let url = URL(string: text), url.scheme != nil else { return nil }
            return .url(url.absoluteString)
        case .array(let items):
            var urls: [StoredValue] = []
            for item in items {
                guard let url = urlValue(of: item) else { return nil }
                urls.append(url)
            }
            return .array(urls)
        case .dictionary(let items):
            var urls: [String: StoredValue] = [:]
            for (name, item) in items {
                guard let url = urlValue(of: item) else { return nil }
                urls[name] = url
            }
            return .dictionary(urls)
        default:
            return nil
        }
    }

    private static func quoted(_ text: String) -> String? {
        (try? JSONEncoder().encode(text)).map { String(decoding: $0, as: UTF8.self) }
    }
}
