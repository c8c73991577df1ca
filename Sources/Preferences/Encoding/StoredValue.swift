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
    //
    // One side at a time, not `switch (lhs, rhs)`: the tuple would copy both values through their
    // outlined copy, on every write's check for an unchanged value.
    package static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        switch lhs {
        case .bool(let a): if case .bool(let b) = rhs { a == b } else { false }
        case .signed(let a): if case .signed(let b) = rhs { a == b } else { false }
        case .unsigned(let a): if case .unsigned(let b) = rhs { a == b } else { false }
        case .double(let a): if case .double(let b) = rhs { a.bitPattern == b.bitPattern } else { false }
        case .float(let a): if case .float(let b) = rhs { a.bitPattern == b.bitPattern } else { false }
        case .string(let a): if case .string(let b) = rhs { a == b } else { false }
        case .data(let a): if case .data(let b) = rhs { a == b } else { false }
        case .date(let a): if case .date(let b) = rhs { a.bitPattern == b.bitPattern } else { false }
        case .url(let a): if case .url(let b) = rhs { a == b } else { false }
        case .array(let a): if case .array(let b) = rhs { a == b } else { false }
        case .dictionary(let a): if case .dictionary(let b) = rhs { a == b } else { false }
        case .encoded(let a): if case .encoded(let b) = rhs { a == b } else { false }
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
