import Foundation

/// Where a store's entries live: a small protocol over tagged entries.
///
/// A store keeps every entry in memory and serves reads from there; a backend makes committed
/// changes durable and tells the store about changes committed elsewhere: by another store on the
/// same files, in this process or another. The store calls ``commit(_:flushesToDisk:_:)``,
/// ``withExclusiveAccess(_:_:)`` and ``catchUp(_:)`` with its write lock held.
///
/// Backends are classes: the store holds one as an existential, and calls on a class existential
/// copy one reference, where a struct's box would be copied and destroyed on every write and read.
protocol PreferencesBackend: AnyObject, Sendable {
    /// A path or name for messages.
    var location: String { get }

    /// What tells the store, while it has observers, of commits made elsewhere; `nil` when nobody
    /// else can commit to these entries. Change detection lives here, with the files that change.
    func makeCommitWatcher() -> CommitWatcher?

    /// How many commits have been made on these entries, by anyone; cheap enough for every read.
    ///
    /// When it differs from the count a store last saw, ``catchUp()`` has something to deliver.
    var commitCount: UInt64 { get }

    /// Catches up with the changes committed elsewhere since the last catch-up.
    ///
    /// Calls `apply` with them, in commit order, while still holding the backend's own lock, so
    /// that the store's memory takes commits in the order the backend does and a read never finds
    /// the backend current and the store's memory behind.
    func catchUp(_ apply: (BackendUpdate) -> Void) throws(PreferencesError)

    /// Catches up as ``catchUp(_:)`` does, for a read: without waiting for the lock another process
    /// or a transaction may hold, and without reporting or repairing anything.
    ///
    /// - Returns: `false` when that cannot be done just now, for a ``catchUp(_:)`` to do instead.
    func catchUpWithoutWaiting(_ apply: (BackendUpdate) -> Void) -> Bool

    /// Runs `body` with writers everywhere else locked out, after catching up with them.
    ///
    /// The changes it caught up with go to `apply`, as for ``catchUp(_:)``; `body` commits with
    /// ``commit(_:flushesToDisk:_:)``. Calls may nest; the lock is released when the outermost returns.
    func withExclusiveAccess<Result>(_ apply: (BackendUpdate) -> Void, _ body: () throws -> Result) throws -> Result

    /// Makes a batch of changes durable, all or nothing. Called inside ``withExclusiveAccess(_:_:)``.
    ///
    /// With `flushesToDisk`, the commit is on stable storage when this returns; without, it is in
    /// the system's hands, safe from the process being killed.
    ///
    /// Once committed, calls `apply` with `isCommitted` true and the commit count after the
    /// commit, problems that did not stop it, and, rarely, commits made elsewhere that catching up
    /// could not see (their writer held a lock file that was since replaced), which come before
    /// this one. A backend that read such commits in and then failed calls `apply` with them and
    /// `isCommitted` false before it throws: they are the backend's now, and must reach the
    /// store's memory all the same.
    ///
    /// - Throws: Why nothing was committed.
    func commit(
        _ record: Record,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError)

    /// Makes one change durable with writers everywhere else locked out: what
    /// ``withExclusiveAccess(_:_:)`` around ``commit(_:flushesToDisk:_:)`` does, for a write of one
    /// key, which a backend can do in one step and without building a record.
    ///
    /// Calls `apply`, while writers elsewhere are still locked out, with what it caught up with
    /// (`isCommitted` false) and then with what the commit reported (`isCommitted` true); it may
    /// hand both over in the one call after the commit. When the commit fails, `apply` has had
    /// what was caught up with and read in before the failure, and nothing was committed.
    func commitExclusively(
        _ change: EntryChange,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError)

    /// Sets what to call, on some thread, when the backend learns of a change made elsewhere without
    /// a commit watcher: a `UserDefaults` suite written by other code. Most backends never call it.
    func onChangesElsewhere(_ handler: @escaping @Sendable () -> Void)

    /// Forces every commit so far to stable storage.
    func flush() throws(PreferencesError)
}

extension PreferencesBackend {
    func onChangesElsewhere(_ handler: @escaping @Sendable () -> Void) {}

    func commitExclusively(
        _ change: EntryChange,
        flushesToDisk: Bool,
        _ apply: (_ update: BackendUpdate, _ isCommitted: Bool) -> Void
    ) throws(PreferencesError) {
        do {
            try withExclusiveAccess(
                { apply($0, false) },
                { try commit(Record(changes: [change]), flushesToDisk: flushesToDisk, apply) }
            )
        } catch let error as PreferencesError {
            throw error
        } catch {
            preconditionFailure("a commit throws only PreferencesError, not \(error)")
        }
    }
}

/// What a backend reports to its store after catching up or committing.
struct BackendUpdate {
    /// Commits made elsewhere, in commit order, for the store to apply to its memory.
    var records: [Record] = []
    /// The commit count the store has now seen.
    var commitCount: UInt64
    /// Problems to report that did not stop the operation.
    var problems: [PreferencesError] = []
}

/// The full identity of a stored entry: its resolved namespace (empty for the global namespace) and its name.
///
/// The two strings sit in one object that every copy shares, with the key's bytes as a record
/// holds them when they were made ahead: a write copies its key half a dozen times (into its
/// change, its record, the engine's entries and the store's memory), and a copy of two strings goes
/// through `String`'s value witnesses, where a copy of the object is one retain.
/// The hash stays inline, so that a lookup reads no memory but the key's own.
struct StorageKey: Hashable, Sendable, Comparable {
    /// The two strings, and, when made ahead, their bytes as a record holds them, in the same
    /// allocation: a write copies them from memory it reaches through the key anyway, where an
    /// array of its own would be one more cache line to find (with 10,000 keys, mostly a miss).
    private final class Names: ManagedBuffer<Names.Header, UInt8> {
        struct Header {
            let namespace: String
            let name: String
            /// How many bytes follow; `nil` when they were not made ahead.
            let encodedCount: Int?
        }

        static func make(namespace: String, name: String, encodesAhead: Bool) -> Names {
            var encoded: [UInt8] = []
            if encodesAhead {
                var writer = ByteWriter(capacity: namespace.utf8.count + name.utf8.count + 4)
                writer.appendLengthPrefixed(namespace)
                writer.appendLengthPrefixed(name)
                encoded = writer.bytes
            }
            let buffer = Names.create(minimumCapacity: encoded.count) { _ in
                Header(
                    namespace: namespace, name: name, encodedCount: encodesAhead ? encoded.count : nil)
            }
            // `create` called on this subclass makes an instance of it.
            let names = unsafeDowncast(buffer, to: Names.self)
            names.withUnsafeMutablePointerToElements { $0.initialize(from: encoded, count: encoded.count) }
            return names
        }
    }

    // `nonisolated(unsafe)` because `ManagedBuffer` is not `Sendable`, and cannot be made so: it
    // is safe because nothing in `names` changes after `make` returns, before any thread but the
    // maker's can see it.
    nonisolated(unsafe) private let names: Names
    /// The name's hash in this process, computed once: a lookup then hashes one integer, not two strings.
    private let nameHash: Int

    /// The key's hash, computed once when the key was made: what ``KeyTable`` finds it by.
    var precomputedHash: Int { nameHash }

    // The header through its pointer: `header`, a `var` of `ManagedBuffer`'s, has every access
    // checked for exclusivity at run time.
    var namespace: String { names.withUnsafeMutablePointerToHeader { $0.pointee.namespace } }
    var name: String { names.withUnsafeMutablePointerToHeader { $0.pointee.name } }

    /// Whether the key's bytes as a record holds them were made ahead.
    var isEncodedAhead: Bool { names.withUnsafeMutablePointerToHeader { $0.pointee.encodedCount != nil } }

    /// Calls `body` with both strings as a record holds them, each length-prefixed, if they were
    /// made ahead; `nil` otherwise.
    @inline(__always)
    func withEncoded<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        names.withUnsafeMutablePointers { header, bytes in
            header.pointee.encodedCount.map { body(UnsafeRawBufferPointer(start: bytes, count: $0)) }
        }
    }

    /// A key of a namespace and a name.
    ///
    /// - Parameters:
    ///   - namespace: The resolved namespace; empty for the global one.
    ///   - name: The key's name.
    ///   - nameHash: The name's hash, when the caller has it already.
    ///   - encodesAhead: Whether to keep the key's bytes as a record holds them, for a key written
    ///     often: a declared key's, which a write then copies whole rather than encoding its two
    ///     strings again. Not for keys read from a file: each would cost opening it an allocation.
    init(namespace: String, name: String, nameHash: Int? = nil, encodesAhead: Bool = false) {
        names = Names.make(namespace: namespace, name: name, encodesAhead: encodesAhead)
        self.nameHash = nameHash ?? name.hashValue
    }

    /// The same name in another namespace, its hash kept, and its bytes made ahead if this key's are.
    func inNamespace(_ namespace: String) -> StorageKey {
        StorageKey(namespace: namespace, name: name, nameHash: nameHash, encodesAhead: isEncodedAhead)
    }

    static func == (lhs: StorageKey, rhs: StorageKey) -> Bool {
        guard lhs.nameHash == rhs.nameHash else { return false }
        return lhs.names === rhs.names || (lhs.name == rhs.name && lhs.namespace == rhs.namespace)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(nameHash)
    }

    /// By namespace, then name, each compared byte by byte in UTF-8: the order a snapshot is written in.
    static func < (lhs: StorageKey, rhs: StorageKey) -> Bool {
        let byNamespace = compareUTF8(lhs.namespace.utf8, rhs.namespace.utf8)
        return byNamespace != 0 ? byNamespace < 0 : compareUTF8(lhs.name.utf8, rhs.name.utf8) < 0
    }
}

/// Compares two strings' UTF-8 bytes: negative, zero or positive, as `memcmp` does.
///
/// A compaction sorts every key, so this comparison runs often: `memcmp` over the contiguous
/// bytes every native string has is much cheaper than `String.UTF8View`'s iterator, or than
/// `withUTF8` on a copy. The iterator remains for a string that has no contiguous bytes (one
/// bridged from Objective-C).
private func compareUTF8(_ lhs: String.UTF8View, _ rhs: String.UTF8View) -> Int {
    let order = lhs.withContiguousStorageIfAvailable { left in
        rhs.withContiguousStorageIfAvailable { right in compareBytes(left, right) }
    }
    if let order = order ?? nil {
        return order
    }
    return lhs.elementsEqual(rhs) ? 0 : lhs.lexicographicallyPrecedes(rhs) ? -1 : 1
}

/// Compares two byte sequences as `memcmp` does, a sequence before any longer one it begins:
/// negative, zero or positive.
func compareBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
    let common = min(lhs.count, rhs.count)
    if common > 0, let leftBase = lhs.baseAddress, let rightBase = rhs.baseAddress {
        let order = memcmp(leftBase, rightBase, common)
        if order != 0 { return Int(order) }
    }
    return lhs.count - rhs.count
}

/// One change in a committed batch: a new value for a key, or its removal.
struct EntryChange: Equatable, Sendable {
    var key: StorageKey
    /// `nil` removes the entry.
    var value: StoredValue?

    /// The changes that turn `old` into `new`.
    static func differences(from old: [StorageKey: StoredValue], to new: [StorageKey: StoredValue]) -> [EntryChange] {
        var changes: [EntryChange] = []
        for (key, value) in new where old[key] != value {
            changes.append(EntryChange(key: key, value: value))
        }
        for key in old.keys where new[key] == nil {
            changes.append(EntryChange(key: key, value: nil))
        }
        return changes
    }
}
