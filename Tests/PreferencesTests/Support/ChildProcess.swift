import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A class of the test bundle, for finding the bundle on macOS (see `ChildProcess.productsDirectory`).
private final class TestBundleMarker {}

/// An executable of this package, built beside the test bundle, run as a real child process.
struct ChildProcess {
    let process: Process

    /// Whether a running process's wake-ups (`RunningProcess.voluntaryContextSwitches`) can be
    /// counted here: Linux's `/proc` has them.
    static var canCountWakeUps: Bool { FileManager().fileExists(atPath: "/proc/self/task") }

    /// Whether the tests run under ThreadSanitizer, whose own thread wakes ten times a second in
    /// every process.
    static var isUnderThreadSanitizer: Bool { dlsym(nil, "__tsan_init") != nil }

    /// The executable `name`, found beside the test bundle in the build folder.
    static func executable(_ name: String) -> URL {
        productsDirectory.appendingPathComponent(name)
    }

    /// Where SwiftPM puts the package's products, beside the test bundle.
    ///
    /// On Linux the test runner is that bundle itself. On macOS a helper process (`xctest`, or
    /// SwiftPM's helper for Swift Testing) loads the bundle, so the bundle is found from a class
    /// it holds rather than from the running program.
    static let productsDirectory: URL = {
        #if os(macOS)
            return Bundle(for: TestBundleMarker.self).bundleURL.deletingLastPathComponent()
        #else
            return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        #endif
    }()

    /// Starts `name` with `arguments`, its output discarded and its errors kept.
    static func start(_ name: String, _ arguments: [String]) throws -> ChildProcess {
        let process = Process()
        process.executableURL = executable(name)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = Pipe()
        try process.run()
        return ChildProcess(process: process)
    }

    /// Waits for the process to end; its exit status and what it wrote to standard error.
    func wait() -> (status: Int32, errors: String) {
        let errors = (process.standardError as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: errors, as: UTF8.self))
    }

    /// Runs `name` to its end; its exit status, standard output and standard error.
    static func run(
        _ name: String,
        _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = executable(name)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData, as: UTF8.self)
        )
    }

    /// Starts `name` and collects what it prints, as it prints it.
    ///
    /// For a process that runs until stopped, such as a watch; it is terminated when the returned
    /// value is released.
    static func startCollectingOutput(_ name: String, _ arguments: [String]) throws -> RunningProcess {
        try RunningProcess(executable(name), arguments)
    }

    /// Sends `SIGKILL`: no handler, no cleanup, as when the system ends a process.
    func killAbruptly() {
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A process that runs until stopped, with what it has printed so far.
final class RunningProcess {
    private let process = Process()
    private let pipe = Pipe()
    private let printed = Locked("")

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = pipe
        pipe.fileHandleForReading.readabilityHandler = { [printed] handle in
            let data = handle.availableData
            printed.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    deinit {
        pipe.fileHandleForReading.readabilityHandler = nil
        process.terminate()
        process.waitUntilExit()
    }

    var output: String {
        printed.withLock { $0 }
    }

    /// Whether the process is still running.
    var isRunning: Bool {
        process.isRunning
    }

    /// Ends the process with `SIGKILL`, as the system ends a process, and waits for it.
    func killAbruptly() {
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// How many times the process goes to sleep, and so wakes, in `seconds` once it is idle (see
    /// ``waitUntilIdle()``).
    func wakeUps(whileIdleFor seconds: Double) -> Int {
        waitUntilIdle()
        let before = voluntaryContextSwitches
        Thread.sleep(forTimeInterval: seconds)
        return voluntaryContextSwitches - before
    }

    /// Waits, up to five seconds, until the process has gone 200 ms without going to sleep: done
    /// starting, it waits for what it was started to wait for.
    func waitUntilIdle() {
        let deadline = Date().addingTimeInterval(5)
        var last = voluntaryContextSwitches
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            let now = voluntaryContextSwitches
            if now == last { return }
            last = now
        }
    }

    /// How many times the process's threads have gone to sleep so far: voluntary context switches.
    ///
    /// Each is a wake-up to come. Preemption, which a busy machine adds, is not counted.
    var voluntaryContextSwitches: Int {
        let tasks = (try? FileManager().contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let status =
                (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/task/\(task)/status", encoding: .utf8))
                ?? ""
            return total
                + status.split(separator: "\n").filter { $0.hasPrefix("voluntary_ctxt_switches") }
                .compactMap { Int($0.split(separator: "\t").last ?? "") }.reduce(0, +)
        }
    }

    /// Waits up to ten seconds for `text` to appear in the output, and records an issue if it does not.
    func waitFor(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date().addingTimeInterval(10)
        while !output.contains(text) {
            guard Date() < deadline else {
                Issue.record("'\(text)' did not appear in: \(output)", sourceLocation: sourceLocation)
                return
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }
}
