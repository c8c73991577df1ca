package import Preferences

/// The migrations the kill harness runs.
///
/// Migration `i` turns the Int stored under `m<i>` into a Double, `i + 0.5`. Applied twice, it would
/// give `i + 1.0`; not applied, the Int is still `i`.
package enum NumberedMigrations {
    package static func intKey(_ index: Int) -> PreferenceKey<Int> {
        PreferenceKey<Int>("m\(index)", default: -1, in: .custom("harness"))
    }

    package static func doubleKey(_ index: Int) -> PreferenceKey<Double> {
        PreferenceKey<Double>("m\(index)", default: -1, in: .custom("harness"))
    }

    package static func migration(_ index: Int) -> MigrateValue<Int, Double> {
        MigrateValue(from: intKey(index), to: doubleKey(index)) { Double($0) + 0.5 }
    }

    /// Stores the Ints the migrations start from.
    package static func prepare(_ store: PreferencesStore, count: Int) throws {
        try store.transaction { preferences in
            for index in 0..<count {
                preferences[intKey(index)] = index
            }
        }
    }
}
