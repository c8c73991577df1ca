import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// Says when a file in a folder was created, changed, renamed or removed.
///
/// From the platform's file events: inotify on Linux, a Dispatch source on the folder on Apple
/// platforms. Nothing polls.
///
/// On Linux, events that only concern the file named `ignoring` (this device's own, which only
/// its rounds write) are left out, so that a round's own append does not ask for another round.
final class FolderEvents: @unchecked Sendable {
    // `@unchecked` only because Linux's Dispatch does not mark its sources `Sendable`, as Apple's
    // does: a source's methods may be called from any thread. The other properties are `Locked`.
    private let source: any DispatchSourceProtocol
    /// What to call on a change, once resumed; `nil` once cancelled.
    private let onChange = Locked<(@Sendable () -> Void)?>(nil)
    private let isResumed = Locked(false)

    /// Watches the folder at `path`, which must exist; events are handled on `queue`.
    ///
    /// - Throws: A ``PreferencesError`` if the platform cannot watch the folder.
    init(watching path: String, ignoring ownFile: String, queue: DispatchQueue) throws(PreferencesError) {
        let onChange = onChange
        #if canImport(Darwin)
            let descriptor = open(path, O_EVTONLY)
        #else
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        #endif
        guard descriptor >= 0 else { throw Self.failure(watching: path, errorNumber: errno) }
        #if canImport(Darwin)
            // Apple platforms: a Dispatch source on the folder. See CONTRIBUTING, "Apple-only code".
            let events: DispatchSource.FileSystemEvent = [.write, .extend, .rename, .delete, .link]
            source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: descriptor, eventMask: events, queue: queue)
            source.setEventHandler { onChange.withLock { $0 }?() }
        #else
            let events = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM)
            guard inotify_add_watch(descriptor, path, events) >= 0 else {
                let error = errno
                close(descriptor)
                throw Self.failure(watching: path, errorNumber: error)
            }
            source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            source.setEventHandler {
                if Self.readEvents(descriptor).contains(where: { $0 != ownFile }) {
                    onChange.withLock { $0 }?()
                }
            }
        #endif
        source.setCancelHandler { close(descriptor) }
    }

    private static func failure(watching path: String, errorNumber: Int32) -> PreferencesError {
        PreferencesError(
            .fileOperationFailed(path: path, operation: FileSystem.Operation.watch.rawValue, errorNumber: errorNumber))
    }

    /// Starts calling `onChange`, on the queue, after each change.
    func resume(onChange handler: @escaping @Sendable () -> Void) {
        onChange.withLock { $0 = handler }
        resumeOnce()
    }

    /// Stops the events; `onChange` is not called again.
    func cancel() {
        onChange.withLock { $0 = nil }
        // A source is resumed before it is cancelled: Dispatch does not let one go suspended.
        resumeOnce()
        source.cancel()
    }

    private func resumeOnce() {
        let resumes = isResumed.withLock { isResumed in
            defer { isResumed = true }
            return !isResumed
        }
        if resumes {
            source.resume()
        }
    }

    #if !canImport(Darwin)
        /// The names of the files the events waiting on an inotify descriptor concern.
        private static func readEvents(_ descriptor: Int32) -> [String] {
            var names: [String] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return names }
                // Each event: watch descriptor, mask, cookie and name length, four bytes each, then
                // the name, padded with zeros.
                var offset = 0
                while offset + 16 <= count {
                    let length = buffer.withUnsafeBytes {
                        Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    }
                    let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
                    names.append(String(decoding: name, as: UTF8.self))
                    offset += 16 + length
                }
            }
        }
    #endif
}
