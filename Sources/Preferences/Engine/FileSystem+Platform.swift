import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension FileSystem {
    /// How far a file that ``replaceFile(at:with:ownedLike:persistence:)`` writes must reach stable
    /// storage before the call returns.
    enum Persistence {
        /// The file and its name are on the medium: what a synchronous commit needs.
        case flushed
        /// The file reaches the drive before its rename, and its name after it, so that a power
        /// loss leaves the old file or the new one whole; on Apple platforms not yet on the medium
        /// (see ``synchronize(_:flushesToDisk:)``). What a snapshot needs: it replaces the log's
        /// records, some of which may have been flushed by synchronous commits.
        case ordered
        /// Nothing is asked of the drive: the file is safe from the process being killed, and a
        /// power loss may leave the old file, or the new one cut short, which opening reports. What
        /// a new, empty log needs in standard durability: the commits that go into it are not
        /// flushed either, and the first one that is flushes the log's name with it.
        case deferred

        /// The `flushesToDisk` of the file's synchronization before its rename; `nil` for none.
        var synchronizesFile: Bool? {
            switch self {
            case .flushed: true
            case .ordered: false
            case .deferred: nil
            }
        }
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
