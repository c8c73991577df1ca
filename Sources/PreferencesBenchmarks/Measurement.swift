import Foundation

/// The timings of one workload for one contender: per-operation nanoseconds, summarised.
struct Result: Encodable {
    var workload: String
    var n: Int
    var contender: String
    var p50Nanoseconds: Double
    var p95Nanoseconds: Double
    /// For a latency, where the tail matters: the 99th percentile.
    var p99Nanoseconds: Double? = nil
    /// For a file-size workload: the files' size at the end, the largest seen, and the live data.
    var bytes: Int? = nil
    var largestBytes: Int? = nil
    var liveBytes: Int? = nil

    /// The names scripts read in `--json` output.
    enum CodingKeys: String, CodingKey {
        case workload, n, contender
        case p50Nanoseconds = "p50_ns"
        case p95Nanoseconds = "p95_ns"
        case p99Nanoseconds = "p99_ns"
        case bytes
        case largestBytes = "largest_bytes"
        case liveBytes = "live_bytes"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(workload, forKey: .workload)
        try container.encode(n, forKey: .n)
        try container.encode(contender, forKey: .contender)
        if p50Nanoseconds.isFinite {
            try container.encode(p50Nanoseconds, forKey: .p50Nanoseconds)
            try container.encode(p95Nanoseconds, forKey: .p95Nanoseconds)
            try container.encodeIfPresent(p99Nanoseconds, forKey: .p99Nanoseconds)
        }
        try container.encodeIfPresent(bytes, forKey: .bytes)
        try container.encodeIfPresent(largestBytes, forKey: .largestBytes)
        try container.encodeIfPresent(liveBytes, forKey: .liveBytes)
    }
}

/// Times `operation` one call at a time, `count` calls, after `warmUp` calls that are not counted.
///
/// For operations that take microseconds or more, where the clock's ~25 ns read is noise.
func timeEach(count: Int, warmUp: Int = 10, _ operation: (Int) throws -> Void) rethrows -> [Double] {
    for index in 0..<warmUp {
        try operation(index)
    }
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for index in 0..<count {
        let start = DispatchTime.now().uptimeNanoseconds
        try operation(warmUp + index)
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - start))
    }
    return samples
}

/// Times `operation` in batches of `batch` calls, and gives each batch's time per call.
///
/// For operations of tens of nanoseconds, which a clock read per call would swamp.
func timeBatches(samples: Int, batch: Int, _ operation: (Int) throws -> Void) rethrows -> [Double] {
    for index in 0..<batch {
        try operation(index)
    }
    var result: [Double] = []
    result.reserveCapacity(samples)
    for sample in 0..<samples {
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<batch {
            try operation(sample &* batch &+ index)
        }
        result.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(batch))
    }
    return result
}

func percentile(_ samples: [Double], _ fraction: Double) -> Double {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
}

func summarise(_ samples: [Double], workload: String, n: Int, contender: String) -> Result {
    Result(
        workload: workload,
        n: n,
        contender: contender,
        p50Nanoseconds: percentile(samples, 0.5),
        p95Nanoseconds: percentile(samples, 0.95)
    )
}

/// A duration in the unit that reads best: ns, µs or ms.
func formatted(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: String(format: "%.0f ns", nanoseconds)
    case ..<1_000_000: String(format: "%.2f µs", nanoseconds / 1_000)
    default: String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}
