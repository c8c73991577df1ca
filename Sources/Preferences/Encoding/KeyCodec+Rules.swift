extension KeyCodec {
    /// The codec of a key with a rule: this codec, refusing a value that breaks the rule both ways.
    ///
    /// It decodes outside the store's lock, whatever this codec does: a rule's test is the app's
    /// code (a predicate, or the type's `==` or `<`), which may read the store.
    func constrained(by rule: PreferenceRule<Value>) -> KeyCodec {
        /// The broken rule, for a value that breaks it; `nil` for one that keeps it.
        @Sendable func brokenRule(by value: Value) -> BrokenRule? {
            rule.admits(value) ? nil : BrokenRule(value: describeValue(value), rule: rule.description)
        }
        @Sendable func checked(_ value: Value) throws(DecodeFailure) -> Value {
            if let broken = brokenRule(by: value) { throw .ruleBroken(broken) }
            return value
        }
        return KeyCodec(
            encode: { value throws(EncodeFailure) in
                if let broken = brokenRule(by: value) { throw .ruleBroken(broken) }
                return try self.encode(value)
            },
            decode: { stored throws(DecodeFailure) in try checked(try self.decode(stored)) },
            decodeOverride: { json throws(DecodeFailure) in try checked(try self.decodeOverride(json)) },
            decodesInPlace: false,
            unconstrained: unconstrained ?? self
        )
    }
}

/// A value that breaks a rule, and the rule, for a message.
///
/// A class, as ``DecodeFailure/Reason`` is, so that the failure it is carried in stays one word wide.
final class BrokenRule: Sendable {
    /// The value as a message shows it.
    let value: String
    /// What the rule asks, completing "must be".
    let rule: String

    init(value: String, rule: String) {
        self.value = value
        self.rule = rule
    }
}
