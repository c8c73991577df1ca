import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A tmpfs of a given size, mounted for a test where the process may (Linux, as root), and
/// unmounted when released: a disk that fills up for real.
final class SmallVolume {
    let url: URL

    /// Whether this process can mount one.
    static let canMount: Bool = SmallVolume(bytes: 1 << 16) != nil

    init?(bytes: Int) {
        #if os(Linux)
            let url = FileManager().temporaryDirectory.appendingPathComponent("small-volume-\(UUID().uuidString)")
            guard (try? FileManager().createDirectory(at: url, withIntermediateDirectories: true)) != nil else {
                return nil
            }
            guard mount("tmpfs", url.path, "tmpfs", 0, "size=\(bytes)") == 0 else {
                try? FileManager().removeItem(at: url)
                return nil
            }
            self.url = url
        #else
            return nil
        #endif
    }

    deinit {
        #if os(Linux)
            umount2(url.path, Int32(MNT_DETACH))
            rmdir(url.path)
        #endif
    }
}
