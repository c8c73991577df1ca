import Foundation
import Preferences

/// Opening a store of `n` keys, about 100 bytes each, in a process that has not opened it before,
/// and reading one key: what a launch pays before its first preference.
struct OpenBenchmark {
    let n: Int
    let runs: Int
    let scratch: URL
    /// Whether to measure this package's store alone (see ``Workloads/onlyPreferences``).
    var onlyPreferences = false

    func run() throws -> [Result] {
        let padding = String(repeating: "x", count: 80)
        let storeURL = scratch.appendingPathComponent("open-\(n).store")
        let store = try PreferencesStore(fileURL: storeURL)
        try store.transaction { preferences in
            for index in 0..<n {
                preferences[PreferenceKey<String>("key\(index)", default: "")] = "\(index) \(padding)"
            }
        }
        let bytes = FileSizeBenchmark.size(of: storeURL)
        let floor = try measure(Self.floor, kind: "floor", at: storeURL.path, bytes: bytes)
        if onlyPreferences {
            let fullURL = try storeWithFullLog()
            return [
                try measure("Preferences file, standard", kind: "preferences", at: storeURL.path, bytes: bytes),
                try measure(
                    "Preferences file, log about to be compacted", kind: "preferences", at: fullURL.path,
                    bytes: FileSizeBenchmark.size(of: fullURL)),
                floor,
            ]
        }
        let suite = "open-\(n)-\(UUID().uuidString)"
        let defaults = UserDefaults(suiteName: suite)!
        for index in 0..<n {
            defaults.set("\(index) \(padding)", forKey: "key\(index)")
        }
        defaults.synchronize()
        let jsonURL = scratch.appendingPathComponent("open-\(n).json")
        let json = try JSONFileContender(url: jsonURL)
        for index in 0..<n {
            try json.write("\(index) \(padding)", stringAt: index)
        }
        let kinds: [(String, String, String)] = [
            ("Preferences file, standard", "preferences", storeURL.path),
            ("UserDefaults", "defaults", suite),
            ("hand-written JSON file", "json", jsonURL.path),
        ]
        return try kinds.map { contender, kind, location in
            try measure(contender, kind: kind, at: location, bytes: bytes)
        } + [floor]
    }

    /// The contender that opens nothing: a fresh process's first dictionary and file URL path.
    static let floor = "floor: first dictionary and URL in a process"

    /// A store of the same keys whose log is 95 % of the way to its next compaction: what opening
    /// costs at its most, when it replays the longest log there is.
    private func storeWithFullLog() throws -> URL {
        let padding = String(repeating: "x", count: 80)
        let url = scratch.appendingPathComponent("open-\(n)-full.store")
        let store = try PreferencesStore(fileURL: url)
        let keys = (0..<n).map { PreferenceKey<String>("key\($0)", default: "") }
        try store.transaction { preferences in
            for index in 0..<n {
                preferences[keys[index]] = "\(index) \(padding)"
            }
        }
        try store.compact()
        // Writes of new values about the size of the first, counted until the next compaction
        // replaces the snapshot, then 95 % as many again. Each value differs from the one its key
        // holds: a write of the value a key already holds changes nothing, and would be counted
        // without growing the log.
        func snapshotFile() throws -> Int? {
            try FileManager().attributesOfItem(atPath: url.path)[.systemFileNumber] as? Int
        }
        let compacted = try snapshotFile()
        var writesPerCompaction = 0
        while try snapshotFile() == compacted {
            // A log holds no more than the snapshot and 64 KiB: a compaction long overdue failed.
            guard writesPerCompaction < 10 * n + 10_000 else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
            }
            writesPerCompaction += 1
            try store.setValue("overwrite \(writesPerCompaction) \(padding)", for: keys[writesPerCompaction % n])
        }
        for index in 0..<(writesPerCompaction * 95 / 100) {
            try store.setValue("overwrite \(writesPerCompaction + index) \(padding)", for: keys[index % n])
        }
        return url
    }

    private func measure(_ contender: String, kind: String, at location: String, bytes: Int) throws -> Result {
        summarise(
            try (0..<runs).compactMap { _ in try Self.measureInChild(kind: kind, location: location) },
            workload: "open in a fresh process and read a key (\(bytes / 1024) KiB)",
            n: n,
            contender: contender
        )
    }

    private static func measureInChild(kind: String, location: String) throws -> Double? {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--open-child", kind, location]
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        return Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The child's side: open the store and read one key, timed from before the open.
    ///
    /// What was opened is kept until the clock has been read: closing it is not part of opening.
    static func measureInThisProcess(kind: String, location: String) -> Double {
        var opened: [AnyObject] = []
        defer { withExtendedLifetime(opened) {} }
        let start = DispatchTime.now().uptimeNanoseconds
        switch kind {
        case "preferences":
            guard let store = try? PreferencesStore(fileURL: URL(fileURLWithPath: location)) else { return .nan }
            _ = store[PreferenceKey<String>("key1", default: "")]
            opened.append(store)
        case "floor":
            // What any Swift code pays the first time in a process it makes a dictionary and a
            // file URL's path, as opening a store does: the least an open in a fresh process costs.
            var paths: [String: Int] = [:]
            paths[URL(fileURLWithPath: location).path] = 1
            if paths.count == 2 { print("") }
        case "defaults":
            let defaults = UserDefaults(suiteName: location)
            _ = defaults?.string(forKey: "key1")
            opened.append(defaults as AnyObject)
        default:
            guard let json = try? JSONFileContender(url: URL(fileURLWithPath: location)) else { return .nan }
            _ = json.readString(at: 1)
            opened.append(json as AnyObject)
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start)
    }
}

/// Running 100 migrations that the ledger already records, as every launch after the first does.
struct MigrationRerunBenchmark {
    let scratch: URL
    let samples: Int

    func run() throws -> [Result] {
        let url = scratch.appendingPathComponent("migrations.store")
        let store = try PreferencesStore(fileURL: url)
        let migrations = (0..<100).map { index in
            MigrateName(
                from: PreferenceKey<Int>("old\(index)", default: 0), to: PreferenceKey<Int>("new\(index)", default: 0))
        }
        try store.runMigrations(migrations)
        let before = try FileManager().attributesOfItem(atPath: url.path + ".log")[.size] as? Int
        let timings = try timeEach(count: samples) { _ in
            let applied = try store.runMigrations(migrations)
            precondition(applied.isEmpty, "a rerun applied a migration")
        }
        let after = try FileManager().attributesOfItem(atPath: url.path + ".log")[.size] as? Int
        precondition(before == after, "a rerun wrote to the log")
        return [
            summarise(
                timings, workload: "rerun 100 applied migrations (no write)", n: 100,
                contender: "Preferences file, standard")
        ]
    }
}

/// How large the files grow when 1,000 keys are overwritten many times, against the live data.
struct FileSizeBenchmark {
    let scratch: URL
    let overwrites: Int

    func run() throws -> [Result] {
        let url = scratch.appendingPathComponent("size.store")
        let store = try PreferencesStore(fileURL: url)
        let keys = (0..<1_000).map { PreferenceKey<String>("key\($0)", default: "") }
        var largest = 0
        for round in 0..<overwrites {
            try store.setValue(benchmarkString(round), for: keys[round % keys.count])
            if round % 1_000 == 999 {
                largest = max(largest, Self.size(of: url))
            }
        }
        // The live data: the same 1,000 values written once, in one record of a new store.
        let liveURL = scratch.appendingPathComponent("live.store")
        let live = try PreferencesStore(fileURL: liveURL)
        try live.transaction { preferences in
            for index in 0..<keys.count {
                preferences[keys[index]] = store[keys[index]]
            }
        }
        let liveBytes = Self.size(of: liveURL)
        return [
            Result(
                workload: "file size after \(overwrites) overwrites of 1,000 keys",
                n: 1_000,
                contender: "Preferences file, standard",
                p50Nanoseconds: .nan,
                p95Nanoseconds: .nan,
                bytes: Self.size(of: url),
                largestBytes: largest,
                liveBytes: liveBytes
            )
        ]
    }

    static func size(of url: URL) -> Int {
        ["", ".log"].reduce(0) { total, suffix in
            total + ((try? FileManager().attributesOfItem(atPath: url.path + suffix)[.size] as? Int) ?? 0)
        }
    }
}
