// A libFuzzer target over the decoders that read bytes from disk: the snapshot, the log, and a
// bare record payload. Built together with the library's sources as one module by Fuzz/run.sh,
// so that it reaches the internal decoders. Any crash, hang or sanitizer report is a bug.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoders(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let contents = try? SnapshotFile.decode(bytes), contents.damage == nil {
        // What decodes cleanly must encode back to the same bytes.
        precondition(SnapshotFile.encode(contents.entries, generation: contents.generation) == bytes)
    }
    _ = try? LogFile.replay(bytes)
    var reader = ByteReader(bytes, range: 0..<bytes.count)
    _ = try? Record(payload: &reader)
    return 0
}
