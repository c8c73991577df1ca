import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a round of a ``PreferencesSync`` whenever one of its keys changes in the store, in any
/// process, or a file in its folder changes: what ``PreferencesSync/start()`` sets going.
///
/// Rounds run one at a time on a queue of their own; changes that arrive while one is queued or
/// under way ask for one more, not one each. The transport is watched as it says
/// (``SyncTransport/watch(on:_:)``); the store with an observer of the synced keys, which leaves out
/// the changes sync itself applied, and hears of a managed setting that stops forcing a key.
final class SyncWatcher: Sendable {
    private let queue = DispatchQueue(label: "Preferences.PreferencesSync")
    private struct State {
        var observation: PreferencesObservation?
        /// What stops the transport's calls.
        var transportWatch: (any SyncWatch)?
        var isRoundQueued = false
        var isStopped = false
    }
    private let state = Locked(State())
    private weak let sync: PreferencesSync?

    init(sync: PreferencesSync) {
        self.sync = sync
        queue.setSpecific(key: Self.queueKey, value: ObjectIdentifier(self))
    }

    /// Starts watching the folder and the store.
    ///
    /// - Throws: A ``PreferencesError`` if the folder cannot be watched.
    func run() throws(PreferencesError) {
        guard let sync else { return }
        // Weakly: the store keeps its observers, and the sync keeps the store.
        let observation = sync.store.addObserver(.keys(Set(sync.keys))) { [weak self, weak sync] change in
            if case .sync = change.origin { return }
            sync?.noteChanged(change.changes, origin: change.origin)
            self?.requestRound()
        }
        let transportWatch: any SyncWatch
        do {
            transportWatch = try sync.session.withLock {
                (session: inout PreferencesSync.Session) throws(PreferencesError) in
                try session.transport.watch(on: queue) { [weak self] in self?.requestRound() }
            }
        } catch {
            observation.cancel()
            throw error
        }
        let isStopped = state.withLock { state in
            if !state.isStopped {
                state.observation = observation
                state.transportWatch = transportWatch
            }
            return state.isStopped
        }
        if isStopped {
            observation.cancel()
            transportWatch.cancel()
        }
    }

    /// Stops watching.
    ///
    /// Waits for a round under way unless called from one (the sync released as its round ends).
    func stop() {
        let (observation, transportWatch) = state.withLock { state in
            state.isStopped = true
            defer {
                state.observation = nil
                state.transportWatch = nil
            }
            return (state.observation, state.transportWatch)
        }
        observation?.cancel()
        transportWatch?.cancel()
        if DispatchQueue.getSpecific(key: Self.queueKey) != ObjectIdentifier(self) {
            queue.sync {}
        }
    }

    /// Which watcher's queue the current thread runs on, if any.
    private static let queueKey = DispatchSpecificKey<ObjectIdentifier>()

    private func requestRound() {
        let isNew = state.withLock { state in
            defer { state.isRoundQueued = true }
            return !state.isRoundQueued && !state.isStopped
        }
        guard isNew else { return }
        queue.async { [weak self] in
            guard let self else { return }
            let isStopped = self.state.withLock { state in
                state.isRoundQueued = false
                return state.isStopped
            }
            guard !isStopped, let sync = self.sync else { return }
            do throws(PreferencesError) {
                let report = try sync.runRound(lookingAtEveryKey: false)
                sync.store.errorChannel.report(report.problems)
            } catch {
                // Tried again, looking at every key, at the next change here or there.
                sync.store.errorChannel.report(error)
            }
        }
    }
}
