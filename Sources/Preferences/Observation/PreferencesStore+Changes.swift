import Dispatch
import Foundation

extension PreferencesStore {
    /// The values of a key as they change: first its current value, unless `initial` is `false`,
    /// then the value of each commit that changes it, in commit order.
    ///
    /// The stream keeps only the newest value for a consumer that falls behind: it is for showing
    /// the current value, not for counting changes (``changes(forAnyOf:)`` gives every commit). It
    /// delivers in the consuming task's isolation, so a loop on the main actor needs no hop.
    ///
    /// ```swift
    /// for await theme in store.changes(for: .theme) {
    ///     apply(theme)
    /// }
    /// ```
    ///
    /// Changes made by this store, by a migration, and by other stores on the same file (in this
    /// process or another) all arrive. A write of the value already stored is no change. The stream
    /// ends when the task iterating it is cancelled or the stream is released.
    ///
    /// - Parameters:
    ///   - key: The key to watch.
    ///   - initial: Whether the stream starts with the key's current value.
    /// - Returns: The key's values; its default when the entry is removed or does not read as its type.
    public func changes<Value>(for key: PreferenceKey<Value>, initial: Bool = true) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .bufferingNewest(1))
        let observation = observe(key) { value, _ in
            continuation.yield(value)
        } start: { current in
            if initial {
                continuation.yield(current)
            }
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// The commits that change any of the given keys, each saying which of them changed and where.
    ///
    /// ```swift
    /// for await change in store.changes(forAnyOf: .theme, .fontSize) where change.origin != .thisStore {
    ///     reload(change.keys)
    /// }
    /// ```
    ///
    /// - Parameter keys: The keys to watch.
    /// - Returns: One ``PreferencesChange`` per commit that changes any of them.
    public func changes(forAnyOf keys: PreferenceKeys...) -> AsyncStream<PreferencesChange> {
        changes(matching: .keys(Set(keys.map { $0.resolvedKey(appNamespace: appNamespace) })))
    }

    /// The commits that change any key in a namespace, each saying which keys changed and where.
    ///
    /// - Parameter namespace: The namespace to watch.
    /// - Returns: One ``PreferencesChange`` per commit that changes a key in it.
    public func changes(in namespace: PreferenceNamespace) -> AsyncStream<PreferencesChange> {
        changes(matching: .namespace(namespace.resolved(appNamespace: appNamespace)))
    }

    /// Calls `handler` with a key's value after each commit that changes it, until the returned
    /// observation is cancelled or released.
    ///
    /// The handler runs on the thread that delivers the change, after the store released its
    /// locks; it may read and write the store. For delivery on the main actor, use
    /// ``observeOnMainActor(_:handler:)``.
    ///
    /// When the new stored value does not read as the key's type, the handler receives the key's
    /// default and the problem is reported through ``errors``, as the subscript reports it.
    ///
    /// - Parameters:
    ///   - key: The key to watch.
    ///   - handler: Receives the key's new value (its default when removed) and the change.
    /// - Returns: The observation; keep it for as long as `handler` should be called.
    public func observe<Value>(
        _ key: PreferenceKey<Value>,
        handler: @escaping @Sendable (Value, PreferencesChange) -> Void
    ) -> PreferencesObservation {
        observe(key, handler: handler, start: { _ in })
    }

    /// Calls `handler` on the main actor with a key's value after each commit that changes it, until
    /// the returned observation is cancelled or released: for code that updates a user interface.
    ///
    /// Changes arrive in commit order. One delivered on the main thread runs the handler at once;
    /// one delivered on another thread is queued on the main queue.
    ///
    /// ```swift
    /// observation = store.observeOnMainActor(.theme) { theme, _ in
    ///     window.apply(theme)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key to watch.
    ///   - handler: Receives the key's new value (its default when removed) and the change.
    /// - Returns: The observation; keep it for as long as `handler` should be called.
    public func observeOnMainActor<Value>(
        _ key: PreferenceKey<Value>,
        handler: @escaping @MainActor @Sendable (Value, PreferencesChange) -> Void
    ) -> PreferencesObservation {
        // Changes still queued: while there are any, one delivered on the main thread queues too,
        // so that it cannot overtake them. The main queue runs in order.
        let queued = Locked(0)
        return observe(key) { value, change in
            let runsNow = Thread.isMainThread && queued.withLock { $0 == 0 }
            if runsNow {
                MainActor.assumeIsolated { handler(value, change) }
                return
            }
            queued.withLock { $0 += 1 }
            DispatchQueue.main.async {
                MainActor.assumeIsolated { handler(value, change) }
                queued.withLock { $0 -= 1 }
            }
        }
    }

    /// Calls `handler` after each commit that changes any of the given keys, until the returned
    /// observation is cancelled or released.
    ///
    /// - Parameters:
    ///   - keys: The keys to watch.
    ///   - handler: Receives each change, narrowed to the watched keys.
    /// - Returns: The observation; keep it for as long as `handler` should be called.
    public func observe(
        anyOf keys: PreferenceKeys...,
        handler: @escaping @Sendable (PreferencesChange) -> Void
    ) -> PreferencesObservation {
        let filter = ChangeHub.Filter.keys(Set(keys.map { $0.resolvedKey(appNamespace: appNamespace) }))
        return addObserver(filter) { [appNamespace] change in
            handler(change.publicChange(appNamespace: appNamespace))
        }
    }

    private func changes(matching filter: ChangeHub.Filter) -> AsyncStream<PreferencesChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: PreferencesChange.self)
        let observation = addObserver(filter) { [appNamespace] change in
            continuation.yield(change.publicChange(appNamespace: appNamespace))
        }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// Observes one key; `start` receives its value as of the moment observing began, with no
    /// commit in between.
    func observe<Value>(
        _ key: PreferenceKey<Value>,
        handler: @escaping @Sendable (Value, PreferencesChange) -> Void,
        start: (Value) -> Void
    ) -> PreferencesObservation {
        let resolvedKey = resolvedKey(for: key)
        let codec = key.codec
        let defaultValue = defaultValue(for: key)
        let storedKey = storedKey(for: resolvedKey)
        let deliver: @Sendable (CommittedChange) -> Void = { [appNamespace, errorChannel] change in
            for entry in change.changes where entry.key == resolvedKey {
                var value = defaultValue
                if self.isOverridden(resolvedKey) {
                    // The value an override layer holds now, or what lies under it.
                    value = self.currentValue(for: key, tracksAccess: false)
                } else if let stored = entry.value {
                    do throws(DecodeFailure) {
                        value = try codec.decode(stored)
                    } catch {
                        errorChannel.report(
                            self.readFailure(error, key: storedKey, stored: stored, expected: Value.self))
                    }
                }
                handler(value, change.publicChange(appNamespace: appNamespace))
            }
        }
        return addObserver(
            .keys([resolvedKey]), start: { start(self.currentValue(for: key, tracksAccess: false)) }, deliver: deliver)
    }

    /// Adds an observer with the write lock held, so that no commit falls between `start` and the
    /// first change delivered, and watches other processes while anyone observes.
    func addObserver(
        _ filter: ChangeHub.Filter,
        start: () -> Void = {},
        deliver: @escaping @Sendable (CommittedChange) -> Void
    ) -> PreferencesObservation {
        let id = withWriteLock {
            catchUpIfNeeded()
            start()
            return changeHub.add(filter, deliver: deliver)
        }
        commitWatcher?.observerAdded()
        // The watcher weakly: a token kept after its store is gone must not keep the watcher's
        // thread, and the lock file it holds, alive.
        return PreferencesObservation { [changeHub, weak commitWatcher] in
            if changeHub.remove(id) {
                commitWatcher?.observerRemoved()
            }
        }
    }
}

extension CommittedChange {
    func publicChange(appNamespace: String) -> PreferencesChange {
        PreferencesChange(
            keys: changes.map {
                StoredKey($0.key.name, in: PreferenceNamespace(stored: $0.key.namespace, appNamespace: appNamespace))
            },
            origin: origin,
            writeIdentifier: writeIdentifier
        )
    }
}
