package import Foundation

/// The tagged form in which every backend keeps a value.
///
/// The tag is what lets a read of the wrong type be detected rather than coerced: a `String` is
/// never read as a `Bool`, an integer never as a `Double`, an encoded struct never as an integer.
package enum StoredValue: Sendable {
    case bool(Bool)
    /// Every signed integer type, widened.
    case signed(Int64)
    /// Every unsigned integer type, widened.
    case unsigned(UInt64)
    case double(Double)
    case float(Float)
    case string(String)
    case data(Data)
    /// Seconds since the reference date, exactly as `Date` holds them.
    case date(Double)
    /// The URL's absolute string, so that every part of it round-trips.
    case url(String)
    case array([StoredValue])
    case dictionary([String: StoredValue])
    /// A `Codable` value, encoded as JSON.
    case encoded(Data)

    /// What is stored, in words, for error messages.
    package var kindDescription: String {
        switch self {
        case .bool: "Bool"
        case .signed: "signed integer"
        case .unsigned: "unsigned integer"
        case .double: "Double"
        case .float: "Float"
        case .string: "String"
        case .data: "Data"
        case .date: "Date"
        case .url: "URL"
        case .array: "array"
        case .dictionary: "dictionary"
        case .encoded: "encoded Codable value"
        }
    }
}

extension StoredValue: Equatable {
    // Floating-point values compare by bit pattern: `-0.0` must not count as the `0.0` already
    // stored (a write would be skipped and the sign lost), and a NaN equals itself.
    package static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.signed(let a), .signed(let b)): a == b
        case (.unsigned(let a), .unsigned(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.date(let a), .date(let b)): a.bitPattern == b.bitPattern
        case (.url(let a), .url(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.dictionary(let a), .dictionary(let b)): a == b
        case (.encoded(let a), .encoded(let b)): a == b
        default: false
        }
    }
}

/// The kinds of stored value: what a declared key's schema records it reads, and what `prefs`
/// checks a value against.
package enum StoredKind: String, CaseIterable, Sendable {
    case bool, signed, unsigned, double, float, string, data, date, url, array, dictionary, encoded

    /// A value of this kind, for finding out whether a key reads it.
    package var sample: StoredValue {
        switch self {
        case .bool: .bool(false)
        case .signed: .signed(0)
        case .unsigned: .unsigned(0)
        case .double: .double(0)
        case .float: .float(0)
        case .string: .string("")
        case .data: .data(Data())
        case .date: .date(0)
        case .url: .url("about:blank")
        case .array: .array([])
        case .dictionary: .dictionary([:])
        case .encoded: .encoded(Data("{}".utf8))
        }
    }
}

extension StoredValue {
    /// The value's kind.
    package var kind: StoredKind {
        switch self {
        case .bool: .bool
        case .signed: .signed
        case .unsigned: .unsigned
        case .double: .double
        case .float: .float
        case .string: .string
        case .data: .data
        case .date: .date
        case .url: .url
        case .array: .array
        case .dictionary: .dictionary
        case .encoded: .encoded
        }
    }
}
