import Dispatch
import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Changes committed by one process reaching another's observers: woken by the writer, with no
/// timer, and nothing at all while nothing changes.
@Suite(.tags(.childProcesses), .enabled(if: LockFile.canWait, "this platform watches by polling"))
struct CrossProcessDeliveryTests {
    private let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))

    @Test(.enabled(if: ChildProcess.canCountWakeUps, "wake-ups are counted through Linux's /proc"))
    func anIdleProcessWithAnObserverDoesNotWakeUp() throws {
        let directory = try TemporaryDirectory()
        let observer = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["observe", directory.storeURL.path])
        observer.waitFor("ready")
        // A 50 ms poll would make about 60.
        let wakeUps = observer.wakeUps(whileIdleFor: 3)
        #expect(
            wakeUps <= (ChildProcess.isUnderThreadSanitizer ? 35 : 2),
            "\(wakeUps) wake-ups in 3 s with nothing to deliver")

        try PreferencesStore(fileURL: directory.storeURL).setValue(1, for: counter)
        observer.waitFor("value 1 ")
    }

    /// A writer that finds the lock file deleted moves to a new one, and wakes the watcher asleep on
    /// the old one so that it moves too.
    @Test func writesArriveAfterAnotherProgramDeletedTheLockFile() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        let observer = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["observe", directory.storeURL.path])
        observer.waitFor("ready")
        try store.setValue(1, for: counter)
        observer.waitFor("value 1 ")
        #expect(unlink(directory.lockURL.path) == 0)
        try store.setValue(2, for: counter)
        observer.waitFor("value 2 ")
        try store.setValue(3, for: counter)
        observer.waitFor("value 3 ")
    }

    @Test func anotherProcesssWritesArriveWithinMilliseconds() throws {
        let directory = try TemporaryDirectory()
        let observer = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["observe", directory.storeURL.path])
        observer.waitFor("ready")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        var latencies: [Double] = []
        for value in 1...200 {
            try store.setValue(value, for: counter)
            let written = DispatchTime.now().uptimeNanoseconds
            observer.waitFor("value \(value) at ")
            let line = try #require(observer.output.split(separator: "\n").last { $0.hasPrefix("value \(value) at ") })
            let arrived = try #require(UInt64(line.split(separator: " ").last ?? ""))
            latencies.append(Double(arrived) - Double(written))
        }
        latencies.sort()
        let median = latencies[latencies.count / 2] / 1e6
        let p99 = latencies[latencies.count * 99 / 100] / 1e6
        // Generous bounds for a busy machine; the benchmark measures the real figures.
        #expect(median < 20, "median \(median) ms")
        #expect(p99 < 200, "p99 \(p99) ms")
    }
}
