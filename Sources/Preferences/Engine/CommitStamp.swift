#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// When and by whom a commit was made, as the engine stamps its record in the log: what the
/// store's history shows of each change.
///
/// The process id is in every record a process appends, its program's name only in the first it
/// appends to each log: the history finds a record's program in the last record before it, in
/// the same log, that names one for the same process id (see ``HistoryReader``).
struct CommitStamp: Equatable, Sendable {
    /// Milliseconds since 1970, UTC; `nil` in a record a log of version 2 holds.
    var time: Int64?
    var processID: Int32?
    var program: String?

    /// The wall-clock time now, in milliseconds since 1970; `nil` if the system cannot say.
    ///
    /// `clock_gettime` rather than `Date()`: a write reads it, and the system call is a read of
    /// memory the kernel shares on Linux and Apple platforms alike.
    static func now() -> Int64? {
        var time = timespec()
        guard clock_gettime(CLOCK_REALTIME, &time) == 0 else { return nil }
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// This process's id.
    static let processID = Int32(getpid())

    /// This program's name, as the history shows it: the last part of the path it was started by.
    static let program: String = {
        let path = CommandLine.arguments.first ?? ""
        return path.split(separator: "/").last.map(String.init) ?? path
    }()
}

/// Why a commit was made, as its record says.
///
/// The raw values are the file format's: add new causes at the end, and never reuse one.
enum CommitCause: UInt8, Sendable {
    /// A write of one key, or several through the tooling's writes that name no other cause; never
    /// written to a record, which says nothing when this is its cause.
    case write = 0
    /// A transaction's batch, or an `update`.
    case transaction = 1
    /// A migration, whose identity the record carries too (``Record/subject``).
    case migration = 2
    /// ``PreferencesStore/import(_:)``.
    case `import` = 3
    /// ``PreferencesStore/removeAll(in:)``.
    case reset = 4
    /// The `prefs` tool.
    case tool = 5
    /// ``PreferencesStore/restore(_:to:)``.
    case restore = 6
    /// ``PreferencesSync``: a change another device made, whose identity the record carries too.
    case sync = 7
}
