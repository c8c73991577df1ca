/// A type that a store keeps natively, with no encoder in between.
///
/// The library makes these types direct: `Bool`; `Int`, `Int8`, `Int16`, `Int32`, `Int64`,
/// `UInt`, `UInt8`, `UInt16`, `UInt32`, `UInt64`; `Double`, `Float`; `String`, `Data`, `Date`,
/// `URL`; and arrays and `[String: Value]` dictionaries of direct types, nested to any depth.
///
/// Other types are stored by their raw value when they are `RawRepresentable` with a direct raw
/// value, or else encoded when they are `Codable`: declare the key the same way and the right
/// strategy is chosen at compile time. Only the library makes a type direct: to store another
/// type as a direct one, with your own conversion, give its key a ``PreferenceCodec``.
public protocol DirectPreferenceValue: Codable, Sendable {
    /// The conversion between this type and the form a store keeps it in.
    ///
    /// The library supplies it for each direct type; it is not meant to be implemented elsewhere.
    static var _preferenceCodec: _DirectCodec<Self> { get }
}

/// The conversion between a direct type and the form a store keeps it in.
///
/// It is opaque: only the library creates one, for the types it stores directly.
public struct _DirectCodec<Value>: Sendable {
    let encode: @Sendable (Value) -> StoredValue
    /// Throws ``DecodeFailure/mismatch`` when the stored value is not of this type, or does not fit in it.
    ///
    /// Throwing rather than returning an optional keeps `Optional<Value>` out of the read path, where
    /// unspecialised generic code would look its metadata up on every read.
    let decode: @Sendable (StoredValue) throws(DecodeFailure) -> Value
    /// Whether decoding costs little enough that a store need not cache the decoded value.
    let isScalar: Bool
}
