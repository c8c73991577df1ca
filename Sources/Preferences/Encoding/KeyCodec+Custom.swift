import Foundation

extension KeyCodec {
    /// The codec of a key declared with a ``PreferenceCodec``.
    ///
    /// The stored type's own, with the conversion on either side; made for each key, since the
    /// conversion is the app's.
    convenience init<Stored>(_ custom: PreferenceCodec<Value, Stored>) {
        let stored = Stored._preferenceCodec
        @Sendable func value(from storedValue: Stored) throws(DecodeFailure) -> Value {
            do {
                return try custom.decode(storedValue)
            } catch {
                throw .invalid(DecodeFailure.Reason(describe(error)))
            }
        }
        self.init(
            encode: { value throws(EncodeFailure) in
                do {
                    return stored.encode(try custom.encode(value))
                } catch {
                    throw .encoderFailed(describe(error))
                }
            },
            decode: { storedValue throws(DecodeFailure) in try value(from: try stored.decode(storedValue)) },
            decodeOverride: { json throws(DecodeFailure) in
                try value(from: try OverrideText.decode(Stored.self, from: json))
            },
            decodesInPlace: false
        )
    }
}
