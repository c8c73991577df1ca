import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The log mapped into memory for appending, with its blocks allocated ahead (Linux).
///
/// An append is a copy into the mapping: no system call. Once copied, the bytes are the kernel's
/// page cache, which every process reads and which survives this one being killed, exactly as
/// bytes written with `pwrite` do. The space after the last record is allocated, so a full disk
/// is an error from ``reserve(_:)``, never a `SIGBUS` in the middle of a copy, and reads as zeros.
///
/// A copy puts the frame's header in last (see ``append(_:at:)``): a writer killed in the middle of
/// one leaves a record whose header is still zeros, which opening reads as a write cut short.
/// Another program shortening the file under the mapping makes the next copy end the process with
/// `SIGBUS`, as with any mapped database; the library installs no handler for it.
final class LogMapping {
    let file: OpenFile
    private let fileSystem: FileSystem
    private var base: UnsafeMutableRawPointer?
    /// The bytes allocated in the file, and so writable through the mapping.
    private(set) var capacity = 0
    /// The address space mapped: `capacity`, and more past the file's end.
    ///
    /// Nothing past `capacity` is read or written until the file is allocated that far, so growing
    /// the log allocates it and leaves the mapping be. Mapping the file again at each allocation
    /// would cost an `munmap`, an `mmap` and the pages touched next faulting in again.
    private var windowLength = 0
    private static let pageSize = 4096
    /// The least address space a mapping takes: a log of this size is about 25,000 small writes.
    private static let minimumWindow = 1 << 20
    /// The least space allocated ahead of the log's end, and the fraction of its size allocated
    /// ahead beyond that, up to ``allocationTarget``: an allocation every few thousand small
    /// writes rather than every hundred.
    private static let minimumAhead = 64 * 1024
    private static let aheadFraction = 4
    /// How much of an allocation has its pages set up for writing at once.
    ///
    /// The rest fault in as they are first written. Setting a page up dirties it, and a flush then
    /// writes its zeros.
    private static let preparedAhead = 64 * 1024
    /// Where the log will be compacted: allocations stop there (unless the log has reached it, as it
    /// does while a failed compaction waits to be tried again), so that a store's files hold little
    /// space the log will never use.
    private let allocationTarget: Int

    init(file: OpenFile, fileSystem: FileSystem, allocationTarget: Int) {
        self.file = file
        self.fileSystem = fileSystem
        self.allocationTarget = allocationTarget
    }

    deinit {
        unmap()
    }

    /// Makes the first `end` bytes of the log writable through the mapping, allocating more of the
    /// file when they are not yet.
    ///
    /// The first 64 KiB allocated are set up for writing at once (see
    /// ``FileSystem/prepareForWriting(_:length:)``): the writes into them take no page fault.
    func reserve(_ end: Int) throws(PreferencesError) {
        guard end > capacity else { return }
        let ahead = end + max(Self.minimumAhead, end / Self.aheadFraction)
        let wanted = end > allocationTarget ? ahead : min(ahead, allocationTarget)
        let length = (wanted + Self.pageSize - 1) / Self.pageSize * Self.pageSize
        try fileSystem.check(.allocate, file.path) {
            let result = preferences_allocate(file.descriptor, Int64(length))
            guard result == 0 else {
                errno = result
                return -1
            }
            return 0
        }
        try mapWindow(covering: length)
        if let base {
            let from = capacity / Self.pageSize * Self.pageSize
            fileSystem.prepareForWriting(base + from, length: min(length - from, Self.preparedAhead))
        }
        capacity = length
    }

    /// Makes the first `end` bytes writable through the mapping if the file already reaches that
    /// far, allocating nothing: what opening does, which must change no file.
    ///
    /// Only those bytes count as reserved, so that the first append allocates what it writes: a
    /// log copied by a tool that leaves holes where it held zeros has no blocks behind them.
    ///
    /// - Returns: Whether the bytes are writable now; `false` when the file is shorter.
    func reserveAllocated(_ end: Int) throws(PreferencesError) -> Bool {
        guard end > capacity else { return true }
        let size = try fileSystem.status(of: file).size
        guard size >= end else { return false }
        try mapWindow(covering: size)
        capacity = end
        return true
    }

    /// Maps the file again, with room to grow, when its mapping does not cover `length` bytes.
    ///
    /// Nothing past the allocated bytes is read or written, so growing the log within the window
    /// leaves the mapping be.
    private func mapWindow(covering length: Int) throws(PreferencesError) {
        guard length > windowLength else { return }
        unmap()
        let window = max(2 * length, Self.minimumWindow)
        try fileSystem.check(.map, file.path) {
            let address = mmap(nil, window, PROT_READ | PROT_WRITE, MAP_SHARED, file.descriptor, 0)
            guard let address, address != MAP_FAILED else { return -1 }
            base = address
            return 0
        }
        windowLength = window
    }

    /// Whether the `count` bytes at `offset`, which must be reserved, are all zeros: nobody wrote there.
    func isZero(at offset: Int, count: Int) -> Bool {
        guard let base else { return false }
        // A word at a time, with no branch but the loop's: this runs twice a write, on a header
        // and on the bytes a frame goes to. The last word overlaps the one before rather than ending in bytes.
        let start = base + offset
        guard count >= 8 else {
            return (0..<count).allSatisfy { start.load(fromByteOffset: $0, as: UInt8.self) == 0 }
        }
        var bits = (start + count - 8).loadUnaligned(as: UInt64.self)
        var at = 0
        while at + 8 < count {
            bits |= (start + at).loadUnaligned(as: UInt64.self)
            at += 8
        }
        return bits == 0
    }

    /// The most bytes a frame encoded in place takes (see ``appendInPlace(_:numbered:stamp:at:)``).
    ///
    /// Room for the record of one key and a value of a few dozen bytes. Looking at 128 bytes rather
    /// than 64 costs a write eight more word loads, in `isZero(at:count:)`.
    static let inPlaceFrameLimit = 128

    /// Encodes `content` straight into the mapping at `offset`, the log's end, as a framed record
    /// numbered `sequence` and stamped with `stamp`: the payload first, then, once it is in place, the header that makes it
    /// a record.
    ///
    /// No buffer and no copy: a write of one key, the common one, encodes its record where it goes.
    /// `offset` must be reserved for ``inPlaceFrameLimit`` bytes. Those bytes are
    /// zeros unless a writer killed mid-copy left a payload there, behind a header of zeros (the
    /// engine adopts records whose header is there before it appends): everything from `offset` on
    /// is cleared then, as ``append(_:at:)``'s caller does.
    ///
    /// - Returns: The frame's size; `nil`, with the bytes left zeros, when the frame does not fit
    ///   in ``inPlaceFrameLimit`` bytes, for the caller to encode it apart and copy it in.
    func appendInPlace(
        _ content: some LogContent,
        numbered sequence: UInt64?,
        stamp: borrowing CommitStamp,
        at offset: Int
    ) -> Int? {
        guard let base else { return nil }
        if !isZero(at: offset, count: Self.inPlaceFrameLimit) {
            clear(at: offset, count: capacity - offset)
        }
        var writer = UnsafeByteWriter(
            UnsafeMutableRawBufferPointer(start: base + offset, count: Self.inPlaceFrameLimit))
        guard RecordFrame.appendHeaderLast(content, numbered: sequence, stamp: stamp, to: &writer) else {
            clear(at: offset, count: Self.inPlaceFrameLimit)
            return nil
        }
        return writer.count
    }

    /// Copies a framed record to `offset`, which must be reserved: the payload first, then, once
    /// it is in place, the header that makes it a record.
    func append(_ frame: UnsafeRawBufferPointer, at offset: Int) {
        guard let base, let source = frame.baseAddress else { return }
        let header = RecordFrame.headerSize
        (base + offset + header).copyMemory(from: source + header, byteCount: frame.count - header)
        preferences_fence_release()
        (base + offset).copyMemory(from: source, byteCount: header)
    }

    /// Sets `count` bytes at `offset`, which must be reserved, back to zeros: takes back a record,
    /// or cuts one a writer left half made.
    func clear(at offset: Int, count: Int) {
        guard let base, count > 0 else { return }
        (base + offset).initializeMemory(as: UInt8.self, repeating: 0, count: count)
    }

    /// Where the log's lock stamp (see ``LogFile``) lies in the mapping; `nil` before anything is reserved.
    ///
    /// Every process that maps the log shares it. Valid until the next ``reserve(_:)`` maps the
    /// file again.
    var lockStamp: UnsafeMutableRawPointer? {
        guard let base, capacity >= LogFile.recordsOffset else { return nil }
        return base + LogFile.lockStampOffset
    }

    private func unmap() {
        guard let base else { return }
        munmap(base, windowLength)
        self.base = nil
        capacity = 0
        windowLength = 0
    }
}
