import CPreferencesAtomics
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension FileSystem {
    /// The flag that has `mmap` set up every page of a mapping at once, where there is one.
    ///
    /// Linux's `MAP_POPULATE`: a snapshot is read whole as it is checked, and faulting its pages in
    /// one at a time costs several times as much. Elsewhere the pages fault in as they are first read.
    static let mapPopulatesPages: Int32 = {
        #if os(Linux)
            MAP_POPULATE
        #else
            0
        #endif
    }()

    /// Sets up the pages of a shared mapping for writing now, where the system can (Linux's
    /// `MADV_POPULATE_WRITE`, since 5.14), so that the writes into them take no page fault.
    ///
    /// A hint: where it fails or is missing, the pages fault in as they are first written.
    func prepareForWriting(_ address: UnsafeMutableRawPointer, length: Int) {
        _ = preferences_prepare_for_writing(address, length)
    }

    /// Flushes a file to stable storage before a rename makes it the one readers see.
    ///
    /// On Apple platforms `fsync` reaches only the drive's cache. With `flushesToDisk`, `F_FULLFSYNC`
    /// reaches the medium, which takes milliseconds to tens of milliseconds; without it,
    /// `F_BARRIERFSYNC` only keeps the drive from writing later data (the rename) before this file,
    /// which is what a compaction in standard durability needs to survive power loss whole.
    static func synchronize(_ descriptor: Int32, flushesToDisk: Bool) -> Int32 {
        #if canImport(Darwin)
            if fcntl(descriptor, flushesToDisk ? F_FULLFSYNC : F_BARRIERFSYNC) != -1 { return 0 }
        #endif
        return fsync(descriptor)
    }

    /// Flushes a file's data, and the metadata needed to read it back, to stable storage.
    static func synchronizeData(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) != -1 { return 0 }
            return fsync(descriptor)
        #else
            return fdatasync(descriptor)
        #endif
    }

    /// Keeps a file out of backups, on Apple platforms: every new lock file, and the snapshot and
    /// log of a store opened to be excluded.
    ///
    /// Best effort: a backup that holds a file anyway loses nothing (a lock file holds no values,
    /// and a store excluded by choice is one the app can do without), so a failure here is no
    /// reason to refuse the store, and is not reported. A file already excluded is left as it is,
    /// so that opening changes no file. The seam can make it fail, as if the attribute could not
    /// be set.
    func excludeFromBackup(_ path: String) {
        guard fault(.excludeFromBackup, path) == nil else { return }
        #if canImport(Darwin)
            var url = URL(fileURLWithPath: path)
            if (try? url.resourceValues(forKeys: [.isExcludedFromBackupKey]))?.isExcludedFromBackup == true {
                return
            }
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            try? url.setResourceValues(values)
        #endif
    }

    /// Makes a new file or folder readable before the device's first unlock and during app prewarming.
    ///
    /// The default Data Protection class would lock it then, and preferences must be readable at
    /// launch. Secrets belong in the Keychain, not in preferences.
    func removeDataProtection(from path: String) throws(PreferencesError) {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            do {
                try FileManager.default.setAttributes([.protectionKey: FileProtectionType.none], ofItemAtPath: path)
            } catch {
                let nsError = error as NSError
                let number = nsError.domain == NSPOSIXErrorDomain ? Int32(nsError.code) : EPERM
                throw PreferencesError(
                    .fileOperationFailed(
                        path: path, operation: Operation.removeDataProtection.rawValue, errorNumber: number)
                )
            }
        #endif
    }
}
