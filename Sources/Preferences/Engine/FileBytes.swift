#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A file's bytes, read-only, in memory this object owns: the file mapped, or a copy.
///
/// Where writers share memory (Linux), a snapshot is read through a mapping: reading it into memory
/// has the kernel zero and copy every page, which takes longer than checking and indexing it (see
/// `BENCHMARKS.md`). The library never changes a snapshot in place (a compaction writes a new file
/// and renames it over the old one, whose mapping stays valid), so the bytes stay as they were
/// checked. Another program
/// shortening the file under the mapping, or a page the disk cannot read, makes the next read of
/// that page end the process with `SIGBUS`, as with the log's mapping (see ``LogMapping``); the
/// library installs no handler for it.
// `@unchecked`: the memory is never written after `init`, and is released only in `deinit`, when
// no reference to it is left.
final class FileBytes: @unchecked Sendable {
    let buffer: UnsafeBufferPointer<UInt8>
    /// What to give back: the mapping (at `buffer`), or the memory allocated.
    private let allocation: UnsafeMutableBufferPointer<UInt8>?

    /// A copy of `bytes`.
    convenience init(copying bytes: some Collection<UInt8>) {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        self.init(adopting: copy, count: bytes.count)
    }

    /// The first `count` bytes of `allocation`, initialised that far, which this object
    /// deallocates.
    init(adopting allocation: UnsafeMutableBufferPointer<UInt8>, count: Int) {
        buffer = UnsafeBufferPointer(rebasing: UnsafeBufferPointer(allocation)[..<count])
        self.allocation = allocation
    }

    /// The mapping of `length` bytes at `address`, which this object unmaps.
    init(mappedAt address: UnsafeRawPointer, length: Int) {
        buffer = UnsafeBufferPointer(start: address.bindMemory(to: UInt8.self, capacity: length), count: length)
        allocation = nil
    }

    deinit {
        if let allocation {
            allocation.deallocate()
        } else {
            // A read-only mapping unmaps whatever the file became: nothing to report, or to do.
            munmap(UnsafeMutableRawPointer(mutating: buffer.baseAddress), buffer.count)
        }
    }

    var count: Int { buffer.count }

    /// A copy of the bytes in `range`, as an array: for the readers that take one.
    func copy(of range: Range<Int>) -> [UInt8] {
        Array(UnsafeBufferPointer(rebasing: buffer[range]))
    }

    /// A copy of every byte, as an array: for a damaged file's copy, and the decoders that take one.
    var array: [UInt8] { copy(of: 0..<buffer.count) }
}
