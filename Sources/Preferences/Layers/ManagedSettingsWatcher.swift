import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tells a store when the managed settings it reads may have changed.
///
/// It polls only where the platform cannot say so: inotify on Linux and
/// `UserDefaults.didChangeNotification` for managed app configuration report changes, and elsewhere
/// the files' status is checked once a second. On Linux the files' status is checked too whenever
/// inotify cannot watch a folder that exists (the user is out of watches, say), rather than miss the
/// changes made in it.
final class ManagedSettingsWatcher: @unchecked Sendable {
    // `@unchecked` only because a notification token is not marked `Sendable`; it is set in `init`
    // and only removed in `deinit`.
    private let observer: (any NSObjectProtocol)?
    /// The Dispatch sources reporting changes; `nil` once the watcher is gone, so that a source added
    /// after that is cancelled at once.
    private let sources: Sources

    private typealias Sources = Locked<[Source]?>

    /// A Dispatch source reporting changes, and the inotify instance it reads (`nil` for the status
    /// checks) with how many times its handler started and finished.
    private struct Source {
        let source: any DispatchSourceProtocol
        let inotify: (descriptor: Int32, handled: Locked<(started: Int, finished: Int)>)?
    }

    #if os(Linux)
        /// Adds an inotify watch, as `inotify_add_watch` does: a watch descriptor, or -1 with `errno` set.
        typealias AddWatch = @Sendable (_ inotify: Int32, _ path: String, _ events: UInt32) -> Int32

        /// Watches the files of `location` with inotify, adding watches with `addWatch`: the tests
        /// give one that fails as the kernel can.
        convenience init(
            location: ManagedSettings.Location,
            onChange: @escaping @Sendable () -> Void,
            addWatch: @escaping AddWatch = { inotify_add_watch($0, $1, $2) }
        ) {
            self.init(location: location, onChange: onChange) { urls, sources, queue in
                Self.notifications(for: urls, sources: sources, queue: queue, addWatch: addWatch, onChange: onChange)
            }
        }
    #else
        convenience init(location: ManagedSettings.Location, onChange: @escaping @Sendable () -> Void) {
            self.init(location: location, onChange: onChange) { urls, sources, queue in
                Self.add(Self.statusChecks(for: urls, queue: queue, onChange: onChange), to: sources)
            }
        }
    #endif

    /// Watches `location`, starting the sources that watch files with `watchFiles`, which adds them
    /// to `sources`.
    private init(
        location: ManagedSettings.Location,
        onChange: @escaping @Sendable () -> Void,
        watchFiles: (_ urls: [URL], _ sources: Sources, _ queue: DispatchQueue) -> Void
    ) {
        sources = Locked([])
        switch location.resolved {
        case .standard:
            preconditionFailure("resolved locations are never .standard")
        case .userDefaults:
            observer = NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: nil, queue: nil
            ) { _ in onChange() }
        case .files(let urls):
            observer = nil
            watchFiles(urls, sources, DispatchQueue(label: "Preferences.ManagedSettingsWatcher"))
        }
    }

    deinit {
        sources.withLock { sources in
            for running in sources ?? [] {
                running.source.cancel()
            }
            sources = nil
        }
        if let observer {
            NotificationCenter.default.removeObserver(observer)
        }
    }

    /// How the watcher learns of changes now, for a test to report when a change went unseen.
    var diagnosis: String {
        sources.withLock { sources in
            guard let sources else { return "stopped" }
            return sources.map { running in
                guard !running.source.isCancelled else { return "cancelled" }
                guard let inotify = running.inotify else { return "status checks once a second" }
                let handled = inotify.handled.withLock { $0 }
                return
                    "\(Self.describe(inotify: inotify.descriptor)); handled \(handled.started) times, \(handled.finished) finished"
            }.joined(separator: "; ")
        }
    }

    /// The descriptor, what it is now, and the inodes its watches are on, from Linux's `/proc`.
    private static func describe(inotify descriptor: Int32) -> String {
        let file = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
        let information = (try? String(contentsOfFile: "/proc/self/fdinfo/\(descriptor)", encoding: .utf8)) ?? ""
        let inodes = information.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("ino:") }?.dropFirst(4)
        }
        var unread: Int32 = -1
        #if os(Linux)
            _ = ioctl(descriptor, UInt(FIONREAD), &unread)
        #endif
        return """
            inotify descriptor \(descriptor) (\(file ?? "closed")), watching inodes \(inodes.joined(separator: ", ")), \
            \(unread) bytes of events unread
            """
    }

    /// Keeps a source running until the watcher goes, or cancels it if the watcher has gone.
    private static func add(
        _ source: any DispatchSourceProtocol,
        reading inotify: (descriptor: Int32, handled: Locked<(started: Int, finished: Int)>)? = nil,
        to sources: Sources
    ) {
        let isKept = sources.withLock { sources in
            sources?.append(Source(source: source, inotify: inotify))
            return sources != nil
        }
        if !isKept {
            source.cancel()
        }
    }

    /// Checks the files' status once a second (see ``signature(of:)``).
    private static func statusChecks(
        for urls: [URL],
        queue: DispatchQueue,
        onChange: @escaping @Sendable () -> Void
    ) -> any DispatchSourceProtocol {
        @Sendable func status() -> [[Int]?] {
            urls.map { signature(of: $0.path) }
        }
        let last = Locked(status())
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 1, repeating: 1, leeway: .milliseconds(250))
        timer.setEventHandler {
            let now = status()
            let changed = last.withLock { last in
                guard last != now else { return false }
                last = now
                return true
            }
            if changed {
                onChange()
            }
        }
        timer.resume()
        return timer
    }

    /// What tells one version of a file from another: its device, inode, size, and modification
    /// time to the nanosecond; `nil` when there is no file.
    ///
    /// To the nanosecond, so that an edit of the same size within the second of the last check is
    /// seen; the inode, so that a file replaced by another (an atomic save) is.
    static func signature(of path: String) -> [Int]? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = status.st_mtimespec
        #else
            let modified = status.st_mtim
        #endif
        return [
            Int(truncatingIfNeeded: status.st_dev), Int(truncatingIfNeeded: status.st_ino),
            Int(truncatingIfNeeded: status.st_size), Int(truncatingIfNeeded: modified.tv_sec),
            Int(truncatingIfNeeded: modified.tv_nsec),
        ]
    }

    #if os(Linux)
        /// Watches each file's folder, or the nearest folder above it that exists.
        ///
        /// A file or folder created later is seen too: the folders are watched again after every
        /// change. Falls back to `statusChecks(for:queue:onChange:)` for good when inotify cannot be
        /// had, or cannot watch a folder that exists.
        private static func notifications(
            for urls: [URL],
            sources: Sources,
            queue: DispatchQueue,
            addWatch: @escaping AddWatch,
            onChange: @escaping @Sendable () -> Void
        ) {
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0 else {
                add(statusChecks(for: urls, queue: queue, onChange: onChange), to: sources)
                return
            }
            let events = UInt32(
                IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF
                    | IN_MOVE_SELF)
            @Sendable func watch() -> Bool {
                watchFolders(of: urls) { addWatch(descriptor, $0, events) }
            }
            guard watch() else {
                close(descriptor)
                add(statusChecks(for: urls, queue: queue, onChange: onChange), to: sources)
                return
            }
            let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            let handled = Locked((started: 0, finished: 0))
            source.setEventHandler {
                handled.withLock { $0.started += 1 }
                defer { handled.withLock { $0.finished += 1 } }
                var buffer = [UInt8](repeating: 0, count: 4096)
                while read(descriptor, &buffer, buffer.count) > 0 {}
                if !watch() {
                    // Cancelling also releases this handler, and with it the source it holds.
                    source.cancel()
                    add(statusChecks(for: urls, queue: queue, onChange: onChange), to: sources)
                }
                onChange()
            }
            source.setCancelHandler { close(descriptor) }
            add(source, reading: (descriptor, handled), to: sources)
            source.resume()
        }

        /// Watches, with `addWatch`, the deepest folder on the way to each file that exists.
        ///
        /// A folder made after the look at it failed but before its parent's watch was in place
        /// raises no event, so the look is repeated until it finds nothing deeper: anything made
        /// later raises one.
        ///
        /// - Returns: `false` when a folder that exists could not be watched, so that changes in it
        ///   would go unseen.
        private static func watchFolders(of urls: [URL], addWatch: (String) -> Int32) -> Bool {
            for url in urls {
                var watched: String?
                while true {
                    var folder = url.deletingLastPathComponent()
                    while addWatch(folder.path) < 0 {
                        // Only a folder that is not there yet is passed over for its parent.
                        guard errno == ENOENT || errno == ENOTDIR, folder.path != "/" else { return false }
                        folder = folder.deletingLastPathComponent()
                    }
                    if folder.path == watched { break }
                    watched = folder.path
                }
            }
            return true
        }
    #endif
}
