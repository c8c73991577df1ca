/// The store's memory: one slot per key that has been read or changed since the store opened, and
/// what the backend held then for the rest.
///
/// Only touched under the store's state lock.
struct StoreState {
    /// What the backend held when the store opened, for the keys that have no slot yet: decoded
    /// into a slot when first needed, so that opening decodes nothing (see ``SnapshotIndex``).
    private var loaded: StoredEntries
    /// Every slot made, by key; ``slot(for:)`` makes one.
    ///
    /// No slot is removed while the store lives.
    private var slots = KeyTable<Slot>()
    /// The slots of the keys read through their serials (see ``KeySerials``), by serial.
    ///
    /// `nil` where none was found by that serial yet; `slots` stays the slots' only source.
    private var slotsBySerial: [Slot?] = []
    /// The backend's commit count when memory was last brought up to date with it.
    var seenCommitCount: UInt64 = 0
    /// Whether a catch-up a read could not do is on its way.
    var isCatchingUpInBackground = false
    /// What the override layers hold, by key; empty when the store reads no override layer.
    var overrides: [ResolvedKey: OverrideEntry] = [:]
    /// Whether the override layers were read once: later readings are changes for observers.
    var hasReadOverrides = false
    /// The keys the app declared with ``PreferencesStore/register(_:)-(PreferenceKeys...)``.
    var declarations: [ResolvedKey: KeyDeclaration] = [:]
    /// The last commit's array of changes, for the next commit to empty and fill: a write then
    /// allocates and frees no array for its record.
    private var spareChanges: [EntryChange] = []
    /// The slots of the last commit's changes, kept for the next commit likewise.
    private var spareSlots: [Slot] = []
    /// How many keys the Observation framework may track (see ``track(_:)``).
    private var trackedKeyCount = 0
    /// Watches other processes' commits, for the store's observers and tracked keys.
    private let commitWatcher: CommitWatcher?

    init(loaded: StoredEntries, seenCommitCount: UInt64, commitWatcher: CommitWatcher?) {
        self.loaded = loaded
        self.seenCommitCount = seenCommitCount
        self.commitWatcher = commitWatcher
    }

    /// Notes a read that told the Observation framework of a key, which something may now track.
    ///
    /// From then on every change of the key is announced to the framework. Other processes' commits
    /// are watched for the key until two of its changes have been announced since its last tracked
    /// read: the framework tells a tracker of one change and then forgets it (a SwiftUI view reads
    /// again as it redraws, and so tracks anew), but a tracker that read the key is installed only
    /// once its whole scope has run, and misses a change announced before then. Once no key is
    /// waiting for its changes, and no stream or callback observes, the watch stops, once the next
    /// commit from elsewhere is caught up with and announced (see ``CommitWatcher``).
    @inline(never)
    mutating func track(_ slot: Slot) {
        slot.isReadThroughSubscript = true
        if slot.trackedChangesLeft == 0 {
            trackedKeyCount += 1
            if trackedKeyCount == 1 {
                commitWatcher?.update(hasTrackedKeys: true)
            }
        }
        slot.trackedChangesLeft = Slot.trackedChanges
    }

    /// The key path to announce a change of a slot's key through, `nil` if the key was never read
    /// through the subscript, so that nothing can track it (see ``track(_:)``).
    @inline(__always)
    mutating func announcement(for slot: Slot) -> KeyPath<PreferencesStore, Int>? {
        guard slot.isReadThroughSubscript else { return nil }
        if slot.trackedChangesLeft > 0 {
            slot.trackedChangesLeft -= 1
            if slot.trackedChangesLeft == 0 {
                trackedKeyCount -= 1
                if trackedKeyCount == 0 {
                    commitWatcher?.update(hasTrackedKeys: false)
                }
            }
        }
        return slot.observationPath
    }

    /// Applies changes committed elsewhere, or by this store.
    ///
    /// - Parameters:
    ///   - changes: The changes, in commit order.
    ///   - found: The slots of the changes' keys, in the same order, when the caller has them
    ///     already: a commit found each when it compared the values. Empty to look them up.
    /// - Returns: The Observation framework's key paths of the changed keys that have one.
    @discardableResult
    mutating func apply(_ changes: [EntryChange], slots found: [Slot] = []) -> ObservationPaths {
        var paths = ObservationPaths()
        for index in changes.indices {
            // A key with no slot yet needs no value decoded: the change replaces it.
            let slot =
                index < found.count
                ? found[index] : slots[changes[index].key] ?? makeSlot(for: changes[index].key, stored: nil)
            slot.replace(with: changes[index].value)
            if let path = announcement(for: slot) {
                paths.append(path)
            }
        }
        return paths
    }

    /// One change of a commit, before the commit: notes the type the key is written as, and tells
    /// the commit what it needs to know of the key.
    ///
    /// - Parameters:
    ///   - key: The key the change writes.
    ///   - value: Its new value; `nil` removes the entry.
    ///   - valueType: The type it was written as; `nil` for a change made without a typed key.
    ///   - isCurrent: Whether memory holds the latest commit: when it does not, the value it would
    ///     be compared with may be stale, and the change is kept whatever it holds.
    /// - Returns: The key's slot; the type the key was first used with, if `valueType` is another,
    ///   reported once; the origin of the managed setting that forces the key, if one does; and
    ///   whether the change is to be written.
    @inline(__always)
    mutating func admit(
        _ key: ResolvedKey,
        _ value: borrowing StoredValue?,
        as valueType: (any Any.Type)?,
        isCurrent: Bool
    ) -> (slot: Slot, conflictingType: (any Any.Type)?, forcingOrigin: String?, isChange: Bool) {
        let forcingOrigin = forcingOrigin(of: key)
        let slot = slot(for: key)
        let conflictingType = valueType.flatMap { slot.register($0) }
        return (slot, conflictingType, forcingOrigin, !isCurrent || !slot.stores(value))
    }

    /// Empty arrays for a commit's changes and their slots, with the capacity of the last commit's.
    mutating func takeChangeBuffers() -> ([EntryChange], [Slot]) {
        var buffers: ([EntryChange], [Slot]) = ([], [])
        swap(&buffers.0, &spareChanges)
        swap(&buffers.1, &spareSlots)
        buffers.0.empty()
        buffers.1.empty()
        return buffers
    }

    /// Keeps a commit's arrays for the next commit to reuse, once it is applied.
    ///
    /// Its changes are the values now stored, which the slots hold too: keeping them costs no memory.
    mutating func returnChangeBuffers(_ changes: [EntryChange], _ slots: [Slot]) {
        spareChanges = changes
        spareSlots = slots
    }

    /// The slot of a key, made the first time the key is read or changed.
    @inline(__always)
    mutating func slot(for key: ResolvedKey) -> Slot {
        slots[key] ?? makeSlot(for: key, stored: loaded[key])
    }

    /// Runs `body` on the slot of a key whose key object's serial is `serial` (zero for none).
    ///
    /// The slot is made if the key has none, found through the array by serial, else as
    /// ``slot(for:)`` finds it. With `tracking`, first notes that the Observation framework may
    /// track the key (``track(_:)``).
    @inline(__always)
    mutating func withSlot<Result>(
        for key: ResolvedKey,
        serial: UInt32,
        tracking: Bool,
        _ body: (Slot) -> Result
    ) -> Result {
        let index = Int(serial)
        let slot: Slot
        if index < slotsBySerial.count, let found = slotsBySerial[index] {
            slot = found
        } else {
            slot = slotRecordingSerial(for: key, serial: serial)
        }
        if tracking, slot.trackedChangesLeft != Slot.trackedChanges {
            track(slot)
        }
        return body(slot)
    }

    /// What ``withSlot(for:serial:tracking:_:)`` does the first time a serial is asked for: apart from the
    /// read path.
    @inline(never)
    private mutating func slotRecordingSerial(for key: ResolvedKey, serial: UInt32) -> Slot {
        let slot = slot(for: key)
        let index = Int(serial)
        // Past eight times the slots the array would be mostly holes: the app made many more key
        // objects than this store reads through. Those keys take the table.
        if index != 0, index < max(1_024, 8 * slots.count) {
            if index >= slotsBySerial.count {
                slotsBySerial.append(contentsOf: repeatElement(nil, count: index + 1 - slotsBySerial.count))
            }
            slotsBySerial[index] = slot
        }
        return slot
    }

    /// The slot of a key, if it has one; unlike ``slot(for:)``, makes none.
    func existingSlot(for key: ResolvedKey) -> Slot? {
        slots[key]
    }

    /// Every key's slot, once a slot is made for every entry the backend held at opening: for
    /// listing what is stored.
    mutating func everySlot() -> [ResolvedKey: Slot] {
        for (key, value) in loaded.all where slots[key] == nil {
            makeSlot(for: key, stored: value)
        }
        loaded = StoredEntries()
        return Dictionary(uniqueKeysWithValues: slots.lazy.map { ($0.key, $0.value) })
    }

    @discardableResult
    private mutating func makeSlot(for key: ResolvedKey, stored: StoredValue?) -> Slot {
        let slot = Slot(stored: stored, observationPath: \PreferencesStore.[observing: ObservedKey(key: key)])
        if !overrides.isEmpty {
            slot.override = overrides[key]
        }
        slots[key] = slot
        return slot
    }
}

/// The Observation framework's key paths of the keys a commit changed, for the store to announce.
///
/// The first is held inline: a commit of one key, the common one, then allocates no array for its path.
struct ObservationPaths {
    private(set) var first: KeyPath<PreferencesStore, Int>?
    private(set) var rest: [KeyPath<PreferencesStore, Int>] = []

    mutating func append(_ path: KeyPath<PreferencesStore, Int>) {
        if first == nil {
            first = path
        } else {
            rest.append(path)
        }
    }
}

/// What a store knows about one key.
///
/// A class, so that a read takes a reference out of the table instead of copying every field.
/// Like the rest of ``StoreState``, it is only touched under the store's state lock.
final class Slot {
    // `@exclusivity(unchecked)`: every access happens under the store's state lock, which already
    // rules out overlapping ones, so the per-access runtime check would only cost reads time.

    // The fields a read of a scalar touches come first, within 48 bytes, so that they mostly share
    // a cache line: with 10,000 keys a read's slot is rarely in the cache.
    /// The stored value; `nil` when there is no entry.
    @exclusivity(unchecked) var stored: StoredValue?
    /// The value type the key was first used with in this process.
    @exclusivity(unchecked) var valueType: (any Any.Type)?
    /// The key path the Observation framework knows the key by.
    ///
    /// A constant, made with the slot: a `let` of an object the read holds, which the compiler can
    /// pass to the framework without retaining it (a retain touches one more object).
    let observationPath: KeyPath<PreferencesStore, Int>
    /// Whether the key was read through the subscript, which tells the Observation framework of the
    /// read: each of its changes is announced from then on (see ``StoreState/track(_:)``).
    @exclusivity(unchecked) var isReadThroughSubscript = false
    /// How many more changes of the key, announced, keep other processes' commits watched for it.
    @exclusivity(unchecked) var trackedChangesLeft: UInt8 = 0
    /// What a tracked read sets ``trackedChangesLeft`` to (see ``StoreState/track(_:)``).
    static let trackedChanges: UInt8 = 2
    /// What the override layers hold for the key; `nil`, and never looked at, for most keys.
    @exclusivity(unchecked) var override: OverrideEntry?
    /// `stored`, decoded by the last key that read it, for types whose decoding costs something.
    @exclusivity(unchecked) var decoded: DecodedValue?
    /// Changes whenever `stored` does, so that a value decoded outside the lock is cached only if
    /// it is still current, and a read failure is reported once per stored value.
    @exclusivity(unchecked) var generation: UInt64 = 0
    /// The other value types already reported as conflicting with `valueType`.
    @exclusivity(unchecked) var reportedConflicts: Set<ObjectIdentifier> = []
    /// The generation whose read failure was last reported.
    @exclusivity(unchecked) var reportedFailureGeneration: UInt64?
    /// The default this store computed for a key declared with a computed default.
    @exclusivity(unchecked) var computedDefault: (any Sendable)?

    init(stored: StoredValue?, observationPath: KeyPath<PreferencesStore, Int>) {
        self.stored = stored
        self.observationPath = observationPath
    }

    /// Records the value type a key is used with; returns the first type if it is another one,
    /// not reported before.
    @inline(__always)
    func register(_ type: any Any.Type) -> (any Any.Type)? {
        if let first = valueType, first == type { return nil }
        return registerAnother(type)
    }

    /// What `register(_:)` does for a key's first type or a conflicting one: apart from the read
    /// path, which keeps only the comparison with the first type.
    @inline(never)
    private func registerAnother(_ type: any Any.Type) -> (any Any.Type)? {
        guard let first = valueType else {
            valueType = type
            return nil
        }
        return reportedConflicts.insert(ObjectIdentifier(type)).inserted ? first : nil
    }

    /// Whether the slot stores `value`, compared where it lies: `stored != value` would copy both
    /// optionals twice on every write, into a tuple and out of it.
    func stores(_ value: borrowing StoredValue?) -> Bool {
        Self.same(stored, value)
    }

    /// Whether two optional values are the same, both borrowed: binding the slot's value to compare
    /// it would copy it out first.
    private static func same(_ lhs: borrowing StoredValue?, _ rhs: borrowing StoredValue?) -> Bool {
        switch lhs {
        case .none:
            switch rhs {
            case .none: return true
            case .some: return false
            }
        case .some(let lhs):
            switch rhs {
            case .none: return false
            case .some(let rhs): return lhs == rhs
            }
        }
    }

    func replace(with value: StoredValue?) {
        stored = value
        // Only when set: the library's scalars are never cached, and assigning `nil` over `nil`
        // still calls into the runtime to release the old one.
        if decoded != nil {
            decoded = nil
        }
        generation &+= 1
    }
}

/// A stored value decoded by one key codec, kept so that the next read through that codec need not
/// decode it.
///
/// Keyed by the codec, not the type: two keys of one type may store it differently (a codec of
/// the app's) or admit different values (rules), and neither may read what the other decoded. A
/// reference, so that a read copies one pointer out of the slot rather than an existential. The
/// value itself is in the subclass for its type, ``Decoded``.
class DecodedValue: @unchecked Sendable {
    // `@unchecked` because the compiler cannot see that the only subclass, `Decoded`, holds a
    // `Sendable` value in a constant.

    /// The codec that decoded the value.
    ///
    /// Compared before the value is read, so that reading it needs no cast the runtime checks (see
    /// ``read(into:decodedBy:)``). Held, so that no other codec can be made at its address while
    /// the value is kept.
    let codec: AnyObject

    fileprivate init(codec: AnyObject) {
        self.codec = codec
    }

    /// Copies the value into `value` if `codec` decoded it; returns whether it did.
    ///
    /// Not an optional result: unspecialised code (an app's type reads through it) would look up
    /// `Optional<Value>`'s metadata on every read.
    @inline(__always)
    func read<Value: Sendable>(into value: inout Value, decodedBy codec: KeyCodec<Value>) -> Bool {
        guard self.codec === codec else { return false }
        // A `KeyCodec<Value>` decoded it, so this object is a `Decoded<Value>`: no cast to check
        // at run time.
        value = unsafeDowncast(self, to: Decoded<Value>.self).value
        return true
    }
}

/// A decoded value of one type.
final class Decoded<Value: Sendable>: DecodedValue, @unchecked Sendable {
    let value: Value

    init(_ value: Value, decodedBy codec: KeyCodec<Value>) {
        self.value = value
        super.init(codec: codec)
    }
}
