import Foundation

/// Converts between stored values and property-list objects, as `UserDefaults` and plist files
/// hold them.
///
/// A property list does not say what type a value was written as: a `1` may be a `Bool`, an
/// integer or a `Double` to whoever reads it. ``candidates(for:)`` lists what an object can mean,
/// most natural first, and the key it is read for picks the first that its type accepts: a stored
/// `1` becomes `true` for a `Bool` key and `1` for an `Int` key, and `4.7` fits no integer key.
package enum PropertyListValue {
    /// The single-entry dictionaries that carry a value `UserDefaults` cannot hold with its type.
    static let urlEnvelope = "_preferences.url"
    static let dateEnvelope = "_preferences.date"
    /// A `Double` or `Float` a property list cannot hold exactly (`-0.0`, NaN with its payload,
    /// infinities), as its bit pattern.
    static let doubleEnvelope = "_preferences.double"
    static let floatEnvelope = "_preferences.float"

    /// What a property-list object can mean, most natural first; empty for an object no stored
    /// value can be made of.
    package static func candidates(for boxed: Any) -> [StoredValue] {
        // Foundation on Linux hands property-list values over as `Optional<Any>` inside `Any`.
        guard let object = unwrapped(boxed) else { return [] }
        if let number = Number(object) {
            return number.candidates
        }
        switch object {
        case let string as String:
            var candidates: [StoredValue] = [.string(string)]
            if let url = URL(string: string), url.scheme != nil {
                candidates.append(.url(url.absoluteString))
            }
            return candidates
        case let data as Data:
            return [.data(data), .encoded(data)]
        case let date as Date:
            return [.date(date.timeIntervalSinceReferenceDate)]
        case let url as URL:
            return [.url(url.absoluteString)]
        case let array as [Any]:
            let items = array.compactMap { candidates(for: $0).first }
            return items.count == array.count ? [.array(items)] : []
        case let dictionary as [String: Any]:
            if dictionary.count == 1, let string = dictionary[urlEnvelope] as? String {
                return [.url(string)]
            }
            if dictionary.count == 1, let inner = dictionary[dateEnvelope],
                case .double(let seconds)? = candidates(for: inner).first
            {
                return [.date(seconds)]
            }
            if dictionary.count == 1, let inner = dictionary[doubleEnvelope],
                case .signed(let bits)? = candidates(for: inner).first
            {
                return [.double(Double(bitPattern: UInt64(bitPattern: bits)))]
            }
            if dictionary.count == 1, let inner = dictionary[floatEnvelope],
                case .signed(let bits)? = candidates(for: inner).first, let pattern = UInt32(exactly: bits)
            {
                return [.float(Float(bitPattern: pattern))]
            }
            var items: [String: StoredValue] = [:]
            for (key, value) in dictionary {
                guard let item = candidates(for: value).first else { return [] }
                items[key] = item
            }
            return [.dictionary(items)]
        case let dictionary as [AnyHashable: Any]:
            // Nested dictionaries from property-list parsing on Linux; only string keys are valid.
            var strings: [String: Any] = [:]
            for (key, value) in dictionary {
                guard let key = key.base as? String else { return [] }
                strings[key] = value
            }
            return candidates(for: strings)
        default:
            return []
        }
    }

    /// The property-list object for a stored value, as the `UserDefaults` backend writes it.
    ///
    /// Natively where a property list holds the value exactly; in an envelope where it does not:
    /// URLs everywhere (Linux keeps only a URL's path), dates on Linux (its XML property lists
    /// drop fractions of a second), and `-0.0`, NaNs and infinities (which lose their sign, their
    /// payload, or the reading back as a `Float`).
    ///
    /// With `envelopes` off, every value is written as the property list's own type, as a person
    /// reading a property list expects: what the format cannot hold is then lost.
    package static func object(for value: StoredValue, envelopes: Bool = true) -> Any {
        switch value {
        case .bool(let value): value
        case .signed(let value): value
        case .unsigned(let value): value
        case .double(let value):
            envelopes && !isExact(value) ? [doubleEnvelope: Int64(bitPattern: value.bitPattern)] : value
        case .float(let value):
            envelopes && !isExact(Double(value)) ? [floatEnvelope: Int64(value.bitPattern)] : Double(value)
        case .string(let value): value
        case .data(let value), .encoded(let value): value
        case .url(let string): envelopes ? [urlEnvelope: string] : string
        case .date(let seconds):
            #if canImport(Darwin)
                Date(timeIntervalSinceReferenceDate: seconds)
            #else
                envelopes ? [dateEnvelope: seconds] : Date(timeIntervalSinceReferenceDate: seconds)
            #endif
        case .array(let items): items.map { object(for: $0, envelopes: envelopes) }
        case .dictionary(let items): items.mapValues { object(for: $0, envelopes: envelopes) }
        }
    }

    /// Whether a property list holds the number exactly: finite, and not `-0.0`.
    private static func isExact(_ value: Double) -> Bool {
        value.isFinite && !(value == 0 && value.sign == .minus)
    }

    private static func unwrapped(_ object: Any) -> Any? {
        guard let optional = object as? any OptionalValue else { return object }
        return optional.wrappedValue.flatMap(unwrapped)
    }

    /// A number from a property list, classified as the platform's Foundation reports it.
    private enum Number {
        case bool(Bool)
        case signed(Int64)
        case unsigned(UInt64)
        case double(Double)

        init?(_ object: Any) {
            // A Bool first: on Apple platforms it is the CFBoolean singleton, on Linux a Swift `Bool`.
            #if canImport(Darwin)
                guard let number = object as? NSNumber else { return nil }
                if CFGetTypeID(number) == CFBooleanGetTypeID() {
                    self = .bool(number.boolValue)
                    return
                }
            #else
                if type(of: object) == Bool.self, let value = object as? Bool {
                    self = .bool(value)
                    return
                }
                // Swift numbers bridge to NSNumber, and property-list parsing makes NSNumbers.
                guard let number = object as? NSNumber else { return nil }
            #endif
            switch UInt8(bitPattern: number.objCType.pointee) {
            case UInt8(ascii: "f"), UInt8(ascii: "d"):
                self = .double(number.doubleValue)
            case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"), UInt8(ascii: "S"), UInt8(ascii: "C"):
                self = .unsigned(number.uint64Value)
            default:
                self = .signed(number.int64Value)
            }
        }

        /// The natural reading first; then the others the number can mean exactly.
        var candidates: [StoredValue] {
            switch self {
            case .bool(let value):
                return [.bool(value), .signed(value ? 1 : 0)]
            case .signed(let value):
                var candidates: [StoredValue] = [.signed(value)]
                if value == 0 || value == 1 { candidates.append(.bool(value == 1)) }
                if let exact = Double(exactly: value) { candidates.append(.double(exact)) }
                return candidates
            case .unsigned(let value):
                var candidates: [StoredValue] = [.unsigned(value)]
                if value <= 1 { candidates.append(.bool(value == 1)) }
                if let exact = Double(exactly: value) { candidates.append(.double(exact)) }
                return candidates
            case .double(let value):
                var candidates: [StoredValue] = [.double(value)]
                if let exact = Int64(exactly: value) { candidates.append(.signed(exact)) }
                return candidates
            }
        }
    }
}

/// Lets a value of any `Optional` type, seen as `Any`, be unwrapped.
private protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrappedValue: Any? {
        self.map { $0 as Any }
    }
}
