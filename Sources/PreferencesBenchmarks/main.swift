import Foundation
import Preferences

// preferences-benchmarks: how fast the store is, measured on this machine, in one run.
//
//   swift run -c release preferences-benchmarks [--quick] [--json]
//
// Prints the median (p50) and 95th percentile (p95) time per operation for each workload and
// contender, and the machine's floors measured at that moment. --quick runs a reduced set in
// seconds; --json prints the results as a JSON array for scripts.

struct Pet: Codable, Sendable {
    var name: String
    var species: String
    var birthday: Date
    var tags: [String]
    var weight: Double
}

let arguments = CommandLine.arguments
if let index = arguments.firstIndex(of: "--open-child"), index + 1 < arguments.count {
    print(OpenBenchmark.measureInThisProcess(path: arguments[index + 1]))
    exit(0)
}
let quick = arguments.contains("--quick")
let json = arguments.contains("--json")
let sizes = quick ? [100, 1_000] : [100, 1_000, 10_000]
let scratch = URL(fileURLWithPath: NSTemporaryDirectory())
    .appendingPathComponent("preferences-benchmarks-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager().createDirectory(at: scratch, withIntermediateDirectories: true)
defer { try? FileManager().removeItem(at: scratch) }

func log(_ message: String) {
    if !json {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }
}

var results: [Result] = []
results += measureFloors(in: scratch, count: quick ? 200 : 2_000)

for n in sizes {
    log("n = \(n)")
    results += try StoreBenchmarks(n: n, quick: quick, scratch: scratch).run()
}
for n in quick ? [1_000] : [1_000, 10_000] {
    log("open, n = \(n)")
    results += try OpenBenchmark(n: n, runs: quick ? 5 : 15, scratch: scratch).run()
}

if json {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    print(String(decoding: try encoder.encode(results), as: UTF8.self))
} else {
    printTable(results)
}
