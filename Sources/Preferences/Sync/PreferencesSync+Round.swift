import Foundation

/// One round of sync, with the store's writers locked out everywhere.
///
/// For each key it looks at, three things are compared: the value the store holds, the version the
/// store last synced (``SyncState``), and the latest version the transport knows to be there.
///
/// 1. The value differs from the version synced: it changed here. It is stamped with the time it
///    was committed, as far as known, and offered, unless a version there is later still. A key
///    the store never synced takes the version there, if there is one, before its own is offered
///    (a device pulls before it pushes), so that a new device, or a key newly synced, cannot
///    overwrite what the user chose elsewhere.
/// 2. Otherwise, a version there that wins over the one synced is applied, as a commit whose
///    origin is the device that made it, and becomes the version synced.
/// 3. Otherwise, a version synced that is not there (a rename moved it, or a round was killed
///    before it offered it) is offered again.
///
/// What is applied, and the versions made here, are committed before anything is offered: a round
/// killed between the two leaves versions recorded and not offered, which the next round offers
/// (3). While something there could not be read, a key the store never synced is left for a later
/// round, rather than offered in place of a version that may be in what was skipped.
extension PreferencesSync {
    func runRound(lookingAtEveryKey: Bool) throws(PreferencesError) -> SyncReport {
        do {
            return try store.withWriteLock {
                try store.withExclusiveAccess {
                    try session.withLock { (session: inout Session) throws(PreferencesError) -> SyncReport in
                        do throws(PreferencesError) {
                            return try round(&session, lookingAtEveryKey: lookingAtEveryKey)
                        } catch {
                            // What the round took in is taken: the next one looks at every key.
                            session.changedKeys = nil
                            throw error
                        }
                    }
                }
            }
        } catch let error as PreferencesError {
            throw error
        } catch {
            preconditionFailure("a round throws only PreferencesError, not \(error)")
        }
    }

    private func round(_ session: inout Session, lookingAtEveryKey: Bool) throws(PreferencesError) -> SyncReport {
        let arrivals = try session.transport.readChanges()
        session.clock.see(arrivals.latestStamp)
        if arrivals.startsOver {
            try forgetSyncedVersions()
        }
        let looksAtEveryKey = lookingAtEveryKey || arrivals.startsOver || session.changedKeys == nil
        var keysToLookAt = looksAtEveryKey ? keySet : session.changedKeys ?? []
        keysToLookAt.formUnion(arrivals.changedKeys.intersection(keySet))
        session.changedKeys = []
        // Cleared once the round has done its work: a round that fails leaves them to the next.
        let noticed = session.noticedTimes
        // Read only if a key with no version is looked at: a list of every synced key.
        lazy var joined = Set(SyncState.keys(in: store.storedValue(at: SyncState.keysKey)))

        var plan = Plan()
        var deferredTimes: [ResolvedKey: Int64] = [:]
        // A forced key is looked at again when the force ends: the store tells its observers.
        for key in keysToLookAt.sorted() where !isForced(key) {
            let current = store.storedValue(at: key)
            let synced: SyncVersion?
            do throws(PreferencesError) {
                synced = try store.syncedVersion(of: key)
            } catch {
                plan.problems.append(error)
                continue
            }
            if let synced {
                session.clock.see(synced.stamp)
            }
            let there = session.transport.version(of: key)
            let changedHere = synced.map { current != $0.value } ?? (current != nil)
            if changedHere && (synced != nil || joined.contains(key)) {
                plan.madeHere.append((key, synced))
            } else if let there, there.isNewer(than: synced) {
                plan.apply(there, to: key, current: current)
            } else if synced == nil && arrivals.mayHaveSkipped(key) && !joined.contains(key) {
                // Left until what was skipped reads: it may hold a version of the key.
                session.changedKeys?.insert(key)
                deferredTimes[key] = noticed[key]
            } else if changedHere {
                plan.madeHere.append((key, synced))
            } else if synced == nil {
                // Looked at, with nothing anywhere: a value stored from now on is a change made here.
                if !joined.contains(key) {
                    plan.joined.append(key)
                }
            } else if let synced, !synced.isSameChange(as: there) {
                plan.offered.append(SyncFile.Entry(key: key, version: synced))
            }
        }

        let times =
            plan.madeHere.isEmpty
            ? [:] : commitTimes(of: plan.madeHere.map(\.key), noticed: noticed, into: &plan.problems)
        for (key, synced) in plan.madeHere {
            let current = store.storedValue(at: key)
            let version = SyncVersion(
                stamp: session.clock.stamp(committedAt: times[key], after: synced?.stamp), device: deviceID,
                value: current)
            if let there = session.transport.version(of: key), there.isNewer(than: version) {
                // Changed here, and later still elsewhere.
                plan.apply(there, to: key, current: current)
            } else {
                plan.recorded.append(
                    PendingChange(key: SyncState.versionKey(for: key), value: SyncState.stored(version), valueType: nil)
                )
                plan.offered.append(SyncFile.Entry(key: key, version: version))
                plan.sent.append(store.storedKey(for: key))
            }
        }
        if !plan.joined.isEmpty {
            let keys = (joined.union(plan.joined)).sorted()
            plan.recorded.append(
                PendingChange(key: SyncState.keysKey, value: SyncState.stored(keys: keys), valueType: nil))
        }

        for device in plan.applied.keys.sorted() {
            try store.commit(plan.applied[device] ?? [], syncedFrom: device)
        }
        if !plan.recorded.isEmpty {
            try store.commit(plan.recorded)
        }
        session.noticedTimes = deferredTimes
        let refused = try session.transport.offer(plan.offered) {
            let held = store.syncedVersions()
            plan.problems += held.problems
            return held.versions
        }
        return SyncReport(
            received: plan.received.map(store.storedKey(for:)), sent: plan.sent,
            problems: arrivals.problems + plan.problems + refused)
    }

    /// What a round decided, to commit and offer.
    private struct Plan {
        /// The versions that arrived and win, with the values they set, by the device that made them.
        var applied: [String: [PendingChange]] = [:]
        var received: [ResolvedKey] = []
        /// The keys whose values changed here, to stamp, with the version each replaces.
        var madeHere: [(key: ResolvedKey, synced: SyncVersion?)] = []
        /// The keys looked at for the first time with nothing there left unread.
        var joined: [ResolvedKey] = []
        /// The versions made here, and the keys looked at.
        var recorded: [PendingChange] = []
        var offered: [SyncFile.Entry] = []
        var sent: [StoredKey] = []
        var problems: [PreferencesError] = []

        mutating func apply(_ version: SyncVersion, to key: ResolvedKey, current: StoredValue?) {
            if current != version.value {
                applied[version.device, default: []].append(
                    PendingChange(key: key, value: version.value, valueType: nil))
                received.append(key)
            }
            applied[version.device, default: []].append(
                PendingChange(key: SyncState.versionKey(for: key), value: SyncState.stored(version), valueType: nil))
        }
    }

    /// When each key's value was last committed, in milliseconds since 1970.
    ///
    /// As the watcher noticed it in this process, or else as the store's history says. A key
    /// neither knows (made while nothing synced, in a store that keeps no history or no longer has
    /// the change) is stamped as changed now.
    private func commitTimes(
        of keys: [ResolvedKey],
        noticed: [ResolvedKey: Int64],
        into problems: inout [PreferencesError]
    ) -> [ResolvedKey: Int64] {
        var times: [ResolvedKey: Int64] = [:]
        var unknown = Set(keys)
        for key in keys {
            if let time = noticed[key] {
                times[key] = time
                unknown.remove(key)
            }
        }
        guard !unknown.isEmpty, store.backend.historyRetention != .off else { return times }
        do {
            // Newest first: the first entry of a key made here is its last change. One sync applied
            // is no change made here.
            for entry in try store.history() {
                if case .sync = entry.cause { continue }
                let key = store.resolvedKey(for: entry.key)
                guard unknown.contains(key), let date = entry.date else { continue }
                times[key] = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
                unknown.remove(key)
                if unknown.isEmpty { break }
            }
        } catch let error as PreferencesError {
            problems.append(error)
        } catch {
            preconditionFailure("reading the history throws only PreferencesError, not \(error)")
        }
        return times
    }

    /// Removes what the store knows of the versions it synced, and of the keys it looked at, as if
    /// it had never synced.
    private func forgetSyncedVersions() throws(PreferencesError) {
        var removals = store.keysWithSyncedVersions().map {
            PendingChange(key: SyncState.versionKey(for: $0), value: nil, valueType: nil)
        }
        removals.append(PendingChange(key: SyncState.keysKey, value: nil, valueType: nil))
        try store.commit(removals)
    }

    /// Whether a managed setting forces `key`: a forced key is left alone while it is.
    private func isForced(_ key: ResolvedKey) -> Bool {
        store.state.withLock { $0.forcingOrigin(of: key) } != nil
    }
}
