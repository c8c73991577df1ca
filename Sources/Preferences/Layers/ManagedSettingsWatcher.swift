import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tells a store when the managed settings it reads may have changed, with no polling where the
/// platform can say so: inotify on Linux, `UserDefaults.didChangeNotification` for managed app
/// configuration, and elsewhere a check of the files' status once a second.
final class ManagedSettingsWatcher: @unchecked Sendable {
    // `@unchecked` only because `stop` holds a Dispatch source or a notification token, neither
    // marked `Sendable`; it is set in `init` and only called in `deinit`.
    /// Ends the watching: cancels the timer, removes the observer, or wakes the inotify thread to end.
    private let stop: () -> Void

    init(location: ManagedSettings.Location, onChange: @escaping @Sendable () -> Void) {
        switch location.resolved {
        case .standard:
            preconditionFailure("resolved locations are never .standard")
        case .userDefaults:
            let observer = NotificationCenter.default.addObserver(
                forName: UserDefaults.didChangeNotification, object: nil, queue: nil
            ) { _ in onChange() }
            stop = { NotificationCenter.default.removeObserver(observer) }
        case .files(let urls):
            #if os(Linux)
                if let stopNotifications = Self.notifications(for: urls, onChange: onChange) {
                    stop = stopNotifications
                    return
                }
            #endif
            let timer = Self.statusChecks(for: urls, onChange: onChange)
            stop = { timer.cancel() }
        }
    }

    deinit {
        stop()
    }

    /// Checks the files' size and modification date once a second.
    private static func statusChecks(
        for urls: [URL],
        onChange: @escaping @Sendable () -> Void
    ) -> any DispatchSourceProtocol {
        @Sendable func status() -> [String] {
            urls.map { url in
                let attributes = try? FileManager().attributesOfItem(atPath: url.path)
                return "\(attributes?[.size] ?? "-") \(attributes?[.modificationDate] ?? "-")"
            }
        }
        let last = Locked(status())
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Preferences.ManagedSettingsWatcher"))
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
        ///
        /// The events are read on a thread of its own, asleep in `poll` until one comes or the
        /// returned function closes the pipe that ends it. Not through a Dispatch read source: with
        /// one, a file in folders made quickly went unseen twice in 41 runs of the test suite (none
        /// in 80 since). Not proven, but likely: stores opened and closed one after another reuse
        /// descriptor numbers, by which libdispatch's epoll bookkeeping keys its sources
        /// (swift-corelibs-libdispatch#833).
        ///
        /// - Returns: What ends the watching; `nil` if inotify is not available.
        private static func notifications(
            for urls: [URL],
            onChange: @escaping @Sendable () -> Void
        ) -> (() -> Void)? {
            let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard descriptor >= 0 else { return nil }
            var pipeEnds: [Int32] = [-1, -1]
            guard pipe(&pipeEnds) == 0 else {
                close(descriptor)
                return nil
            }
            for end in pipeEnds {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
            let (wakeEnd, stopEnd) = (pipeEnds[0], pipeEnds[1])
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
            let thread = Thread {
                // The thread owns the inotify descriptor and the pipe's end it reads; `stop` owns
                // the other end, whose closing wakes the thread to end.
                defer {
                    close(descriptor)
                    close(wakeEnd)
                }
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    var ready = [
                        pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                        pollfd(fd: wakeEnd, events: Int16(POLLIN), revents: 0),
                    ]
                    guard poll(&ready, 2, -1) >= 0 else {
                        if errno == EINTR { continue }
                        return
                    }
                    if ready[1].revents != 0 { return }
                    guard ready[0].revents != 0 else { continue }
                    while read(descriptor, &buffer, buffer.count) > 0 {}
                    watch()
                    onChange()
                }
            }
            thread.name = "Preferences.ManagedSettingsWatcher"
            thread.start()
            return { close(stopEnd) }
        }
    #endif
}
