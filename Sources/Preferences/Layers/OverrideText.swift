import Foundation

/// How a value in an override layer reads as a key's type: as JSON, whichever layer it came from.
///
/// A launch argument or environment variable is text, and the key's type decides how to read it:
/// each key tries the text's readings in turn (see ``readings(of:)``) and takes the first that
/// decodes. A managed setting already has a type, and has one reading.
enum OverrideText {
    /// The JSON readings of a command-line text, in the order a key tries them: the Boolean a
    /// property list spells `YES` or `NO`, the JSON the text is, then the text as a string.
    static func readings(of text: String) -> [Data] {
        var readings: [Data] = []
        switch text {
        case "YES", "yes": readings.append(Data("true".utf8))
        case "NO", "no": readings.append(Data("false".utf8))
        default: break
        }
        let literal = Data(text.utf8)
        if (try? JSONSerialization.jsonObject(with: literal, options: [.fragmentsAllowed])) != nil {
            readings.append(literal)
        }
        if let string = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]) {
            readings.append(string)
        }
        return readings
    }

    /// The JSON of a value read from a JSON or property-list file; `nil` for a value JSON cannot hold.
    ///
    /// Dates become ISO 8601 text and data base64 text, which is how a key reads them.
    static func json(for object: Any) -> Data? {
        guard let plain = jsonObject(for: object) else { return nil }
        return try? JSONSerialization.data(withJSONObject: plain, options: [.fragmentsAllowed, .sortedKeys])
    }

    private static func jsonObject(for object: Any) -> Any? {
        switch object {
        case let date as Date:
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: date)
        case let data as Data:
            return data.base64EncodedString()
        case let array as [Any]:
            let items = array.compactMap(jsonObject(for:))
            return items.count == array.count ? items : nil
        case let dictionary as [String: Any]:
            let items = dictionary.compactMapValues(jsonObject(for:))
            return items.count == dictionary.count ? items : nil
        case is Bool, is String, is NSNumber, is Int, is Double:
            return object
        default:
            return nil
        }
    }

    /// Decodes a value from one reading; dates are ISO 8601, with or without fractional seconds.
    static func decode<Value: Decodable>(_ type: Value.Type, from json: Data) throws(DecodeFailure) -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let date = formatter.date(from: text) ?? ISO8601DateFormatter().date(from: text) {
                return date
            }
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "'\(text)' is not an ISO 8601 date")
        }
        do {
            return try decoder.decode(Value.self, from: json)
        } catch {
            throw .invalid(DecodeFailure.Reason(describe(error)))
        }
    }
}
