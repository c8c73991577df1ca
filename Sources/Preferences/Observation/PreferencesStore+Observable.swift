#if canImport(Observation)
    public import Observation

    /// A store works with the Observation framework, and so with SwiftUI: reading `store[.key]` inside
    /// `withObservationTracking`, or in a view's `body`, tracks that key alone. A change to another key
    /// does not fire it.
    ///
    /// ```swift
    /// struct SettingsView: View {
    ///     let store: PreferencesStore
    ///
    ///     var body: some View {
    ///         Toggle("Large text", isOn: Binding(
    ///             get: { store[.prefersLargeText] },
    ///             set: { store[.prefersLargeText] = $0 }
    ///         ))
    ///     }
    /// }
    /// ```
    extension PreferencesStore: Observable {}

    extension PreferencesStore {
        /// A member per key, for the Observation framework to tell keys apart: each key has a key path
        /// of its own, `\.[observing: key]`.
        subscript(observing key: ObservedKey) -> Int { 0 }

        /// Tells the Observation framework that a key changed, after the commit.
        func announce(_ path: KeyPath<PreferencesStore, Int>) {
            observationRegistrar.willSet(self, keyPath: path)
            observationRegistrar.didSet(self, keyPath: path)
        }

        /// Tells the Observation framework that a key changed, after the commit, through the path
        /// its slot holds for the store's life.
        func announce(_ path: Unmanaged<KeyPath<PreferencesStore, Int>>) {
            path.withBorrowedReference { announce($0) }
        }

        /// Tells the Observation framework that a key was read.
        func trackAccess(_ path: Unmanaged<KeyPath<PreferencesStore, Int>>) {
            path.withBorrowedReference { observationRegistrar.access(self, keyPath: $0) }
        }
    }
#endif

/// The argument of a key's observation key path: the key, and a mark of whether the Observation
/// framework ever tracked the path.
///
/// Tracking a key path, in `withObservationTracking` or a SwiftUI view, puts it in a set of the
/// paths read, which hashes it; so does registering an observer for it. Nothing public says
/// whether a view still waits on a key, so that hash is the sign: a key nobody ever tracked has
/// no observer to tell of a change, and its writes skip the framework's `willSet` and `didSet`,
/// about 390 instructions. The mark is set while tracking reads the key, under the store's state
/// lock and before the value is read, so a write that commits after that read sees the mark
/// (see `Slot.announcedPath`). It is never cleared.
struct ObservedKey: Hashable, Sendable {
    let key: StorageKey
    let tracked: TrackingMark

    static func == (lhs: ObservedKey, rhs: ObservedKey) -> Bool {
        lhs.tracked.set()
        rhs.tracked.set()
        return lhs.key == rhs.key
    }

    func hash(into hasher: inout Hasher) {
        tracked.set()
        hasher.combine(key)
    }
}

extension Slot {
    /// The key path the Observation framework knows this key by, made on first use and kept.
    ///
    /// Unretained: the slot holds the path for as long as the slot lives, and a slot lives as long
    /// as its store. Passed to `access` retained, as a strong reference read out of a `var` must
    /// be, it cost a read of an Int 51 of its 579 instructions.
    @inline(__always)
    func observationKeyPath(for key: StorageKey) -> Unmanaged<KeyPath<PreferencesStore, Int>> {
        if let observationPath {
            return Unmanaged.passUnretained(observationPath)
        }
        return makeObservationKeyPath(for: key)
    }

    /// Makes the key's path, on its first read through the subscript: apart from the read path,
    /// which it cost 20 instructions when the compiler no longer inlined the whole.
    @inline(never)
    private func makeObservationKeyPath(for key: StorageKey) -> Unmanaged<KeyPath<PreferencesStore, Int>> {
        let path = \PreferencesStore.[observing: ObservedKey(key: key, tracked: trackingMark)]
        observationPath = path
        return Unmanaged.passUnretained(path)
    }

    /// The key path to announce a change of this key through: `nil` unless the Observation
    /// framework tracked it at some point (see ``ObservedKey``).
    var announcedPath: KeyPath<PreferencesStore, Int>? {
        trackingMark.isSet ? observationPath : nil
    }
}
