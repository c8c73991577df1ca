import Foundation
import Preferences

/// How long a value another process writes takes to reach an observer in this one.
///
/// A child process commits a value and prints the monotonic clock as its write started; this
/// process, observing the key, reads the same clock when the change arrives. The writer wakes the
/// observing process's watcher, which sleeps on the commit count they share (a futex on Linux).
///
/// From the write's start, not its return: an observer may hear of the commit before the writer's
/// call has returned, and a figure from the return would then be negative. The child writes once
/// before the timed write, so that the figure leaves out a fresh process's first write (which maps
/// the log) as it leaves out opening the store.
struct CrossProcessBenchmark {
    let runs: Int
    let scratch: URL

    static let key = PreferenceKey<Int>("crossProcess", default: 0)
    static let warmUpKey = PreferenceKey<Int>("crossProcessWarmUp", default: 0)

    func run() throws -> [Result] {
        let url = scratch.appendingPathComponent("cross-process.store")
        let store = try PreferencesStore(fileURL: url)
        let arrivals = Locked<[Int: UInt64]>([:])
        let observation = store.observe(Self.key) { value, _ in
            let now = DispatchTime.now().uptimeNanoseconds
            arrivals.withLock { $0[value] = now }
        }
        defer { observation.cancel() }
        var samples: [Double] = []
        for run in 1...runs {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["--write-child", url.path, "\(run)"]
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            guard
                let started = UInt64(
                    String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            else { continue }
            let deadline = Date().addingTimeInterval(2)
            while arrivals.withLock({ $0[run] }) == nil, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.001)
            }
            if let arrived = arrivals.withLock({ $0[run] }) {
                samples.append(Double(arrived) - Double(started))
            }
        }
        var result = summarise(
            samples,
            workload: "another process's write reaches an observer",
            n: 1,
            contender: "Preferences file, standard"
        )
        result.p99Nanoseconds = percentile(samples, 0.99)
        return [result]
    }

    /// The child's side: commit one value and print the clock as the write started.
    static func writeInThisProcess(path: String, value: Int) -> String {
        guard let store = try? PreferencesStore(fileURL: URL(fileURLWithPath: path)) else { return "" }
        // A key no one observes: it wakes the observer's watcher, which takes it in and delivers
        // nothing, before the timed write.
        try? store.setValue(value, for: warmUpKey)
        Thread.sleep(forTimeInterval: 0.01)
        let started = DispatchTime.now().uptimeNanoseconds
        do {
            try store.setValue(value, for: key)
        } catch {
            return ""
        }
        return "\(started)"
    }
}

/// A value behind a lock, for the benchmark's own bookkeeping across threads.
final class Locked<Value>: @unchecked Sendable {
    // `@unchecked` because `NSLock` guards every access to `value`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
