/// A key's rule as its schema records it: in words, and, where a tool can check it without the
/// app's code, in stored values.
package struct RuleDeclaration: Sendable, Equatable {
    /// What the rule asks, completing "must be": `between 50 and 200`.
    package let description: String
    package let check: Check

    package enum Check: Sendable, Equatable {
        /// Bounds, both included; `nil` for no bound.
        case range(lower: StoredValue?, upper: StoredValue?)
        /// From `lower`, included (`nil` for no bound), to `limit`, left out.
        case rangeBelow(lower: StoredValue?, limit: StoredValue)
        case allowed([StoredValue])
        /// At most this many characters of a string, or items of an array or dictionary.
        case maximumCount(Int)
        /// A rule only the app's code can check.
        case predicate
    }

    /// The rule of a key, its values stored as the key stores them.
    init<Value>(_ rule: PreferenceRule<Value>, codec: KeyCodec<Value>) {
        description = rule.description
        func stored(_ value: Value) -> StoredValue? {
            (try? codec.encode(value)) ?? nil
        }
        switch rule.form {
        case .range(let lower, let upper):
            switch (lower.map(stored), upper.map(stored)) {
            case (.some(nil), _), (_, .some(nil)):
                // A bound the key cannot store is one a tool cannot check.
                check = .predicate
            case (let lower, let upper):
                check = .range(lower: lower ?? nil, upper: upper ?? nil)
            }
        case .rangeBelow(let lower, let limit):
            switch (lower.map(stored), stored(limit)) {
            case (.some(nil), _), (_, nil):
                check = .predicate
            case (let lower, let limit?):
                check = .rangeBelow(lower: lower ?? nil, limit: limit)
            }
        case .allowed(let values):
            let storedValues = values.compactMap(stored)
            check = storedValues.count == values.count ? .allowed(storedValues) : .predicate
        case .maximumCount(let maximum):
            check = .maximumCount(maximum)
        case .predicate:
            check = .predicate
        }
    }

    /// Whether a stored value keeps the rule; `nil` when a tool cannot tell, for a rule only the
    /// app can check, or a value of a kind the bounds do not compare with.
    package func admits(_ value: StoredValue) -> Bool? {
        switch check {
        case .range(let lower, let upper):
            return Self.isWithin(value, from: lower, to: upper, includingUpper: true)
        case .rangeBelow(let lower, let limit):
            return Self.isWithin(value, from: lower, to: limit, includingUpper: false)
        case .allowed(let values):
            return values.contains(value)
        case .maximumCount(let maximum):
            switch value {
            case .string(let text): return text.count <= maximum
            case .array(let items): return items.count <= maximum
            case .dictionary(let items): return items.count <= maximum
            default: return nil
            }
        case .predicate:
            return nil
        }
    }

    private enum Order {
        case ascending, same, descending
    }

    /// Whether a value lies between bounds, the lower included (`nil` for no bound); `nil` when a
    /// bound does not compare with it.
    private static func isWithin(
        _ value: StoredValue, from lower: StoredValue?, to upper: StoredValue?, includingUpper: Bool
    ) -> Bool? {
        if let lower {
            guard let order = order(lower, value) else { return nil }
            if order == .descending { return false }
        }
        if let upper {
            guard let order = order(value, upper) else { return nil }
            return order == .ascending || (includingUpper && order == .same)
        }
        return true
    }

    /// How two stored values order, as the types they were stored from order them; `nil` for
    /// kinds that do not compare.
    private static func order(_ first: StoredValue, _ second: StoredValue) -> Order? {
        func order<T: Comparable>(_ a: T, _ b: T) -> Order {
            a < b ? .ascending : a == b ? .same : .descending
        }
        switch (first, second) {
        case (.signed(let a), .signed(let b)): return order(a, b)
        case (.unsigned(let a), .unsigned(let b)): return order(a, b)
        case (.signed(let a), .unsigned(let b)): return a < 0 ? .ascending : order(UInt64(a), b)
        case (.unsigned(let a), .signed(let b)): return b < 0 ? .descending : order(a, UInt64(b))
        case (.string(let a), .string(let b)): return order(a, b)
        case (.date(let a), .date(let b)): return order(a, b)
        default:
            guard let a = first.number, let b = second.number, !a.isNaN, !b.isNaN else { return nil }
            return order(a, b)
        }
    }
}

extension StoredValue {
    /// The value as a `Double`, for a number.
    fileprivate var number: Double? {
        switch self {
        case .signed(let value): Double(value)
        case .unsigned(let value): Double(value)
        case .double(let value): value
        case .float(let value): Double(value)
        default: nil
        }
    }
}

extension RuleDeclaration {
    /// The rule as a schema entry stores it.
    var schemaValue: StoredValue {
        var fields: [String: StoredValue] = ["rule": .string(description)]
        switch check {
        case .range(let lower, let upper):
            fields["kind"] = .string("range")
            fields["minimum"] = lower
            fields["maximum"] = upper
        case .rangeBelow(let lower, let limit):
            fields["kind"] = .string("rangeBelow")
            fields["minimum"] = lower
            fields["limit"] = limit
        case .allowed(let values):
            fields["kind"] = .string("allowed")
            fields["values"] = .array(values)
        case .maximumCount(let maximum):
            fields["kind"] = .string("maximumCount")
            fields["count"] = .signed(Int64(maximum))
        case .predicate:
            fields["kind"] = .string("predicate")
        }
        return .dictionary(fields)
    }

    /// Reads a rule back from a schema entry; `nil` if it is not one.
    init?(schemaValue: StoredValue) {
        guard case .dictionary(let fields) = schemaValue, case .string(let description)? = fields["rule"],
            case .string(let kind)? = fields["kind"]
        else { return nil }
        self.description = description
        switch kind {
        case "range":
            check = .range(lower: fields["minimum"], upper: fields["maximum"])
        case "rangeBelow":
            guard let limit = fields["limit"] else { return nil }
            check = .rangeBelow(lower: fields["minimum"], limit: limit)
        case "allowed":
            guard case .array(let values)? = fields["values"] else { return nil }
            check = .allowed(values)
        case "maximumCount":
            guard case .signed(let count)? = fields["count"], let maximum = Int(exactly: count) else { return nil }
            check = .maximumCount(maximum)
        default:
            // A kind a later version added is one this version cannot check.
            check = .predicate
        }
    }
}
