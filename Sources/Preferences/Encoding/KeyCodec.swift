import Foundation

/// How one key turns its values into stored values and back: the encoding strategy, fixed when the
/// key is declared.
///
/// A class, not a struct: the store's read path is generic code that runs unspecialised in the
/// app's module, where a generic struct's metadata must be looked up on every access, while a
/// class instance carries its own.
final class KeyCodec<Value: Sendable>: Sendable {
    /// Returns `nil` for a value that means "no entry": the `nil` of an optional key.
    let encode: @Sendable (Value) throws(EncodeFailure) -> StoredValue?
    let decode: @Sendable (StoredValue) throws(DecodeFailure) -> Value
    /// Reads a value from the JSON an override layer holds: a launch argument, an environment
    /// variable or a managed setting (see `OverrideText`).
    let decodeOverride: @Sendable (Data) throws(DecodeFailure) -> Value
    /// Whether reads decode under the store's lock, from the stored value in place.
    ///
    /// Only for the library's scalars (and optionals of them), whose decoding is a few
    /// instructions and runs no code of the app's. Any other value is decoded outside the lock and
    /// kept decoded, so that repeated reads do not decode it again.
    let decodesInPlace: Bool
    /// For a key with rules, its codec without them: what the schema stores a rule's bounds with,
    /// so that one rule's bound never fails for breaking another rule.
    let unconstrained: KeyCodec?

    init(
        encode: @escaping @Sendable (Value) throws(EncodeFailure) -> StoredValue?,
        decode: @escaping @Sendable (StoredValue) throws(DecodeFailure) -> Value,
        decodeOverride: @escaping @Sendable (Data) throws(DecodeFailure) -> Value,
        decodesInPlace: Bool,
        unconstrained: KeyCodec? = nil
    ) {
        self.encode = encode
        self.decode = decode
        self.decodeOverride = decodeOverride
        self.decodesInPlace = decodesInPlace
        self.unconstrained = unconstrained
    }

    /// Encodes a value: `encode`, called from a method of the codec so that the call borrows the
    /// closure from it; called through the key, every write would retain and release its context.
    func encodeValue(_ value: Value) throws(EncodeFailure) -> StoredValue? {
        try encode(value)
    }

    /// The kinds of stored value this key reads: those its decoder does not reject as a mismatch.
    ///
    /// Found by trying one sample of each kind, so that no type has to declare its kind; what the
    /// schema records, and what `prefs write` checks a value against.
    var acceptedKinds: [StoredKind] {
        StoredKind.allCases.filter { reads($0.sample) }
    }

    /// For a key that reads an array or a dictionary, the kinds its items may be, found as
    /// ``acceptedKinds`` are, one item at a time; empty for any other key.
    var acceptedItemKinds: [StoredKind] {
        let kinds = acceptedKinds
        let collection: ((StoredValue) -> StoredValue)? =
            kinds.contains(.array)
            ? { .array([$0]) } : kinds.contains(.dictionary) ? { .dictionary(["item": $0]) } : nil
        guard let collection else { return [] }
        return StoredKind.allCases.filter { reads(collection($0.sample)) }
    }

    /// Whether the decoder takes a value for its kind: anything but a mismatch.
    private func reads(_ sample: StoredValue) -> Bool {
        do throws(DecodeFailure) {
            _ = try decode(sample)
            return true
        } catch {
            switch error {
            case .mismatch: return false
            case .invalid, .ruleBroken: return true
            }
        }
    }
}

/// Why a value could not be encoded.
enum EncodeFailure: Error {
    case encoderFailed(String)
    /// The value breaks one of the key's rules.
    case ruleBroken(BrokenRule)
}

/// Why a stored value could not be decoded as a key's type.
enum DecodeFailure: Error {
    /// The stored kind is not this type's, or the stored number does not fit in it.
    case mismatch
    /// The stored kind is right but the value does not decode, for the reason given.
    case invalid(Reason)
    /// The value decodes, but breaks one of the key's rules.
    case ruleBroken(BrokenRule)

    /// Why a stored value does not decode, in words.
    ///
    /// A class, so that ``DecodeFailure``, whose payloads are all references, is one word wide:
    /// every read of every key returns its failure through that type, and a wider one costs each
    /// read instructions.
    final class Reason: Sendable {
        let text: String

        init(_ text: String) {
            self.text = text
        }
    }
}

extension KeyCodec {
    /// The codec every key of this value type and strategy shares, made by `make` the first time.
    ///
    /// A codec depends on nothing but its type and strategy. Made for each key, a store of 10,000
    /// keys would hold 10,000 codecs and three times as many closure contexts, and a read or a
    /// write of a key not used for a while would find its codec cold in the processor's caches.
    static func shared(_ strategy: CodecStrategy, _ make: () -> KeyCodec) -> KeyCodec {
        let valueType = ObjectIdentifier(Value.self)
        return sharedCodecs.withLock { codecs in
            if let shared = codecs.first(where: { $0.valueType == valueType && $0.strategy == strategy }) {
                // Stored under its value type and strategy, by this function alone.
                return unsafeDowncast(shared.codec, to: KeyCodec.self)
            }
            let codec = make()
            codecs.append((valueType, strategy, codec))
            return codec
        }
    }
}

/// Every codec made, with its value type and strategy: one or two a type, a handful in an app, and
/// looked up once per key declared.
///
/// A list, not a dictionary: a dictionary has the runtime search every loaded library for its key
/// type's conformance to `Hashable` the first time in a process, which takes longer than opening a
/// store of 10,000 keys.
private let sharedCodecs = Locked<[(valueType: ObjectIdentifier, strategy: CodecStrategy, codec: AnyObject)]>([])

/// How a codec turns values into stored values: the encoding strategies, and an optional key's
/// over its wrapped type's codec.
enum CodecStrategy: Hashable {
    case direct, rawValue, codable
    case optional(wrapping: ObjectIdentifier)
}

extension KeyCodec where Value: DirectPreferenceValue {
    static var direct: KeyCodec {
        shared(.direct) {
            let codec = Value._preferenceCodec
            return KeyCodec(
                encode: { codec.encode($0) },
                decode: codec.decode,
                decodeOverride: { json throws(DecodeFailure) in try OverrideText.decode(Value.self, from: json) },
                decodesInPlace: codec.isScalar
            )
        }
    }
}

extension KeyCodec where Value: RawRepresentable, Value.RawValue: DirectPreferenceValue {
    static var rawValue: KeyCodec {
        shared(.rawValue, makeRawValue)
    }

    private static func makeRawValue() -> KeyCodec {
        let codec = Value.RawValue._preferenceCodec
        @Sendable func value(for raw: Value.RawValue) throws(DecodeFailure) -> Value {
            guard let value = Value(rawValue: raw) else {
                throw .invalid(
                    DecodeFailure.Reason("\(String(reflecting: raw)) is not a raw value of \(typeName(Value.self))"))
            }
            return value
        }
        return KeyCodec(
            encode: { codec.encode($0.rawValue) },
            decode: { stored throws(DecodeFailure) in try value(for: try codec.decode(stored)) },
            decodeOverride: { json throws(DecodeFailure) in
                try value(for: try OverrideText.decode(Value.RawValue.self, from: json))
            },
            decodesInPlace: false
        )
    }
}

extension KeyCodec where Value: Codable {
    /// JSON with sorted keys, and a set's elements sorted, so that equal values encode to equal
    /// bytes and an unchanged value is recognised as no change.
    static var codable: KeyCodec {
        shared(.codable, makeCodable)
    }

    private static func makeCodable() -> KeyCodec {
        KeyCodec(
            encode: { value throws(EncodeFailure) in
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                do {
                    if let set = value as? any UnorderedEncodable {
                        return .encoded(try set.encodedInOrder(by: encoder))
                    }
                    return .encoded(try encoder.encode(value))
                } catch {
                    throw .encoderFailed(describe(error))
                }
            },
            decode: { stored throws(DecodeFailure) in
                // `Data` holding JSON is how `UserDefaults` keeps a `Codable` value.
                let data: Data
                switch stored {
                case .encoded(let encoded), .data(let encoded): data = encoded
                default: throw .mismatch
                }
                do {
                    return try JSONDecoder().decode(Value.self, from: data)
                } catch {
                    throw .invalid(DecodeFailure.Reason(describe(error)))
                }
            },
            decodeOverride: { json throws(DecodeFailure) in try OverrideText.decode(Value.self, from: json) },
            decodesInPlace: false
        )
    }
}

extension KeyCodec {
    /// The codec of an optional key, built on its wrapped type's: `nil` is stored as no entry.
    static func optional<Wrapped>(_ wrapped: KeyCodec<Wrapped>) -> KeyCodec<Wrapped?> {
        KeyCodec<Wrapped?>.shared(.optional(wrapping: ObjectIdentifier(wrapped))) { unshared(optional: wrapped) }
    }

    /// An optional key's codec made for that key alone: for a wrapped codec that is not shared,
    /// which the table of shared codecs would keep for ever.
    static func unshared<Wrapped>(optional wrapped: KeyCodec<Wrapped>) -> KeyCodec<Wrapped?> {
        KeyCodec<Wrapped?>(
            encode: { value throws(EncodeFailure) in
                guard let value else { return nil }
                return try wrapped.encode(value)
            },
            decode: { stored throws(DecodeFailure) in try wrapped.decode(stored) },
            decodeOverride: { json throws(DecodeFailure) in try wrapped.decodeOverride(json) },
            decodesInPlace: wrapped.decodesInPlace
        )
    }
}

/// A collection whose order is its elements' hashes, which differs between equal values and
/// between runs.
private protocol UnorderedEncodable {
    /// The collection as a JSON array, its elements' JSON in ascending byte order.
    func encodedInOrder(by encoder: JSONEncoder) throws -> Data
}

extension Set: UnorderedEncodable where Element: Encodable {
    fileprivate func encodedInOrder(by encoder: JSONEncoder) throws -> Data {
        let elements = try map { try encoder.encode($0) }.sorted { $0.lexicographicallyPrecedes($1) }
        return Data("[".utf8) + elements.joined(separator: Data(",".utf8)) + Data("]".utf8)
    }
}

/// A one-line account of an encoding or decoding error, with the coding path where there is one.
func describe(_ error: any Error) -> String {
    let context: String?
    let path: [any CodingKey]
    switch error {
    case EncodingError.invalidValue(_, let info):
        (context, path) = (info.debugDescription, info.codingPath)
    case DecodingError.typeMismatch(_, let info), DecodingError.valueNotFound(_, let info),
        DecodingError.keyNotFound(_, let info), DecodingError.dataCorrupted(let info):
        (context, path) = (info.debugDescription, info.codingPath)
    default:
        (context, path) = (nil, [])
    }
    guard let context else { return String(describing: error) }
    let location = path.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    return location.isEmpty ? context : "\(context) (at \(location))"
}
