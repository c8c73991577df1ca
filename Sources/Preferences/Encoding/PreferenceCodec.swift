public import Foundation

/// Your own conversion between a key's type and a type a store keeps natively: how to store a type
/// the library does not, or one it stores otherwise.
///
/// Give it to a key, and the key stores what `encode` returns, in that type's kind:
///
/// ```swift
/// extension PreferenceKeys {
///     static let installation = PreferenceKey<UUID?>("installation", codec: .uuidString)
///     static let accent = PreferenceKey<Colour>(
///         "accent", default: .blue,
///         codec: PreferenceCodec(encode: { [$0.red, $0.green, $0.blue] }, decode: Colour.init(components:)))
/// }
/// ```
///
/// The codec is part of the key: `prefs` and the schema that
/// ``PreferencesStore/register(_:)-(PreferenceKeys...)`` stores show the stored kind, and launch
/// arguments, environment variables and managed settings are read as `Stored` and then decoded.
/// Equal values must encode to equal stored values, or a write of an unchanged value writes
/// again: sort what has no order of its own, as ``sortedArray()`` does for a `Set`.
public struct PreferenceCodec<Value: Sendable, Stored: DirectPreferenceValue>: Sendable {
    let encode: @Sendable (Value) throws -> Stored
    let decode: @Sendable (Stored) throws -> Value

    /// Creates a codec from a conversion each way.
    ///
    /// - Parameters:
    ///   - encode: Turns a value into what is stored. An error it throws fails the write with
    ///     ``PreferencesError/Code/encodingFailed`` and writes nothing.
    ///   - decode: Turns what is stored back into a value. An error it throws for a stored value is
    ///     reported as ``PreferencesError/Code/decodingFailed``, and the read returns the key's
    ///     default; the stored value is left untouched. For a launch argument, environment variable or
    ///     managed setting, the value is reported as ``PreferencesError/Code/typeMismatch`` and skipped.
    public init(
        encode: @escaping @Sendable (Value) throws -> Stored,
        decode: @escaping @Sendable (Stored) throws -> Value
    ) {
        self.encode = encode
        self.decode = decode
    }
}

extension PreferenceCodec where Value == UUID, Stored == String {
    /// A UUID stored as its text, `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`, as `uuidString` writes it.
    public static var uuidString: PreferenceCodec {
        PreferenceCodec(
            encode: \.uuidString,
            decode: { text in
                guard let uuid = UUID(uuidString: text) else { throw CodecFailure("'\(text)' is not a UUID") }
                return uuid
            })
    }
}

extension PreferenceCodec {
    /// A set stored as an array in ascending order, so that equal sets are stored alike.
    ///
    /// A stored array with an element twice reads as a set holding it once.
    ///
    /// - Returns: The codec.
    public static func sortedArray<Element>() -> PreferenceCodec
    where Value == Set<Element>, Stored == [Element], Element: DirectPreferenceValue & Hashable & Comparable {
        PreferenceCodec(encode: { $0.sorted() }, decode: { Set($0) })
    }
}

/// Why a codec the library supplies could not convert a value.
struct CodecFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
