import Foundation
import Preferences

#if canImport(Observation)
    import Observation
#endif

/// The operations `Scripts/count-instructions` counts with callgrind.
///
/// `preferences-benchmarks --count <operation> <n> <repeats>` fills a store of `n` Int keys outside
/// the count, then runs the operation `repeats` times inside ``countedOperations(_:)``, the one
/// function callgrind is told to count (`--toggle-collect`). Instructions divided by `repeats` is
/// the figure per operation; unlike a time, it is the same on a busy machine as on an idle one.
enum CountedOperation: String, CaseIterable {
    /// One overwrite of an Int in a file store, default durability, with no compaction among them.
    case writeInt = "write-int"
    /// The same, of keys an Observation tracking scope read (a view that shows them): each write
    /// is announced to the framework, which calls the scope, and which a write of a key nothing
    /// tracks skips.
    case writeIntTracked = "write-int-tracked"
    /// Overwrites of every key in turn, compactions included: the write averaged over whole passes.
    case writePass = "write-pass"
    /// One overwrite of an Int in an in-memory store.
    case writeIntInMemory = "write-int-memory"
    /// One read of an Int from a file store.
    case readInt = "read-int"
    /// One read of a `RawRepresentable` enum from a file store: a type the library does not
    /// specialise its read for, decoded outside the lock and cached.
    case readEnum = "read-enum"
    /// One read of a `Codable` struct from a file store, decoded on its first read and cached.
    case readCodable = "read-codable"
    /// Opening a file store of `n` String keys and reading one (closing it is not counted).
    case open
    /// Another store on the same file changes one of `n` String keys and compacts; this store's
    /// next read catches up with the new snapshot. All three are counted.
    case catchUp = "catch-up"
}

struct CountedRun {
    let operation: CountedOperation
    let n: Int
    let repeats: Int
    let scratch: URL

    func run() throws {
        let url = scratch.appendingPathComponent("counted.store")
        // `PREFERENCES_COUNT_APP_NAMESPACE` counts a file store of another app namespace, whose
        // keys in `.app` take the path that resolves their resolved key.
        let appNamespace =
            ProcessInfo.processInfo.environment["PREFERENCES_COUNT_APP_NAMESPACE"]
            ?? PreferencesStore.defaultAppNamespace
        let store: PreferencesStore =
            operation == .writeIntInMemory
            ? .inMemory() : try PreferencesStore(fileURL: url, appNamespace: appNamespace)
        let keys = (0..<n).map { PreferenceKey<Int>("int\($0)", default: 0) }
        let themes = (0..<n).map { PreferenceKey<BenchmarkTheme>("theme\($0)", default: .system) }
        let pets = (0..<n).map { PreferenceKey<BenchmarkPet>("pet\($0)", default: .sample(-1)) }
        try store.transaction { preferences in
            for index in 0..<n {
                if operation == .readEnum {
                    preferences[themes[index]] = .dark
                } else if operation == .readCodable {
                    preferences[pets[index]] = .sample(index)
                } else if operation == .open || operation == .catchUp {
                    preferences[PreferenceKey<String>("key\(index)", default: "")] =
                        "\(index) " + String(repeating: "x", count: 80)
                } else {
                    preferences[keys[index]] = index
                }
            }
        }
        // Warm: the first write opens the log, and the first read of each key builds its slot.
        if operation == .readEnum {
            try store.setValue(.light, for: themes[0])
            for theme in themes {
                _ = store[theme]
            }
        } else if operation == .readCodable {
            try store.setValue(.sample(0), for: pets[0])
            for pet in pets {
                _ = store[pet]
            }
        } else if operation != .open && operation != .catchUp {
            // Only the read operation reads through the subscript, which tells the Observation
            // framework of the read: a write of a key read that way is announced.
            for key in keys {
                if operation == .readInt {
                    _ = store[key]
                } else {
                    _ = try store.value(for: key)
                }
            }
            // The first write and the first announcement outside the count: the run-time linker
            // binds the functions they call then, about 30 instructions a write if counted.
            trackOnce(keys.prefix(1), in: store)
            try store.setValue(-1, for: keys[0])
        }
        if operation == .writeIntTracked {
            trackOnce(keys.prefix(repeats), in: store)
        }
        // Each body runs the operation `repeats` times in a loop of its own, with nothing captured
        // that it changes: a captured counter would add the closure's exclusivity checks to the count.
        var openedStores: [PreferencesStore] = []
        let body: (Int) throws -> Void
        switch operation {
        case .writeInt, .writeIntTracked, .writeIntInMemory, .writePass:
            body = { repeats in
                for index in 0..<repeats {
                    try store.setValue(1_000_000 + index, for: keys[index % n])
                }
            }
        case .readInt:
            body = { repeats in
                var sink = 0
                for index in 0..<repeats {
                    sink &+= store[keys[index % n]]
                }
                if sink == 42 { print("") }
            }
        case .readEnum:
            body = { repeats in
                var sink = 0
                for index in 0..<repeats {
                    sink &+= store[themes[index % n]].rawValue.utf8.count
                }
                if sink == 42 { print("") }
            }
        case .readCodable:
            body = { repeats in
                var sink = 0
                for index in 0..<repeats {
                    sink &+= store[pets[index % n]].tags.count
                }
                if sink == 42 { print("") }
            }
        case .catchUp:
            try store.compact()
            let reader = try PreferencesStore(fileURL: url)
            let key = PreferenceKey<String>("key1", default: "")
            _ = reader[key]
            body = { repeats in
                for index in 0..<repeats {
                    try store.setValue("changed \(index)", for: PreferenceKey<String>("key\(index % n)", default: ""))
                    try store.compact()
                    _ = reader[key]
                }
            }
        case .open:
            // The stores opened are kept until the count is over: closing one is not part of opening it.
            body = { repeats in
                for _ in 0..<repeats {
                    let opened = try PreferencesStore(fileURL: url)
                    _ = opened[PreferenceKey<String>("key1", default: "")]
                    openedStores.append(opened)
                }
            }
        }
        try countedOperations(repeats: repeats, body)
        openedStores.removeAll()
    }
}

/// Reads each key in a tracking scope of its own, as a view's body does: the next write of each
/// is announced, and calls its scope.
private func trackOnce(_ keys: ArraySlice<PreferenceKey<Int>>, in store: PreferencesStore) {
    #if canImport(Observation)
        for key in keys {
            withObservationTracking {
                _ = store[key]
            } onChange: {
            }
        }
    #endif
}

/// The only function callgrind counts; never inlined, so that its name is in the binary.
@inline(never)
func countedOperations(repeats: Int, _ body: (Int) throws -> Void) throws {
    try body(repeats)
}
