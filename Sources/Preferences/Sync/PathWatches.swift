import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// The platform's file events for single paths: a folder's entries, or what is written to a file.
///
/// The leaf ``FolderEvents`` stands on. On Linux, one inotify instance for every path, read by a
/// Dispatch source; on Apple platforms, a Dispatch source on each path, opened for events only.
/// Handlers run on the queue given.
final class PathWatches: @unchecked Sendable {
    // `@unchecked` only because Linux's Dispatch does not mark its sources `Sendable`, as Apple's
    // does: a source's methods may be called from any thread. Everything else is `Locked`.

    /// A watch, to stop it with.
    typealias Watch = Int32

    private struct Registered {
        var handler: @Sendable () -> Void
        /// The path's own source, on Apple platforms.
        var source: (any DispatchSourceProtocol)?
    }
    private let registered = Locked<[Watch: Registered]?>([:])
    private let queue: DispatchQueue

    #if !canImport(Darwin)
        private let inotify: Int32
        private let source: any DispatchSourceRead
    #endif

    init(queue: DispatchQueue) throws(PreferencesError) {
        self.queue = queue
        #if !canImport(Darwin)
            inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard inotify >= 0 else { throw Self.failure(watching: "an inotify instance", errorNumber: errno) }
            source = DispatchSource.makeReadSource(fileDescriptor: inotify, queue: queue)
            source.setEventHandler { [weak self, inotify] in
                let watches = Self.readEvents(inotify)
                // A watch of -1: the kernel's queue of events overflowed, and any watch may have missed one.
                let handlers = self?.registered.withLock { registered in
                    watches.contains(-1)
                        ? Array((registered ?? [:]).values.map(\.handler))
                        : watches.compactMap { registered?[$0]?.handler }
                }
                for handler in handlers ?? [] {
                    handler()
                }
            }
            source.setCancelHandler { [inotify] in close(inotify) }
            source.resume()
        #endif
    }

    deinit {
        cancel()
    }

    /// Calls `handler` whenever the folder's entries change (`isFolder`), or the file is written to.
    ///
    /// - Throws: A ``PreferencesError`` if the path cannot be watched.
    func watch(_ path: String, isFolder: Bool, _ handler: @escaping @Sendable () -> Void) throws(PreferencesError)
        -> Watch
    {
        #if canImport(Darwin)
            // Apple platforms. See CONTRIBUTING, "Code that only Apple platforms compile".
            let descriptor = open(path, O_EVTONLY)
            guard descriptor >= 0 else { throw Self.failure(watching: path, errorNumber: errno) }
            let events: DispatchSource.FileSystemEvent =
                isFolder ? [.write, .link, .rename, .delete] : [.write, .extend]
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: descriptor, eventMask: events, queue: queue)
            source.setEventHandler(handler: handler)
            source.setCancelHandler { close(descriptor) }
            // Resumed before it can be cancelled: Dispatch does not let a source go suspended.
            source.resume()
            let watch = registered.withLock { registered -> Watch? in
                guard registered != nil else { return nil }
                let watch = (registered?.keys.max() ?? -1) + 1
                registered?[watch] = Registered(handler: handler, source: source)
                return watch
            }
            guard let watch else {
                source.cancel()
                return -1
            }
            return watch
        #else
            let events = UInt32(
                isFolder ? IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM : IN_MODIFY | IN_CLOSE_WRITE)
            // Under the lock, so that no watch is added to a descriptor `cancel()` has let go.
            let (watch, error) = registered.withLock { registered -> (Watch, Int32) in
                guard registered != nil else { return (-1, 0) }
                let watch = inotify_add_watch(inotify, path, events)
                guard watch >= 0 else { return (watch, errno) }
                registered?[watch] = Registered(handler: handler, source: nil)
                return (watch, 0)
            }
            guard error == 0 else { throw Self.failure(watching: path, errorNumber: error) }
            return watch
        #endif
    }

    /// Stops one watch.
    func stopWatching(_ watch: Watch) {
        guard let stopped = registered.withLock({ $0?.removeValue(forKey: watch) }) else { return }
        stop(watch, stopped.source)
    }

    /// Stops every watch, for good.
    func cancel() {
        guard
            let all = registered.withLock({ registered in
                defer { registered = nil }
                return registered
            })
        else { return }
        for (watch, stopped) in all {
            stop(watch, stopped.source)
        }
        #if !canImport(Darwin)
            source.cancel()
        #endif
    }

    private func stop(_ watch: Watch, _ source: (any DispatchSourceProtocol)?) {
        #if canImport(Darwin)
            source?.cancel()
        #else
            // Fails only for a watch the kernel already removed, with its file.
            _ = inotify_rm_watch(inotify, watch)
        #endif
    }

    private static func failure(watching path: String, errorNumber: Int32) -> PreferencesError {
        PreferencesError(
            .fileOperationFailed(path: path, operation: FileSystem.Operation.watch.rawValue, errorNumber: errorNumber))
    }

    #if !canImport(Darwin)
        /// The watches the events waiting on an inotify descriptor concern, each once.
        private static func readEvents(_ descriptor: Int32) -> [Watch] {
            var watches: Set<Watch> = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                guard count > 0 else { return Array(watches) }
                // Each event: watch descriptor, mask, cookie and name length, four bytes each, then
                // the name, padded with zeros.
                var offset = 0
                while offset + 16 <= count {
                    buffer.withUnsafeBytes { bytes in
                        watches.insert(bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
                        offset += 16 + Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    }
                }
            }
        }
    #endif
}
