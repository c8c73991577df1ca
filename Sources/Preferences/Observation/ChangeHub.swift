/// The store's observers, and the changes waiting to reach them.
///
/// Commits enqueue their changes while the store's write lock is held, so the queue is in commit
/// order. Delivery happens once the lock is released, by whichever thread gets to the queue first:
/// a thread that finds another already delivering leaves its changes to it, so changes reach every
/// observer in commit order, and never while the store holds a lock. An observer that writes to
/// the store only adds to the queue, which the delivering thread then delivers too.
///
/// (Delivering from a serial dispatch queue instead was measured: on two cores the hand-off made
/// each write twice as slow as delivering in place.)
final class ChangeHub: Sendable {
    /// What an observer watches.
    enum Filter: Sendable {
        case keys(Set<StorageKey>)
        case namespace(String)
        /// Every key but the library's own, such as the ledger.
        case everything
    }

    private struct Observer {
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

    private struct State {
        var observers: [UInt64: Observer] = [:]
        var nextID: UInt64 = 0
        var queue: [Queued] = []
        /// The last batch's buffer, emptied: it becomes the queue at the next swap, so that a stream
        /// of writes allocates no queue for each.
        var spareQueue: [Queued] = []
        var lastSequence: UInt64 = 0
        var isDelivering = false
        /// Told of every change whose keys the Observation framework may track.
        ///
        /// A direct reference, not a closure: a stored closure costs a copy of every change
        /// through a thunk.
        weak var store: PreferencesStore?
    }

    private let state = Locked(State())

    /// Whether changes wait to be delivered.
    var hasPending: Bool {
        state.withLock { !$0.queue.isEmpty }
    }

    /// Whether anyone is watching, so that the store knows to look out for other processes' commits.
    var hasObservers: Bool {
        state.withLock { !$0.observers.isEmpty }
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
            state.observers[id] = Observer(filter: filter, since: state.lastSequence, deliver: deliver)
            return id
        }
    }

    /// Sets the store to announce changes to the Observation framework through.
    func announce(to store: PreferencesStore) {
        state.withLock { $0.store = store }
    }

    /// Unregisters an observer: from now on it receives nothing, even from a delivery under way.
    func remove(_ id: UInt64) {
        state.withLock { _ = $0.observers.removeValue(forKey: id) }
    }

    /// Queues a change for delivery, made of its parts only if anyone will receive it.
    ///
    /// Call it with the store's write lock held, in commit order.
    /// A change reaches the store's announcement only if the Observation framework may be tracking one of its keys,
    /// which it can only be if the key was read through the store's subscript.
    func enqueue(
        _ changes: [EntryChange],
        origin: ChangeOrigin,
        writeIdentifier: String?,
        observationPaths: [KeyPath<PreferencesStore, Int>]
    ) {
        guard !changes.isEmpty else { return }
        state.withLock { state in
            state.lastSequence += 1
            if !state.observers.isEmpty || !observationPaths.isEmpty {
                let change = CommittedChange(
                    changes: changes, origin: origin, writeIdentifier: writeIdentifier,
                    observationPaths: observationPaths)
                state.queue.append(Queued(sequence: state.lastSequence, change: change))
            }
        }
    }

    /// Delivers the queued changes in order, unless another thread is already doing so.
    func deliverPending() {
        let isFirst = state.withLock { state in
            guard !state.isDelivering, !state.queue.isEmpty else { return false }
            state.isDelivering = true
            return true
        }
        if isFirst {
            drain()
        }
    }

    /// Delivers batch after batch until the queue stays empty; one lock per batch.
    private func drain() {
        var batch: [Queued] = []
        while let (observers, store) = nextBatch(swappingWith: &batch) {
            for queued in batch {
                let change = queued.change
                #if canImport(Observation)
                    if !change.observationPaths.isEmpty {
                        store?.announce(change)
                    }
                #endif
                for (id, observer) in observers where observer.since < queued.sequence {
                    guard let narrowed = change.narrowed(to: observer.filter) else { continue }
                    // Checked again for each call, so that cancelling an observation stops it at once.
                    guard state.withLock({ $0.observers[id] != nil }) else { continue }
                    observer.deliver(narrowed)
                }
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Swaps the queue for `batch`, an empty buffer, and returns who to deliver it to; `nil`, with
    /// delivery over, once the queue is empty.
    private func nextBatch(swappingWith batch: inout [Queued]) -> ([(UInt64, Observer)], PreferencesStore?)? {
        state.withLock { state in
            guard !state.queue.isEmpty else {
                state.isDelivering = false
                swap(&batch, &state.spareQueue)
                return nil
            }
            if batch.capacity == 0 {
                swap(&batch, &state.spareQueue)
            }
            swap(&batch, &state.queue)
            let observers = state.observers.isEmpty ? [] : state.observers.sorted { $0.key < $1.key }
            return (observers, state.store)
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
        return CommittedChange(changes: watched, origin: origin, writeIdentifier: writeIdentifier, observationPaths: [])
    }
}
