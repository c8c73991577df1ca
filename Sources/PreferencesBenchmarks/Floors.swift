import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the machine itself costs right now: one small `write(2)` and one `fdatasync`, the floors
/// under a write in each durability mode.
func measureFloors(in directory: URL, count: Int) -> [Result] {
    let path = directory.appendingPathComponent("floor").path
    let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else { return [] }
    defer {
        close(descriptor)
        unlink(path)
    }
    let record = [UInt8](repeating: 0x2A, count: 48)
    let writes = timeEach(count: count) { _ in
        _ = record.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
    let syncs = timeEach(count: max(count / 10, 20)) { _ in
        _ = record.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        #if canImport(Darwin)
            _ = fcntl(descriptor, F_FULLFSYNC)
        #else
            _ = fdatasync(descriptor)
        #endif
    }
    return [
        summarise(writes, workload: "floor: write(2) of 48 bytes", n: 1, contender: "system"),
        summarise(syncs, workload: "floor: write(2) + fdatasync", n: 1, contender: "system"),
    ]
}
