package import Preferences

/// The writes the kill harness issues, numbered from 1, and the store each prefix of them leaves.
///
/// Write `i` sets key `w<i % 7>` to `i`; every fifth write is a transaction that also sets `t`.
/// Seven keys written over and over make the log outgrow its snapshot, so compaction runs often.
package enum NumberedWrites {
    package static let keyCount = 7

    package static func key(_ index: Int) -> PreferenceKey<Int> {
        PreferenceKey<Int>("w\(index)", default: -1, in: .custom("harness"))
    }

    package static let transactionKey = PreferenceKey<Int>("t", default: -1, in: .custom("harness"))

    /// Performs write `number` on `store`.
    package static func perform(_ number: Int, on store: PreferencesStore) throws {
        if number.isMultiple(of: 5) {
            try store.transaction { preferences in
                preferences[key(number % keyCount)] = number
                preferences[transactionKey] = number
            }
        } else {
            try store.setValue(number, for: key(number % keyCount))
        }
    }

    /// The values the store holds after writes `1...count`, key by key, as `-1` for none.
    package static func expectedValues(afterWrites count: Int) -> [Int] {
        var values = [Int](repeating: -1, count: keyCount + 1)
        for number in stride(from: 1, through: count, by: 1) {
            values[number % keyCount] = number
            if number.isMultiple(of: 5) {
                values[keyCount] = number
            }
        }
        return values
    }

    /// The values `store` holds, in the order of ``expectedValues(afterWrites:)``.
    package static func values(in store: PreferencesStore) -> [Int] {
        (0..<keyCount).map { store[key($0)] } + [store[transactionKey]]
    }
}
