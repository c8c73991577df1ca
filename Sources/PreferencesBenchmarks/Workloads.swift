import Foundation
import Preferences
import PreferencesHarnessKit

/// The per-operation workloads, each run against every contender on a store of `n` keys of each kind.
struct Workloads {
    let n: Int
    let quick: Bool
    let scratch: URL
    /// Whether to measure this package's standard file store alone, as the growth table does at
    /// sizes where the other contenders would take hours to fill.
    var onlyPreferences = false

    /// The contenders for one size, each filled with `n` values of every kind.
    func contenders() throws -> [any Contender] {
        let id = UUID().uuidString
        let standard = PreferencesContender(
            name: "Preferences file, standard",
            store: try PreferencesStore(fileURL: scratch.appendingPathComponent("standard-\(id).store")),
            count: n
        )
        let contenders: [any Contender] =
            onlyPreferences
            ? [standard]
            : [
                standard,
                PreferencesContender(
                    name: "Preferences file, synchronous",
                    store: try PreferencesStore(
                        fileURL: scratch.appendingPathComponent("synchronous-\(id).store"),
                        durability: .synchronous
                    ),
                    count: n
                ),
                PreferencesContender(name: "Preferences in memory", store: .inMemory(), count: n),
                UserDefaultsContender(suiteName: "benchmark-\(id)", synchronizes: false),
                UserDefaultsContender(suiteName: "benchmark-sync-\(id)", synchronizes: true),
                try JSONFileContender(url: scratch.appendingPathComponent("json-\(id).json")),
            ] + (try sqliteContenders(id: id)) + (try lmdbContenders(id: id))
        for contender in contenders {
            try fill(contender)
        }
        return contenders
    }

    /// SQLite in its two usual settings, when the system has it.
    private func sqliteContenders(id: String) throws -> [any Contender] {
        guard let sqlite = SQLite.load() else {
            log("  SQLite: not installed (no libsqlite3 to load), left out")
            return []
        }
        return try ["NORMAL", "FULL"].map { synchronous in
            try SQLiteContender(
                library: sqlite,
                path: scratch.appendingPathComponent("sqlite-\(synchronous)-\(id).db").path,
                synchronous: synchronous
            )
        }
    }

    /// LMDB as the issue that set this package's write targets measured it, when the system has it.
    private func lmdbContenders(id: String) throws -> [any Contender] {
        guard let lmdb = LMDB.load() else {
            log("  LMDB: not installed (no liblmdb to load), left out")
            return []
        }
        return [try LMDBContender(library: lmdb, path: scratch.appendingPathComponent("lmdb-\(id).mdb").path)]
    }

    /// Stores `n` values of every kind in one batch where the contender has batches.
    private func fill(_ contender: any Contender) throws {
        switch contender {
        case let preferences as PreferencesContender:
            let ints = (0..<n).map { PreferenceKey<Int>("int\($0)", default: 0) }
            let strings = (0..<n).map { PreferenceKey<String>("string\($0)", default: "") }
            let pets = (0..<n).map { PreferenceKey<BenchmarkPet>("pet\($0)", default: .sample(-1)) }
            let themes = (0..<n).map { PreferenceKey<BenchmarkTheme>("theme\($0)", default: .system) }
            try preferences.store.transaction { store in
                for index in 0..<n {
                    store[ints[index]] = index
                    store[strings[index]] = benchmarkString(index)
                    store[pets[index]] = .sample(index)
                    store[themes[index]] = .dark
                }
            }
        case let defaults as UserDefaultsContender:
            for index in 0..<n {
                defaults.defaults.set(index, forKey: "int\(index)")
                defaults.defaults.set(benchmarkString(index), forKey: "string\(index)")
                defaults.defaults.set(try JSONEncoder().encode(BenchmarkPet.sample(index)), forKey: "pet\(index)")
                defaults.defaults.set(BenchmarkTheme.dark.rawValue, forKey: "theme\(index)")
            }
            defaults.defaults.synchronize()
        case let json as JSONFileContender:
            try json.fill(count: n)
        case let sqlite as SQLiteContender:
            try sqlite.fill(count: n)
        case let lmdb as LMDBContender:
            try lmdb.fill(count: n)
        default:
            break
        }
    }

    /// How many single operations to time: fewer for contenders whose writes take milliseconds.
    private func writeCount(for contender: any Contender) -> Int {
        let slow =
            contender.name.contains("synchronize") || contender.name.contains("synchronous")
            || contender is JSONFileContender || contender.name.hasSuffix("=FULL")
        switch (slow, quick) {
        case (true, true): return n >= 1_000 ? 8 : 20
        case (true, false): return n >= 10_000 ? 15 : 40
        // Enough single writes that their 99th percentile is the 30th or 200th slowest.
        case (false, true): return 3_000
        case (false, false): return 20_000
        }
    }

    /// Whether to time whole passes of writes: for this package's stores with no flush per write,
    /// SQLite with its usual one and LMDB, the contenders whose writes take microseconds.
    private func averagesWholePasses(_ contender: any Contender) -> Bool {
        contender.name == "Preferences file, standard" || contender.name == "Preferences in memory"
            || contender.name.hasSuffix("=NORMAL") || contender is LMDBContender
    }

    func run() throws -> [Result] {
        var results: [Result] = []
        for contender in try contenders() {
            log("  \(contender.name)")
            results += try measure(contender)
        }
        return results
    }

    private func measure(_ contender: any Contender) throws -> [Result] {
        let writes = writeCount(for: contender)
        let samples = quick ? 31 : 101
        let batch = contender is PreferencesContender ? 1_000 : 50
        var results: [Result] = []
        var sink = 0
        func record(_ workload: String, _ timings: [Double]) {
            results.append(summarise(timings, workload: workload, n: n, contender: contender.name))
        }
        var counter = 1_000_000
        let writeTimings = try timeEach(count: writes) { index in
            counter += 1
            try contender.write(counter, at: index % n)
        }
        record("write Int", writeTimings)
        // The tail of single writes: what a page fault, an allocation or a compaction adds.
        results[results.count - 1].p99Nanoseconds = percentile(writeTimings, 0.99)
        if averagesWholePasses(contender) {
            // Each sample is the time per write of 30,000 writes at least, and 30 whole passes
            // over the keys: long enough to take in many compactions, with their flushes, since
            // this package's store compacts about every 2,000 small writes, or every pass over
            // keys whose values fill 64 KiB.
            record(
                "write Int, averaged over whole passes",
                try timeBatches(samples: quick ? 3 : 5, batch: max(30_000, 30 * n)) { index in
                    counter += 1
                    try contender.write(counter, at: index % n)
                })
        }
        record("read Int", timeBatches(samples: samples, batch: batch) { sink &+= contender.readInt(at: $0 % n) })
        // In an order no cache or prefetcher can follow, the same for every contender and run.
        var generator = SplitMix64(seed: UInt64(n))
        let order = Array(0..<n).shuffled(using: &generator)
        record(
            "read Int, random order",
            timeBatches(samples: samples, batch: batch) { sink &+= contender.readInt(at: order[$0 % n]) })
        // Every write changes the value: a store may skip, as Preferences does, one that does not.
        record(
            "write String (60 bytes)",
            try timeEach(count: writes) { index in
                try contender.write(benchmarkString(index + 1_000_000), stringAt: index % n)
            })
        record(
            "read String",
            timeBatches(samples: samples, batch: batch) { sink &+= contender.readString(at: $0 % n).utf8.count })
        record(
            "write Codable struct (200 bytes)",
            try timeEach(count: writes) { index in
                try contender.write(.sample(index + 1_000_000), codableAt: index % n)
            })
        record(
            "read Codable struct",
            timeBatches(samples: samples, batch: batch) { sink &+= contender.readCodable(at: $0 % n).tags.count })
        record(
            "write RawRepresentable enum",
            try timeEach(count: writes) { index in
                // The fill stored `.dark`; each pass over the keys alternates between the other two.
                try contender.write((index / n).isMultiple(of: 2) ? .light : .system, enumAt: index % n)
            })
        record(
            "read RawRepresentable enum",
            timeBatches(samples: samples, batch: batch) {
                sink &+= contender.readEnum(at: $0 % n).rawValue.utf8.count
            })
        record(
            "update (increment an Int)",
            try timeEach(count: writes) { index in
                try contender.increment(at: index % n)
            })
        let batchSize = min(100, n)
        record(
            "transaction of 100 keys",
            try timeEach(count: max(writes / 10, 10)) { index in
                try contender.writeBatch((0..<batchSize).map { index &* 1_000 &+ $0 })
            })
        if sink == 42 { print("") }  // keeps the reads from being optimised away
        return results
    }
}

func log(_ message: String) {
    if !CommandLine.arguments.contains("--json") {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }
}
