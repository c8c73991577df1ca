/// A rule a key's values must keep: what the app, a launch argument or an administrator may set
/// the key to.
///
/// Give a key its rules where it is declared:
///
/// ```swift
/// extension PreferenceKeys {
///     static let zoom = PreferenceKey<Int>("zoom", default: 100).constrained(to: .range(50...200))
///     static let nickname = PreferenceKey<String>("nickname", default: "").constrained(to: .maximumLength(32))
/// }
/// ```
///
/// A write of a value that breaks a rule throws ``PreferencesError/Code/invalidValue`` and writes
/// nothing. A launch argument, environment variable or managed setting that breaks one is
/// reported with that code and skipped, as one of the wrong type is; so is a stored value that
/// breaks one (written by an older version of the app, say), which is left untouched. The schema
/// that ``PreferencesStore/register(_:)-(PreferenceKeys...)`` stores carries each rule, so that
/// `prefs schema` shows it to an administrator and `prefs write` refuses what it breaks.
public struct PreferenceRule<Value: Sendable>: Sendable, CustomStringConvertible {
    /// What the rule asks, in words: `between 50 and 200`, `at most 32 characters`.
    public let description: String

    let admits: @Sendable (Value) -> Bool

    /// The rule as a tool can check it without the app's code.
    let form: Form

    enum Form: Sendable {
        /// Bounds, both included; `nil` for no bound.
        case range(lower: Value?, upper: Value?)
        /// From `lower`, included (`nil` for no bound), to `limit`, left out.
        case rangeBelow(lower: Value?, limit: Value)
        case allowed([Value])
        /// At most this many characters of a string, or items of an array or dictionary.
        case maximumCount(Int)
        /// A rule only the app's code can check.
        case predicate
    }

    /// A rule of your own: a sentence saying what it asks, and a test.
    ///
    /// Tools cannot run your test, so `prefs write` cannot refuse a value that breaks it; the app
    /// reports such a value and skips it when it reads it. The test may read the store, but should
    /// depend on the value alone: a store tests a stored value once, when it first decodes it, not
    /// again when something the test read changes.
    ///
    /// - Parameters:
    ///   - description: What the rule asks, completing "must be": `a multiple of 5`.
    ///   - admits: Whether a value keeps the rule.
    /// - Returns: The rule.
    public static func predicate(
        _ description: String, _ admits: @escaping @Sendable (Value) -> Bool
    ) -> PreferenceRule {
        PreferenceRule(description: description, admits: admits, form: .predicate)
    }
}

extension PreferenceRule where Value: Comparable {
    /// Values from the lower bound to the upper bound, both included.
    ///
    /// - Parameter bounds: The values allowed.
    /// - Returns: The rule.
    public static func range(_ bounds: ClosedRange<Value>) -> PreferenceRule {
        PreferenceRule(
            description: "between \(bounds.lowerBound) and \(bounds.upperBound)", admits: { bounds.contains($0) },
            form: .range(lower: bounds.lowerBound, upper: bounds.upperBound))
    }

    /// Values from the lower bound up.
    ///
    /// - Parameter bounds: The values allowed.
    /// - Returns: The rule.
    public static func range(_ bounds: PartialRangeFrom<Value>) -> PreferenceRule {
        PreferenceRule(
            description: "at least \(bounds.lowerBound)", admits: { bounds.contains($0) },
            form: .range(lower: bounds.lowerBound, upper: nil))
    }

    /// Values up to the upper bound, which is included.
    ///
    /// - Parameter bounds: The values allowed.
    /// - Returns: The rule.
    public static func range(_ bounds: PartialRangeThrough<Value>) -> PreferenceRule {
        PreferenceRule(
            description: "at most \(bounds.upperBound)", admits: { bounds.contains($0) },
            form: .range(lower: nil, upper: bounds.upperBound))
    }

    /// Values from the lower bound, included, up to the upper bound, left out: `.range(0..<10)`.
    ///
    /// - Parameter bounds: The values allowed.
    /// - Returns: The rule.
    public static func range(_ bounds: Range<Value>) -> PreferenceRule {
        PreferenceRule(
            description: "at least \(bounds.lowerBound) and below \(bounds.upperBound)",
            admits: { bounds.contains($0) },
            form: .rangeBelow(lower: bounds.lowerBound, limit: bounds.upperBound))
    }

    /// Values below the upper bound, which is left out: `.range(..<10)`.
    ///
    /// - Parameter bounds: The values allowed.
    /// - Returns: The rule.
    public static func range(_ bounds: PartialRangeUpTo<Value>) -> PreferenceRule {
        PreferenceRule(
            description: "below \(bounds.upperBound)", admits: { bounds.contains($0) },
            form: .rangeBelow(lower: nil, limit: bounds.upperBound))
    }
}

extension PreferenceRule where Value: Equatable {
    /// Only the values listed.
    ///
    /// - Parameter values: The values allowed.
    /// - Returns: The rule.
    public static func oneOf(_ values: [Value]) -> PreferenceRule {
        PreferenceRule(
            description: "one of " + values.map { "\($0)" }.joined(separator: ", "), admits: { values.contains($0) },
            form: .allowed(values))
    }
}

extension PreferenceRule {
    /// Only the values listed, or `nil`: for an optional key, whose `nil` is no value at all.
    ///
    /// - Parameter values: The values allowed.
    /// - Returns: The rule.
    public static func oneOf<Wrapped: Equatable>(_ values: [Wrapped]) -> PreferenceRule where Value == Wrapped? {
        PreferenceRule<Wrapped>.oneOf(values).allowingNil
    }
}

extension PreferenceRule where Value == String {
    /// Strings of at most this many characters.
    ///
    /// - Parameter maximum: The most characters allowed.
    /// - Returns: The rule.
    public static func maximumLength(_ maximum: Int) -> PreferenceRule {
        PreferenceRule(
            description: "at most \(maximum) characters", admits: { $0.count <= maximum }, form: .maximumCount(maximum))
    }
}

extension PreferenceRule where Value: Collection {
    /// Arrays, sets or dictionaries of at most this many items.
    ///
    /// - Parameter maximum: The most items allowed.
    /// - Returns: The rule.
    public static func maximumCount(_ maximum: Int) -> PreferenceRule {
        PreferenceRule(
            description: "at most \(maximum) items", admits: { $0.count <= maximum }, form: .maximumCount(maximum))
    }
}

extension PreferenceRule {
    /// The rule for an optional key: `nil` keeps it, and any other value as it keeps this rule.
    var allowingNil: PreferenceRule<Value?> {
        let form: PreferenceRule<Value?>.Form =
            switch self.form {
            case .range(let lower, let upper): .range(lower: lower.map(Optional.some), upper: upper.map(Optional.some))
            case .rangeBelow(let lower, let limit): .rangeBelow(lower: lower.map(Optional.some), limit: limit)
            case .allowed(let values): .allowed(values.map(Optional.some))
            case .maximumCount(let maximum): .maximumCount(maximum)
            case .predicate: .predicate
            }
        return PreferenceRule<Value?>(description: description, admits: { $0.map(admits) ?? true }, form: form)
    }
}
