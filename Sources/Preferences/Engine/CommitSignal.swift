import CPreferencesAtomics

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The leaf that puts a store's commit watcher to sleep until another process commits, and that a
/// committing process wakes it through, chosen by platform: nothing above it asks which it has.
///
/// - Linux: a futex on the lock page's commit count, which the kernel compares before sleeping.
/// - Apple platforms: a Darwin notification named after the lock file's real path. A sleeper waits
///   for the descriptor `notify_register_file_descriptor` gave it to be readable, registered before
///   it first checks the count, so a notification posted in between waits in the descriptor rather
///   than being lost; each wake-up reads every notification queued there.
/// - Elsewhere: none; ``canWait`` is `false`, and a sleeper checks the count every 50 ms.
///
/// Waking is broadcast, to every sleeper of every process, and a sleeper may wake for nothing: it
/// always checks the count again.
final class CommitSignal: Sendable {
    #if canImport(Darwin)
        /// Whether ``sleep(on:expecting:)`` sleeps until woken on this platform.
        static var canWait: Bool { true }

        private let name: String
        /// The registration's token and descriptor, from ``beginSleeping()`` to ``endSleeping()``.
        ///
        /// Registered only while someone may sleep, so that no notification piles up unread in it;
        /// `nil` otherwise, or when it could not be made.
        private let registration = Locked<(token: Int32, descriptor: Int32)?>(nil)

        init(lockFilePath path: String) {
            // Hashed, so that the name is short, and real, so that every process names one file
            // alike (`/var` is `/private/var` on macOS); a collision only wakes someone for nothing.
            var real = path
            if let resolved = realpath(path, nil) {
                real = String(cString: resolved)
                free(resolved)
            }
            name = "preferences.commit.\(String(Self.hash(real), radix: 16))"
        }

        deinit {
            endSleeping()
        }

        func beginSleeping() {
            registration.withLock { registration in
                guard registration == nil else { return }
                var descriptor: Int32 = -1
                let token = preferences_signal_register(name, &descriptor)
                if token >= 0 {
                    registration = (token, descriptor)
                }
            }
        }

        func endSleeping() {
            let ended = registration.withLock { registration in
                defer { registration = nil }
                return registration
            }
            if let (token, _) = ended {
                preferences_signal_cancel(token)
            }
        }

        func sleep(on word: UnsafeMutableRawPointer, expecting value: UInt32) {
            guard let (_, descriptor) = registration.withLock({ $0 }) else {
                // No registration to be had: check the count again in 50 ms, as a poll would.
                usleep(50_000)
                return
            }
            preferences_signal_wait(descriptor)
        }

        func wakeAll(on word: UnsafeMutableRawPointer) {
            preferences_signal_post(name)
        }

        /// FNV-1a, 64 bits.
        private static func hash(_ text: String) -> UInt64 {
            text.utf8.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        }
    #else
        static var canWait: Bool { preferences_can_wait() }

        init(lockFilePath path: String) {}

        func beginSleeping() {}

        func endSleeping() {}

        func sleep(on word: UnsafeMutableRawPointer, expecting value: UInt32) {
            guard Self.canWait else {
                usleep(50_000)
                return
            }
            preferences_wait(word, value)
        }

        func wakeAll(on word: UnsafeMutableRawPointer) {
            preferences_wake_all(word)
        }
    #endif
}
