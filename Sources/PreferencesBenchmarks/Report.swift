import Foundation

/// The baselines each Preferences figure is compared with, in the report's columns.
private let baselines = [
    "UserDefaults, set (not on disk)", "UserDefaults, set + synchronize()", "hand-written JSON file",
]

/// Prints one table per workload: each contender's p50 and p95, and for this package's contenders
/// how many times faster than each baseline their median is.
func printReport(_ results: [Result]) {
    var workloads: [String] = []
    for result in results where !workloads.contains(result.workload) {
        workloads.append(result.workload)
    }
    for workload in workloads {
        let rows = results.filter { $0.workload == workload }
        print("\n\(workload)")
        if let size = rows.first, let bytes = size.bytes {
            print(
                "  \(size.contender): \(bytes) bytes at the end, \(size.largestBytes ?? 0) at most; live data \(size.liveBytes ?? 0) bytes"
            )
            continue
        }
        let hasBaselines = rows.contains { baselines.contains($0.contender) }
        let hasTails = rows.contains { $0.p99Nanoseconds != nil }
        var header = "  " + pad("n", 7) + pad("contender", 35) + pad("p50", 11) + pad("p95", 11)
        if hasTails {
            header += pad("p99", 11)
        }
        if hasBaselines {
            header += "vs UserDefaults   vs UD+synchronize   vs JSON file"
        }
        print(header)
        for row in rows {
            var line =
                "  " + pad("\(row.n)", 7) + pad(row.contender, 35) + pad(formatted(row.p50Nanoseconds), 11)
                + pad(formatted(row.p95Nanoseconds), 11)
            if hasTails {
                line += pad(row.p99Nanoseconds.map(formatted) ?? "", 11)
            }
            if hasBaselines && row.contender.hasPrefix("Preferences") {
                for (index, baseline) in baselines.enumerated() {
                    let base = rows.first { $0.contender == baseline && $0.n == row.n }
                    let ratio = base.map { $0.p50Nanoseconds / row.p50Nanoseconds }
                    line += pad(ratio.map { String(format: "%.1f×", $0) } ?? "-", index == 2 ? 0 : [18, 20][index])
                }
            }
            print(line)
        }
    }
    print("\nRatios are how many times faster the Preferences median is than the baseline's (below 1: slower).")
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text.padding(toLength: width, withPad: " ", startingAt: 0)
}
