import Foundation

extension ValueText {
    /// Parses an array or dictionary from the JSON text `prefs read` prints for one.
    ///
    /// JSON has no dates, URLs or data, and prints `1.0` as `1`: each item reads as the item in
    /// the same place of `template` (the entry it replaces, or the key's default) does, a date from
    /// ISO 8601 text, data from base64, a whole number as a `Double`; with nothing to follow, an
    /// item reads as JSON names it.
    ///
    /// - Parameters:
    ///   - text: JSON text holding an array or an object.
    ///   - type: `array` or `dictionary`.
    ///   - template: A value whose items show what each item is stored as; `nil` for none.
    /// - Returns: The value.
    /// - Throws: A ``Failure`` when the text is not JSON of that shape, or an item does not read.
    package static func parseCollection(
        _ text: String, as type: String, like template: StoredValue?
    ) throws(Failure) -> StoredValue {
        let node: JSONNode
        do {
            node = try JSONDecoder().decode(JSONNode.self, from: Data(text.utf8))
        } catch {
            throw Failure(message: "'\(text)' is not JSON.")
        }
        switch (node, type) {
        case (.array, "array"), (.object, "dictionary"):
            return try stored(node, like: template)
        default:
            throw Failure(message: "'\(text)' is not \(type == "array" ? "a JSON array" : "a JSON object").")
        }
    }

    /// One JSON item as a stored value, read as `template` is stored where it gives a kind.
    private static func stored(_ node: JSONNode, like template: StoredValue?) throws(Failure) -> StoredValue {
        switch (node, template) {
        case (.null, _):
            throw Failure(message: "null cannot be stored: leave the item out.")
        case (.bool(let flag), _):
            return .bool(flag)
        case (.string(let text), .date?):
            return try parse(text, as: "date")
        case (.string(let text), .url?):
            return try parse(text, as: "url")
        case (.string(let text), .data?):
            return try parse(text, as: "data")
        case (.string(let text), _):
            return .string(text)
        case (.integer(let number), .double?):
            return .double(Double(number))
        case (.integer(let number), .float?):
            return .float(Float(number))
        case (.number(let number), .float?):
            return .float(Float(number))
        case (.integer(let number), .unsigned?):
            guard let unsigned = UInt64(exactly: number) else {
                throw Failure(message: "\(number) is not an unsigned integer.")
            }
            return .unsigned(unsigned)
        case (.integer(let number), _):
            return .signed(number)
        case (.unsigned(let number), _):
            return .unsigned(number)
        case (.number(let number), _):
            return .double(number)
        case (.array(let items), _):
            let itemTemplate: StoredValue? = if case .array(let items)? = template { items.first } else { nil }
            return .array(
                try items.map { (item: JSONNode) throws(Failure) in try stored(item, like: itemTemplate) })
        case (.object(let items), _):
            let templates: [String: StoredValue] = if case .dictionary(let items)? = template { items } else { [:] }
            var values: [String: StoredValue] = [:]
            for (name, item) in items {
                // An item of the same name shows what this one is; else any item does, the same
                // one each time.
                let itemTemplate = templates[name] ?? templates.min { $0.key < $1.key }?.value
                values[name] = try stored(item, like: itemTemplate)
            }
            return .dictionary(values)
        }
    }
}

/// A JSON value as JSON names it, read with `JSONDecoder` so that `true` never reads as `1`.
private enum JSONNode: Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            // `-0` is a number JSON writes for -0.0, and reads as the integer 0: keep its sign.
            let isNegativeZero = number == 0 && (try? container.decode(Double.self))?.sign == .minus
            self = isNegativeZero ? .number(-0.0) : .integer(number)
        } else if let number = try? container.decode(UInt64.self) {
            self = .unsigned(number)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let items = try? container.decode([JSONNode].self) {
            self = .array(items)
        } else {
            self = .object(try container.decode([String: JSONNode].self))
        }
    }
}
