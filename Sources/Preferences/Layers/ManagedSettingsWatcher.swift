import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tells a store when the managed settings it reads may have changed, with no polling where the
/// platform can say so: inotify on Linux, `UserDefaults.didChangeNotification` for managed app
/// configuration, and elsewhere a check of the files' status once a second.
final class ManagedSettingsWatcher: @unchecked Sendable {
    // `@unchecked` only because neither a Dispatch source nor a notification token is marked
    // `Sendable`; both are set in `init` and only cancelled or removed in `deinit`.
    private let source: (any DispatchSourceProtocol)?
    private let observer: (any NSObjectProtocol)?

    init(location: ManagedSettings.Location, onChange: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "Preferences.ManagedSettingsWatcher")
        switch location.resolved {
        case .standard:
            preconditionFailure("resolved locations are never .standard")
        case .userDefaults:
            source = nil
            observer = NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: nil, queue: nil
            ) { _ in onChange() }
        case .files(let urls):
            observer = nil
            #if os(Linux)
                source = Self.notifications(for: urls, queue: queue, onChange: onChange)
            #else
                source = Self.statusChecks(for: urls, queue: queue, onChange: onChange)
            #endif
        }
    }

    deinit {
        source?.cancel()
        if let observer {
            NotificationCenter.default.removeObserver(observer)
        }
    }

    /// Checks the files' size and modification date once a second.
    private static func statusChecks(
        for urls: [URL],
        queue: DispatchQueue,
        onChange: @escaping @Sendable () -> Void
    ) -> any DispatchSourceProtocol {
        @Sendable func status() -> [String] {
            urls.map { url in
                let attributes = try? FileManager().attributesOfItem(atPath: url.path)
                return "\(attributes?[.size] ?? "-") \(attributes?[.modificationDate] ?? "-")"
            }
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

    #if os(Linux)
        /// Watches each file's folder, or the nearest folder above it that exists, so that a file or
        /// folder created later is seen too; watches again after every change.
        private static func notifications(
            for urls: [URL],
            queue: DispatchQueue,
            onChange: @escaping @Sendable () -> Void
        ) -> (any DispatchSourceProtocol)? {
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0 else { return statusChecks(for: urls, queue: queue, onChange: onChange) }
            let events = UInt32(
                IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF
                    | IN_MOVE_SELF)
            /// Watches the deepest folder on the way to each file that exists.
            ///
            /// A folder made after the look at it failed but before its parent's watch was in place
            /// raises no event, so the look is repeated until it finds nothing deeper: anything made
            /// later raises one.
            @Sendable func watch() {
                for url in urls {
                    var watched: String?
                    while true {
                        var folder = url.deletingLastPathComponent()
                        while inotify_add_watch(descriptor, folder.path, events) < 0, folder.path != "/" {
                            folder = folder.deletingLastPathComponent()
                        }
                        if folder.path == watched { break }
                        watched = folder.path
                    }
                }
            }
            watch()
            let source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            source.setEventHandler {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while read(descriptor, &buffer, buffer.count) > 0 {}
                watch()
                onChange()
            }
            source.setCancelHandler { close(descriptor) }
            source.resume()
            return source
        }
    #endif
}
