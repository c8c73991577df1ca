/// The store's observers, and the changes waiting to reach them.
///
/// Commits enqueue their changes while the store's write lock is held, so the queue is in commit
/// order. Delivery happens once the lock is released, by whichever thread gets to the queue first:
/// a thread that finds another already delivering leaves its changes to it, so changes reach every
/// observer in commit order, and never while the store holds a lock. An observer that writes to
/// the store only adds to the queue, which the delivering thread then delivers too.
///
/// Key paths for the Observation framework carry no order: a queue that holds one path and nothing
/// else, with nobody delivering, is announced by the thread that finds it, at once. A tracking
/// handler that writes to the store then has its write announced inside its own announcement.
///
/// Delivery is in place, not from a serial dispatch queue: the hand-off to another thread would
/// cost each write more than delivering.
final class ChangeHub: Sendable {
    /// What an observer watches.
    enum Filter: Sendable {
        case keys(Set<ResolvedKey>)
        case namespace(String)
        /// Every key but the library's own, such as the ledger.
        case everything
    }

    private struct Observer {
        var id: UInt64
        var filter: Filter
        /// The sequence number of the last change committed before the observer was added: it
        /// receives only later ones.
        var since: UInt64
        var deliver: @Sendable (CommittedChange) -> Void
    }

    /// A change in the queue, with its number in commit order.
    ///
    /// A struct, not a tuple: a tuple's elements are destroyed through generic metadata.
    private struct Queued {
        var sequence: UInt64
        var change: CommittedChange
    }

    /// What waits to be delivered: changes for observers, and keys to announce to the Observation
    /// framework, each in commit order.
    ///
    /// Kept apart so that a change nobody observes, only a view may track, queues one key path
    /// rather than a change made for it.
    private struct Pending {
        var changes: [Queued] = []
        var announcements: [KeyPath<PreferencesStore, Int>] = []

        var isEmpty: Bool { changes.isEmpty && announcements.isEmpty }

        /// Empties both, keeping their buffers.
        mutating func removeAll() {
            changes.empty()
            announcements.empty()
        }
    }

    private struct State {
        var observers: [UInt64: Observer] = [:]
        var nextID: UInt64 = 0
        var pending = Pending()
        /// The last batch's buffers, emptied: they become the queue at the next swap, so that a
        /// stream of writes allocates no queue for each.
        var spare = Pending()
        var lastSequence: UInt64 = 0
        var isDelivering = false
    }

    private let state = Locked(State())
    /// Whether `state` has observers, and whether its queue holds anything, read without its lock:
    /// a commit nobody observes passes the hub, and a thread with nothing queued leaves it, without
    /// taking the lock.
    private let hasObserversFlag = AtomicFlag()
    private let hasPendingFlag = AtomicFlag()

    /// Whether changes wait to be delivered, read without the hub's lock.
    ///
    /// A thread that queued something sees it here, until some thread takes it to deliver.
    var hasPending: Bool {
        hasPendingFlag.isSet
    }

    /// Whether anyone is watching, read without the hub's lock: so that the store knows to look
    /// out for other processes' commits, and whether a commit must queue its change.
    ///
    /// Observers are added only with the store's write lock held (see ``add(_:deliver:)``): a
    /// thread holding it that reads `false` knows that none is there, and none can come, until it
    /// lets go.
    var hasObservers: Bool {
        hasObserversFlag.isSet
    }

    /// Registers an observer; it receives each change committed from now on that touches what it
    /// watches, narrowed to those keys.
    ///
    /// Call it with the store's write lock held, so that no commit falls between what the caller
    /// read and the first change the observer receives.
    func add(_ filter: Filter, deliver: @escaping @Sendable (CommittedChange) -> Void) -> UInt64 {
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = Observer(id: id, filter: filter, since: state.lastSequence, deliver: deliver)
            hasObserversFlag.set(true)
            return id
        }
    }

    /// Unregisters an observer: from now on it receives nothing, even from a delivery under way.
    ///
    /// - Returns: Whether it was registered: an observation may end twice, cancelled and then
    ///   released.
    @discardableResult
    func remove(_ id: UInt64) -> Bool {
        state.withLock { state in
            let removed = state.observers.removeValue(forKey: id) != nil
            hasObserversFlag.set(!state.observers.isEmpty)
            return removed
        }
    }

    /// Queues a change for delivery: for observers, made of its parts only if there are any, and
    /// for the Observation framework, the key paths of its keys that a view may track.
    ///
    /// Call it with the store's write lock held, in commit order. `observationPaths` holds the paths
    /// of the keys the framework may track (see ``StoreState/announcement(for:)``).
    func enqueue(
        _ changes: [EntryChange],
        origin: ChangeOrigin,
        writeIdentifier: String?,
        observationPaths: ObservationPaths
    ) {
        guard !changes.isEmpty else { return }
        enqueue(
            origin: origin, writeIdentifier: writeIdentifier, firstPath: observationPaths.first,
            otherPaths: observationPaths.rest
        ) { changes }
    }

    /// Queues the change of a commit of one key, made into an array only if an observer is there
    /// to receive it; `observationPath` is the key's, if a view may track it.
    func enqueue(_ change: EntryChange, origin: ChangeOrigin, observationPath: KeyPath<PreferencesStore, Int>?) {
        enqueue(origin: origin, writeIdentifier: nil, firstPath: observationPath, otherPaths: []) { [change] }
    }

    private func enqueue(
        origin: ChangeOrigin,
        writeIdentifier: String?,
        firstPath: KeyPath<PreferencesStore, Int>?,
        otherPaths: [KeyPath<PreferencesStore, Int>],
        changes: () -> [EntryChange]
    ) {
        state.withLock { state in
            state.lastSequence += 1
            if let firstPath {
                state.pending.announcements.append(firstPath)
                if !otherPaths.isEmpty {
                    state.pending.announcements.append(contentsOf: otherPaths)
                }
            }
            if !state.observers.isEmpty {
                let change = CommittedChange(changes: changes(), origin: origin, writeIdentifier: writeIdentifier)
                state.pending.changes.append(Queued(sequence: state.lastSequence, change: change))
            }
            hasPendingFlag.set(!state.pending.isEmpty)
        }
    }

    /// Delivers the queued changes in order, batch after batch until the queue stays empty, unless
    /// another thread is already doing so; announces their keys to the Observation framework
    /// through `store`, the store this hub belongs to.
    ///
    /// The store is passed in, not kept: a stored reference to it would have to be weak, and a weak
    /// reference makes every retain and release of the store take the runtime's slow path.
    func deliverPending(announcingThrough store: PreferencesStore) {
        // Nothing queued, the common case once a commit nobody observes announced its own key:
        // left without the lock. What another thread queues, it delivers itself.
        guard hasPendingFlag.isSet else { return }
        #if canImport(Observation)
            // The common case, one write's key path and nothing else, with nobody delivering: taken
            // out alone and announced, without the batch's buffers and the second look at the queue.
            // Another thread may announce at the same moment, which the framework allows; changes
            // for observers never go this way, so their order is untouched.
            if let path = takeLoneAnnouncement() {
                store.announce(path)
                return
            }
        #endif
        var batch = Pending()
        var observers: [Observer] = []
        guard takeBatch(into: &batch, observers: &observers, startingDelivery: true) else { return }
        repeat {
            #if canImport(Observation)
                for index in batch.announcements.indices {
                    store.announce(batch.announcements[index])
                }
            #endif
            for queued in batch.changes {
                let change = queued.change
                for observer in observers where observer.since < queued.sequence {
                    guard let narrowed = change.narrowed(to: observer.filter) else { continue }
                    // Checked again for each call, so that cancelling an observation stops it at once.
                    guard state.withLock({ $0.observers[observer.id] != nil }) else { continue }
                    observer.deliver(narrowed)
                }
            }
            batch.removeAll()
        } while takeBatch(into: &batch, observers: &observers, startingDelivery: false)
    }

    /// The queue's one key path, taken out, when it holds that alone and nobody is delivering.
    private func takeLoneAnnouncement() -> KeyPath<PreferencesStore, Int>? {
        state.withLock { state in
            guard !state.isDelivering, state.pending.changes.isEmpty, state.pending.announcements.count == 1 else {
                return nil
            }
            defer { hasPendingFlag.set(false) }
            return state.pending.announcements.removeLast()
        }
    }

    /// Swaps the queue for `batch`, and sets who to deliver it to; `false` once the queue is empty.
    ///
    /// `batch` comes in as empty buffers; `observers` are set in the order they were added. An
    /// empty queue ends delivery.
    ///
    /// Starting delivery claims it in the same lock, and takes nothing if another thread is
    /// delivering: that thread takes these changes too. Out parameters, not an optional result:
    /// returning an optional struct of them would copy it through outlined functions.
    private func takeBatch(
        into batch: inout Pending,
        observers: inout [Observer],
        startingDelivery: Bool
    ) -> Bool {
        state.withLock { state in
            if startingDelivery {
                guard !state.isDelivering, !state.pending.isEmpty else { return false }
                state.isDelivering = true
            } else if state.pending.isEmpty {
                state.isDelivering = false
                swap(&batch, &state.spare)
                return false
            }
            if batch.changes.capacity == 0 && batch.announcements.capacity == 0 {
                swap(&batch, &state.spare)
            }
            swap(&batch, &state.pending)
            hasPendingFlag.set(false)
            observers = state.observers.isEmpty ? [] : state.observers.values.sorted { $0.id < $1.id }
            return true
        }
    }
}

extension CommittedChange {
    /// The part of the change an observer watches, or `nil` if none of it.
    fileprivate func narrowed(to filter: ChangeHub.Filter) -> CommittedChange? {
        let watched: [EntryChange] =
            switch filter {
            case .keys(let keys): changes.filter { keys.contains($0.key) }
            case .namespace(let namespace): changes.filter { $0.key.namespace == namespace }
            case .everything: changes.filter { !$0.key.isReserved }
            }
        guard !watched.isEmpty else { return nil }
        return CommittedChange(changes: watched, origin: origin, writeIdentifier: writeIdentifier)
    }
}
