import Foundation
import Preferences

/// Reads and writes against a store of `n` keys, for each kind of store.
struct StoreBenchmarks {
    let n: Int
    let quick: Bool
    let scratch: URL

    private var keys: [PreferenceKey<Int>] { (0..<n).map { PreferenceKey<Int>("key\($0)", default: 0) } }

    func run() throws -> [Result] {
        let keys = keys
        let pet = PreferenceKey<Pet>(
            "pet",
            default: Pet(name: "", species: "", birthday: .distantPast, tags: [], weight: 0)
        )
        var results: [Result] = []
        let contenders: [(String, () throws -> PreferencesStore)] = [
            ("Preferences file, standard", { try fileStore(.standard) }),
            ("Preferences file, synchronous", { try fileStore(.synchronous) }),
            ("Preferences in memory", { .inMemory() }),
        ]
        for (name, makeStore) in contenders {
            let store = try makeStore()
            try store.transaction { preferences in
                for (index, key) in keys.enumerated() {
                    preferences[key] = index
                }
                preferences[pet] = Pet(
                    name: "Rex",
                    species: "dog",
                    birthday: Date(timeIntervalSince1970: 1_500_000_000),
                    tags: ["good", "loud", "fluffy"],
                    weight: 21.5
                )
            }
            let writes = name.hasSuffix("synchronous") ? (quick ? 50 : 300) : (quick ? 500 : 5_000)
            var value = 1_000_000
            results.append(
                summarise(
                    try timeEach(count: writes) { index in
                        value += 1
                        try store.setValue(value, for: keys[index % keys.count])
                    },
                    workload: "write Int",
                    n: n,
                    contender: name
                )
            )
            var sink = 0
            results.append(
                summarise(
                    timeBatches(samples: quick ? 51 : 201, batch: 1_000) { index in
                        sink &+= store[keys[index % keys.count]]
                    },
                    workload: "read Int",
                    n: n,
                    contender: name
                )
            )
            results.append(
                summarise(
                    timeBatches(samples: quick ? 51 : 201, batch: 1_000) { _ in
                        sink &+= store[pet].tags.count
                    },
                    workload: "read Codable struct (cached)",
                    n: n,
                    contender: name
                )
            )
            let batch = Array(keys.prefix(100))
            results.append(
                summarise(
                    try timeEach(count: name.hasSuffix("synchronous") ? 30 : (quick ? 50 : 300)) { index in
                        try store.transaction { preferences in
                            for key in batch {
                                preferences[key] = index &* 1_000 &+ 7
                            }
                        }
                    },
                    workload: "transaction of 100 keys",
                    n: n,
                    contender: name
                )
            )
            if sink == 42 { print("") }  // keeps the reads from being optimised away
        }
        return results
    }

    private func fileStore(_ durability: PreferencesStore.Durability) throws -> PreferencesStore {
        let url = scratch.appendingPathComponent("\(durability)-\(n)-\(UUID().uuidString).store")
        return try PreferencesStore(fileURL: url, durability: durability)
    }
}

/// Opening a store of `n` keys, about 100 bytes each, in a process that has not opened it before.
struct OpenBenchmark {
    let n: Int
    let runs: Int
    let scratch: URL

    func run() throws -> [Result] {
        let url = scratch.appendingPathComponent("open-\(n).store")
        let store = try PreferencesStore(fileURL: url)
        let padding = String(repeating: "x", count: 80)
        try store.transaction { preferences in
            for index in 0..<n {
                preferences[PreferenceKey<String>("key\(index)", default: "")] = "\(index) \(padding)"
            }
        }
        var samples: [Double] = []
        for _ in 0..<runs {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["--open-child", url.path]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            if let nanoseconds = Double(
                String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            {
                samples.append(nanoseconds)
            }
        }
        let bytes = ["", ".log"].reduce(0) { total, suffix in
            total + ((try? FileManager().attributesOfItem(atPath: url.path + suffix)[.size] as? Int) ?? 0)
        }
        return [
            summarise(
                samples,
                workload: "open in a fresh process (\(bytes / 1024) KiB)",
                n: n,
                contender: "Preferences file, standard"
            )
        ]
    }

    /// Opens the store and reads one key: what a launch pays before its first preference.
    static func measureInThisProcess(path: String) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        guard let store = try? PreferencesStore(fileURL: URL(fileURLWithPath: path)) else { return .nan }
        _ = store[PreferenceKey<String>("key1", default: "")]
        return Double(DispatchTime.now().uptimeNanoseconds - start)
    }
}

func printTable(_ results: [Result]) {
    var workloads: [String] = []
    for result in results where !workloads.contains(result.workload) {
        workloads.append(result.workload)
    }
    for workload in workloads {
        print("\n\(workload)")
        print(
            "  " + "n".padding(toLength: 8, withPad: " ", startingAt: 0)
                + "contender".padding(toLength: 34, withPad: " ", startingAt: 0)
                + "p50".padding(toLength: 12, withPad: " ", startingAt: 0) + "p95")
        for result in results where result.workload == workload {
            print(
                "  " + "\(result.n)".padding(toLength: 8, withPad: " ", startingAt: 0)
                    + result.contender.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + formatted(result.p50Nanoseconds).padding(toLength: 12, withPad: " ", startingAt: 0)
                    + formatted(result.p95Nanoseconds))
        }
    }
}
