extension PreferencesStore {
    /// How far a committed value has gone when a write returns.
    public enum Durability: Sendable, Hashable {
        /// The value is in the operating system's hands: it survives the app crashing or being
        /// killed the moment the call returns, and reaches the disk within seconds. A power loss
        /// or a kernel panic in those seconds can lose it. The default.
        case standard

        /// The value is on the disk (`fdatasync`, or `F_FULLFSYNC` on Apple platforms): it survives
        /// power loss too. Each write then costs a disk flush, typically a fraction of a millisecond
        /// to several milliseconds.
        case synchronous
    }

    /// Forces every value written so far to the disk, as ``Durability/synchronous`` does for each write.
    ///
    /// Call it before a moment when power may be lost, such as an update that restarts the device.
    ///
    /// - Throws: A ``PreferencesError`` if the file cannot be synced.
    public func flush() throws {
        try withWriteLock { () throws(PreferencesError) in
            try backend.flush()
        }
    }
}
