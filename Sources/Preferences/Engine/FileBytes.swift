#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file's bytes, read-only, in memory this object owns: the file mapped, or a copy.
///
/// A snapshot is read through a mapping: reading it into an array would have the kernel zero and
/// copy every page, which takes longer than checking and indexing it (about 0.5 ms for a
/// megabyte on the machine `BENCHMARKS.md` describes, against 0.1 ms to map it). The library
/// never changes a snapshot in place (a compaction writes a new file and renames it over the old
/// one, whose mapping stays valid), so the bytes stay as they were checked. Another program
/// shortening the file under the mapping makes the next read of a page past its end end the
/// process with `SIGBUS`, as the log's mapping does (see ``LogMapping``); the library installs
/// no handler for it.
// `@unchecked`: the memory is never written after `init`, and is released only in `deinit`, when
// no reference to it is left.
final class FileBytes: @unchecked Sendable {
    let buffer: UnsafeBufferPointer<UInt8>
    private let isMapped: Bool

    /// A copy of `bytes`.
    init(copying bytes: some Collection<UInt8>) {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        buffer = UnsafeBufferPointer(copy)
        isMapped = false
    }

    /// The mapping of `length` bytes at `address`, which this object unmaps.
    init(mappedAt address: UnsafeRawPointer, length: Int) {
        buffer = UnsafeBufferPointer(start: address.bindMemory(to: UInt8.self, capacity: length), count: length)
        isMapped = true
    }

    deinit {
        if isMapped {
            munmap(UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count)
        } else {
            buffer.deallocate()
        }
    }

    var count: Int { buffer.count }

    /// The bytes in `range`, as an array: for the readers that take one.
    subscript(range: Range<Int>) -> [UInt8] {
        Array(UnsafeBufferPointer(rebasing: buffer[range]))
    }

    /// Every byte, as an array: for a damaged file's copy, and the decoders that take one.
    var array: [UInt8] { self[0..<buffer.count] }
}
