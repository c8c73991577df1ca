import Foundation

/// A hybrid logical clock: readings that follow the wall clock in milliseconds, and still increase
/// when the wall clock stands still or goes back, or another device's clock runs ahead.
///
/// A reading is the time in milliseconds since 1970 shifted left 16 bits, plus a counter in the low
/// 16 bits. ``tick()`` gives a reading later than every reading given or seen; ``see(_:)`` takes in
/// another device's reading. A change made after another was seen is thereby stamped later, even
/// when the device that made it has a clock that is behind.
struct HybridClock: Sendable {
    private(set) var last: UInt64 = 0

    /// A reading later than the wall clock's and than every reading given or seen.
    mutating func tick() -> UInt64 {
        last = max(last + 1, Self.reading(at: CommitStamp.now() ?? 0))
        return last
    }

    /// The reading of a change committed at `time` (milliseconds since 1970), after the version
    /// `earlier` it replaced; a ``tick()`` when the time is not known.
    ///
    /// Not later than every reading seen: a change made before another device's arrived is
    /// stamped before it, and loses to it. Later than the version it replaced, which the device
    /// had when the change was made.
    ///
    /// After the version replaced even when a wrong clock stamped it far ahead: every device
    /// compares stamps alike, and a change made after that version must win over it everywhere.
    mutating func stamp(committedAt time: Int64?, after earlier: UInt64?) -> UInt64 {
        let after = earlier.map { $0 == .max ? $0 : $0 + 1 } ?? 0
        guard let time else { return max(tick(), after) }
        let reading = max(Self.reading(at: time), after)
        see(reading)
        return reading
    }

    /// The first reading of the millisecond `time`.
    static func reading(at time: Int64) -> UInt64 {
        UInt64(max(0, time)) << 16
    }

    /// Whether a reading is at most a year ahead of the wall clock.
    ///
    /// A later one is a device's broken clock, and would carry every clock that saw it along: it
    /// stays with the key it stamps, and moves no clock.
    static func isPlausible(_ reading: UInt64) -> Bool {
        reading >> 16 <= UInt64(max(0, CommitStamp.now() ?? 0)) + 366 * 24 * 3_600_000
    }

    /// Takes in a reading another device made, or a version the store holds; one that is not
    /// ``isPlausible(_:)`` is left out, so that one wrong clock does not carry this one along.
    mutating func see(_ reading: UInt64) {
        guard Self.isPlausible(reading) else { return }
        last = max(last, reading)
    }
}
