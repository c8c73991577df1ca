import Foundation
import Preferences

/// What sync through a folder costs, with `keyCount` synced keys: a round that sends one change, a
/// round that receives it, and how long a change on one device takes to reach another that syncs
/// with ``PreferencesSync/start()``.
///
/// Two stores in this process stand for two devices; the folder is on the same disk, so the figures
/// leave out the program that copies it between machines, which takes seconds.
struct SyncBenchmark {
    let keyCount: Int
    let runs: Int
    let scratch: URL

    func run() throws -> [Result] {
        let directory = scratch.appendingPathComponent("sync-\(keyCount)")
        let folder = directory.appendingPathComponent("shared")
        let keys = (0..<keyCount).map { PreferenceKey<Int>("synced-\($0)", default: 0) }
        let phone = try PreferencesStore(fileURL: directory.appendingPathComponent("phone.store"))
        let laptop = try PreferencesStore(fileURL: directory.appendingPathComponent("laptop.store"))
        try phone.transaction { preferences in
            for key in keys {
                preferences[key] = 1
            }
        }
        let phoneSync = try PreferencesSync(store: phone, keys: keys, folder: folder)
        let laptopSync = try PreferencesSync(store: laptop, keys: keys, folder: folder)
        try phoneSync.synchronize()
        try laptopSync.synchronize()

        var send: [Double] = []
        var receive: [Double] = []
        for run in 0..<runs {
            let key = keys[run % keyCount]
            phone[key] = 100 + run
            send += try timeEach(count: 1, warmUp: 0) { _ in try phoneSync.synchronize() }
            receive += try timeEach(count: 1, warmUp: 0) { _ in try laptopSync.synchronize() }
            guard laptop[key] == 100 + run else { throw SyncBenchmarkFailure(key: key.name) }
        }

        // Changes of one key, each timed from its write on the phone to its arrival on the laptop.
        let key = keys[0]
        let arrivals = Locked<[Int: UInt64]>([:])
        let observation = laptop.observe(key) { value, change in
            guard case .sync = change.origin else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            arrivals.withLock { $0[value] = now }
        }
        defer { observation.cancel() }
        try phoneSync.start()
        try laptopSync.start()
        defer {
            phoneSync.stop()
            laptopSync.stop()
        }
        var convergence: [Double] = []
        for run in 0..<runs {
            let value = 10_000 + run
            let start = DispatchTime.now().uptimeNanoseconds
            phone[key] = value
            let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
            while arrivals.withLock({ $0[value] }) == nil && DispatchTime.now().uptimeNanoseconds < deadline {
                usleep(50)
            }
            guard let arrived = arrivals.withLock({ $0[value] }) else { throw SyncBenchmarkFailure(key: key.name) }
            convergence.append(Double(arrived - start))
        }
        return [
            summary("sync: a round sending one change", send),
            summary("sync: a round receiving it", receive),
            summary("sync: a change reaching a started device", convergence),
        ]
    }

    private func summary(_ workload: String, _ samples: [Double]) -> Result {
        Result(
            workload: workload, n: keyCount, contender: "Preferences", p50Nanoseconds: percentile(samples, 0.5),
            p95Nanoseconds: percentile(samples, 0.95), p99Nanoseconds: percentile(samples, 0.99))
    }
}

/// A change that did not arrive: the benchmark measured nothing.
struct SyncBenchmarkFailure: Error, CustomStringConvertible {
    let key: String
    var description: String { "a synced change of '\(key)' did not arrive" }
}
