public import Foundation

// Each integer type widens to 64 bits on write and reads back only when the stored number fits:
// an out-of-range number is a type mismatch, never a truncated or wrapped value.
extension _DirectCodec where Value: FixedWidthInteger & Sendable {
    static var integer: _DirectCodec<Value> {
        _DirectCodec(
            encode: { value in
                Value.isSigned ? .signed(Int64(value)) : .unsigned(UInt64(value))
            },
            decode: { stored throws(DecodeFailure) in
                let value: Value? =
                    switch stored {
                    case .signed(let number): Value(exactly: number)
                    case .unsigned(let number): Value(exactly: number)
                    default: nil
                    }
                guard let value else { throw .mismatch }
                return value
            },
            isScalar: true
        )
    }
}

extension _DirectCodec {
    /// A codec for a type whose decoding costs little; `decode` returns `nil` for a mismatch.
    static func scalar(
        encode: @escaping @Sendable (Value) -> StoredValue,
        decode: @escaping @Sendable (StoredValue) -> Value?
    ) -> _DirectCodec {
        _DirectCodec(
            encode: encode,
            decode: { stored throws(DecodeFailure) in
                guard let value = decode(stored) else { throw .mismatch }
                return value
            },
            isScalar: true
        )
    }
}

extension Bool: DirectPreferenceValue {
    /// Stores a `Bool` as a Boolean, never as a number.
    public static var _preferenceCodec: _DirectCodec<Bool> {
        .scalar(encode: { .bool($0) }, decode: { if case .bool(let value) = $0 { value } else { nil } })
    }
}

extension Int: DirectPreferenceValue {
    /// Stores an `Int` as a 64-bit signed integer.
    public static var _preferenceCodec: _DirectCodec<Int> { .integer }
}

extension Int8: DirectPreferenceValue {
    /// Stores an `Int8` as a signed integer that reads back only if it fits.
    public static var _preferenceCodec: _DirectCodec<Int8> { .integer }
}

extension Int16: DirectPreferenceValue {
    /// Stores an `Int16` as a signed integer that reads back only if it fits.
    public static var _preferenceCodec: _DirectCodec<Int16> { .integer }
}

extension Int32: DirectPreferenceValue {
    /// Stores an `Int32` as a signed integer that reads back only if it fits.
    public static var _preferenceCodec: _DirectCodec<Int32> { .integer }
}

extension Int64: DirectPreferenceValue {
    /// Stores an `Int64` as a signed integer.
    public static var _preferenceCodec: _DirectCodec<Int64> { .integer }
}

extension UInt: DirectPreferenceValue {
    /// Stores a `UInt` as a 64-bit unsigned integer.
    public static var _preferenceCodec: _DirectCodec<UInt> { .integer }
}

extension UInt8: DirectPreferenceValue {
    /// Stores a `UInt8` as an unsigned integer that reads back only if it fits.
    public static var _preferenceCodec: _DirectCodec<UInt8> { .integer }
}

extension UInt16: DirectPreferenceValue {
    /// Stores a `UInt16` as an unsigned integer that reads back only if it fits.
    public static var _preferenceCodec: _DirectCodec<UInt16> { .integer }
}

extension UInt32: DirectPreferenceValue {
    /// Stores a `UInt32` as an unsigned integer that reads back only if it fits.
    public static var _preferenceCodec: _DirectCodec<UInt32> { .integer }
}

extension UInt64: DirectPreferenceValue {
    /// Stores a `UInt64` as an unsigned integer.
    public static var _preferenceCodec: _DirectCodec<UInt64> { .integer }
}

extension Double: DirectPreferenceValue {
    /// Stores a `Double` bit for bit; a stored `Float` reads back as the same number.
    public static var _preferenceCodec: _DirectCodec<Double> {
        .scalar(
            encode: { .double($0) },
            decode: { stored in
                switch stored {
                case .double(let value): value
                case .float(let value): Double(value)
                default: nil
                }
            }
        )
    }
}

extension Float: DirectPreferenceValue {
    /// Stores a `Float` bit for bit; a stored `Double` reads back only if a `Float` holds it exactly.
    public static var _preferenceCodec: _DirectCodec<Float> {
        .scalar(
            encode: { .float($0) },
            decode: { stored in
                switch stored {
                case .float(let value): value
                case .double(let value): Float(exactly: value)
                default: nil
                }
            }
        )
    }
}

extension String: DirectPreferenceValue {
    /// Stores a `String` as UTF-8 text.
    public static var _preferenceCodec: _DirectCodec<String> {
        .scalar(encode: { .string($0) }, decode: { if case .string(let value) = $0 { value } else { nil } })
    }
}

extension Data: DirectPreferenceValue {
    /// Stores `Data` as its bytes.
    public static var _preferenceCodec: _DirectCodec<Data> {
        .scalar(encode: { .data($0) }, decode: { if case .data(let value) = $0 { value } else { nil } })
    }
}

extension Date: DirectPreferenceValue {
    /// Stores a `Date` as its seconds since the reference date, bit for bit.
    public static var _preferenceCodec: _DirectCodec<Date> {
        .scalar(
            encode: { .date($0.timeIntervalSinceReferenceDate) },
            decode: { if case .date(let seconds) = $0 { Date(timeIntervalSinceReferenceDate: seconds) } else { nil } }
        )
    }
}

extension URL: DirectPreferenceValue {
    /// Stores a `URL` as its absolute string, so that scheme, host, query and fragment all survive.
    public static var _preferenceCodec: _DirectCodec<URL> {
        .scalar(
            encode: { .url($0.absoluteString) },
            decode: { if case .url(let string) = $0 { URL(string: string) } else { nil } }
        )
    }
}

extension Array: DirectPreferenceValue where Element: DirectPreferenceValue {
    /// Stores an array element by element; it reads back only if every element does.
    public static var _preferenceCodec: _DirectCodec<[Element]> {
        let element = Element._preferenceCodec
        return _DirectCodec(
            encode: { .array($0.map(element.encode)) },
            decode: { stored throws(DecodeFailure) in
                guard case .array(let items) = stored else { throw .mismatch }
                var result: [Element] = []
                result.reserveCapacity(items.count)
                for item in items {
                    result.append(try element.decode(item))
                }
                return result
            },
            isScalar: false
        )
    }
}

extension Dictionary: DirectPreferenceValue where Key == String, Value: DirectPreferenceValue {
    /// Stores a dictionary entry by entry; it reads back only if every value does.
    public static var _preferenceCodec: _DirectCodec<[String: Value]> {
        let element = Value._preferenceCodec
        return _DirectCodec(
            encode: { .dictionary($0.mapValues(element.encode)) },
            decode: { stored throws(DecodeFailure) in
                guard case .dictionary(let items) = stored else { throw .mismatch }
                var result: [String: Value] = [:]
                result.reserveCapacity(items.count)
                for (key, item) in items {
                    result[key] = try element.decode(item)
                }
                return result
            },
            isScalar: false
        )
    }
}
