import Foundation
import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// preferences-benchmarks: this library side by side with UserDefaults and a hand-written JSON file
// store, in one run on one machine.
//
//   swift run -c release preferences-benchmarks [--quick] [--json] [--cross-process] [--sizes N,...]
//   swift run -c release preferences-benchmarks --growth   # this library alone, 100 to 100,000 keys
//   swift run -c release preferences-benchmarks --open     # opening alone, 100 to 100,000 keys
//   swift run -c release preferences-benchmarks --sync     # sync through a folder, 1 to 10,000 keys
//   Scripts/count-instructions      (instructions per operation, counted by callgrind)
//
// Prints the median (p50) and 95th percentile (p95) time per operation for each workload and
// contender, each Preferences figure's ratio to each baseline, and the machine's floors measured at
// that moment. --quick runs a reduced set in under a minute; --json prints the results as a JSON
// array (workload, n, contender, p50_ns, p95_ns) for scripts; --sizes runs only the per-operation
// workloads, at the sizes given (`--sizes 10000`, with `--quick` in about a minute).

let arguments = CommandLine.arguments
if let index = arguments.firstIndex(of: "--open-child"), index + 2 < arguments.count {
    print(OpenBenchmark.measureInThisProcess(kind: arguments[index + 1], location: arguments[index + 2]))
    exit(0)
}
if let index = arguments.firstIndex(of: "--write-child"), index + 2 < arguments.count {
    print(CrossProcessBenchmark.writeInThisProcess(path: arguments[index + 1], value: Int(arguments[index + 2]) ?? 0))
    exit(0)
}

if let index = arguments.firstIndex(of: "--count"), index + 3 < arguments.count,
    let operation = CountedOperation(rawValue: arguments[index + 1]),
    let n = Int(arguments[index + 2]), let repeats = Int(arguments[index + 3])
{
    let scratch = URL(fileURLWithPath: NSTemporaryDirectory())
        .appendingPathComponent("preferences-count-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager().createDirectory(at: scratch, withIntermediateDirectories: true)
    try CountedRun(operation: operation, n: n, repeats: repeats, scratch: scratch).run()
    try? FileManager().removeItem(at: scratch)
    exit(0)
}

let quick = arguments.contains("--quick")
let growth = arguments.contains("--growth")
let json = arguments.contains("--json")
let scratch = URL(fileURLWithPath: NSTemporaryDirectory())
    .appendingPathComponent("preferences-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager().createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager().removeItem(at: scratch) }
// UserDefaults on Linux keeps its suites in $XDG_CONFIG_HOME: a fresh one, for fresh suites, and
// for the child processes this run starts.
setenv("XDG_CONFIG_HOME", scratch.appendingPathComponent("config").path, 1)

var results: [Result] = []
let sizes = arguments.firstIndex(of: "--sizes").flatMap { index in
    index + 1 < arguments.count ? arguments[index + 1].split(separator: ",").compactMap { Int($0) } : nil
}
if arguments.contains("--sync") {
    for n in sizes ?? [1, 100, 10_000] {
        log("sync, n = \(n)")
        results += try SyncBenchmark(keyCount: n, runs: quick ? 20 : 200, scratch: scratch).run()
    }
} else if arguments.contains("--open") {
    // Opening alone, this package's store, at the sizes given or 100 to 100,000 keys.
    for n in sizes ?? [100, 1_000, 10_000, 100_000] {
        log("open, n = \(n)")
        results += try OpenBenchmark(n: n, runs: quick ? 5 : 21, scratch: scratch, onlyPreferences: true).run()
    }
} else if growth {
    // How each figure grows with the store: this package's standard file store alone.
    for n in [100, 1_000, 10_000, 100_000] {
        log("n = \(n)")
        results += try Workloads(n: n, quick: true, scratch: scratch, onlyPreferences: true).run()
        results += try OpenBenchmark(n: n, runs: 3, scratch: scratch, onlyPreferences: true).run()
    }
} else if let sizes {
    for n in sizes {
        log("n = \(n)")
        results += try Workloads(n: n, quick: quick, scratch: scratch).run()
    }
} else if !arguments.contains("--cross-process") {
    results += measureFloors(in: scratch, count: quick ? 200 : 2_000)
    for n in quick ? [100, 1_000] : [100, 1_000, 10_000] {
        log("n = \(n)")
        results += try Workloads(n: n, quick: quick, scratch: scratch).run()
    }
    for n in quick ? [1_000] : [1_000, 10_000] {
        log("open, n = \(n)")
        results += try OpenBenchmark(n: n, runs: quick ? 3 : 11, scratch: scratch).run()
    }
    log("migrations")
    results += try MigrationRerunBenchmark(scratch: scratch, samples: quick ? 50 : 500).run()
    log("file size")
    results += try FileSizeBenchmark(scratch: scratch, overwrites: quick ? 20_000 : 100_000).run()
}
// `--cross-process` measures only another process's writes reaching an observer.
if sizes == nil && !growth && !arguments.contains("--open") && !arguments.contains("--sync") {
    log("another process's writes")
    results += try CrossProcessBenchmark(runs: quick ? 5 : 200, scratch: scratch).run()
}

if json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(results), as: UTF8.self))
} else {
    printReport(results)
}
