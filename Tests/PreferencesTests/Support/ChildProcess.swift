import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An executable of this package, built beside the test bundle, run as a real child process.
struct ChildProcess {
    let process: Process

    /// The executable `name`, found next to the running test bundle.
    static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name)
    }

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

    /// Sends `SIGKILL`: no handler, no cleanup, as when the system ends a process.
    func killAbruptly() {
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
