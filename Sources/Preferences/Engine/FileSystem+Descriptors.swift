#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// An open file that the engine appends to and reads from: the log.
final class OpenFile: Sendable {
    let path: String
    let descriptor: Int32
    /// The device and inode, to tell whether the path still names this file after a compaction.
    let identity: FileIdentity

    init(path: String, descriptor: Int32, identity: FileIdentity) {
        self.path = path
        self.descriptor = descriptor
        self.identity = identity
    }

    deinit {
        close(descriptor)
    }
}

/// A file's device and inode: the same path names another file once a new one is renamed over it.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init(_ status: stat) {
        // Truncating: `dev_t` is a signed 32-bit integer on Apple platforms, where a device number
        // may have its top bit set.
        device = UInt64(truncatingIfNeeded: status.st_dev)
        inode = UInt64(truncatingIfNeeded: status.st_ino)
    }
}

extension FileSystem {
    /// Opens a file for reading and, unless `readOnly`, writing; `nil` if there is no file.
    func openExisting(at path: String, readOnly: Bool) throws(PreferencesError) -> OpenFile? {
        let flags = (readOnly ? O_RDONLY : O_RDWR) | O_CLOEXEC
        let descriptor = try check(readOnly ? .open : .openForWriting, path, allowing: ENOENT) { open(path, flags) }
        if descriptor == -1 { return nil }
        var status = stat()
        do throws(PreferencesError) {
            try check(.read, path) { fstat(descriptor, &status) }
        } catch {
            close(descriptor)
            throw error
        }
        return OpenFile(path: path, descriptor: descriptor, identity: FileIdentity(status))
    }

    /// The identity of the file a path names now, or `nil` if there is none.
    func identity(at path: String) -> FileIdentity? {
        var status = stat()
        return stat(path, &status) == 0 ? FileIdentity(status) : nil
    }

    /// An open file's size, and how many names it has: none once it was deleted or renamed over.
    func status(of file: OpenFile) throws(PreferencesError) -> (size: Int, linkCount: Int) {
        let status = try status(ofDescriptor: file.descriptor, path: file.path)
        return (Int(status.st_size), Int(status.st_nlink))
    }

    /// What `fstat` says of the file open as `descriptor`, whose path is `path`.
    func status(ofDescriptor descriptor: Int32, path: String) throws(PreferencesError) -> stat {
        var status = stat()
        try check(.read, path) { fstat(descriptor, &status) }
        return status
    }

    /// The bytes of the file from `offset` to its end, or the first `limit` of them.
    ///
    /// With a limit, read straight into an array of that size; without one, into an array of the
    /// size the file has, then to its end if it grew.
    func contents(of file: OpenFile, from offset: Int, limit: Int = .max) throws(PreferencesError) -> [UInt8] {
        if limit < .max {
            return try contents(of: file, from: offset, upTo: limit)
        }
        // As many bytes as the file holds now, read straight into the array's memory, and then
        // whatever it grew by meanwhile: reading in chunks would copy a long log again with each.
        let size = try status(of: file).size
        var bytes = try contents(of: file, from: offset, upTo: max(size - offset, 0) + 1)
        while bytes.count > max(size - offset, 0) {
            let more = try contents(of: file, from: offset + bytes.count, upTo: 64 * 1024)
            if more.isEmpty { return bytes }
            bytes += more
        }
        return bytes
    }

    /// The first `limit` bytes of the file from `offset`, or fewer if it ends first.
    private func contents(of file: OpenFile, from offset: Int, upTo limit: Int) throws(PreferencesError) -> [UInt8] {
        var failure: PreferencesError?
        let bytes = [UInt8](unsafeUninitializedCapacity: max(limit, 0)) { buffer, count in
            while count < limit {
                do throws(PreferencesError) {
                    let read = try check(.read, file.path) {
                        Int32(
                            clamping: pread(
                                file.descriptor, buffer.baseAddress! + count, limit - count, off_t(offset + count)))
                    }
                    if read == 0 { return }
                    count += Int(read)
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure {
            throw failure
        }
        return bytes
    }

    /// Writes `bytes` at `offset`: one `pwrite(2)`, unless the system writes less than asked.
    func store(_ bytes: UnsafeRawBufferPointer, in file: OpenFile, at offset: Int) throws(PreferencesError) {
        try store(bytes, to: file.descriptor, path: file.path, at: offset)
    }

    /// Writes an array's bytes at `offset`, as ``store(_:in:at:)-(UnsafeRawBufferPointer,_,_)`` does.
    func store(_ bytes: [UInt8], in file: OpenFile, at offset: Int) throws(PreferencesError) {
        let failure = bytes.withUnsafeBytes { buffer -> PreferencesError? in
            do throws(PreferencesError) {
                try store(buffer, in: file, at: offset)
                return nil
            } catch {
                return error
            }
        }
        if let failure {
            throw failure
        }
    }

    /// Writes all of `bytes` at `offset` of the file open as `descriptor`, whose path is `path`.
    func store(
        _ bytes: UnsafeRawBufferPointer,
        to descriptor: Int32,
        path: String,
        at offset: Int
    ) throws(PreferencesError) {
        var written = 0
        while written < bytes.count {
            let count = try check(.write, path) {
                Int32(
                    clamping: pwrite(
                        descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset + written))
                )
            }
            written += Int(count)
        }
    }

    func truncate(_ file: OpenFile, to length: Int) throws(PreferencesError) {
        try check(.truncate, file.path) { ftruncate(file.descriptor, off_t(length)) }
    }

    /// Flushes a file's data to stable storage: `fdatasync`, or `F_FULLFSYNC` on Apple platforms.
    func synchronize(_ file: OpenFile) throws(PreferencesError) {
        try check(.fsync, file.path) { Self.synchronizeData(file.descriptor) }
    }
}
