/// One round of sync, with the store's writers locked out everywhere.
///
/// For each key it looks at, three things are compared: the value the store holds, the version the
/// store last synced (``SyncState``), and the latest version any file in the folder holds.
///
/// 1. The value differs from the version synced: it changed here. Unless the store has never
///    finished a round and the folder has a version of the key (a device pulls before it pushes),
///    the change is stamped and offered.
/// 2. Otherwise, a version in the folder that wins over the one synced is applied, as a commit
///    whose origin is the device that made it, and becomes the version synced.
/// 3. Otherwise, a version synced that no file shows (a rename moved it, or an append was lost) is
///    offered again.
///
/// What is applied is committed before anything is offered: a round killed at any point leaves
/// the store and what it knows of the folder in step, and the next round does the rest. A change
/// offered and then not recorded, because the round was killed between the two, is offered again
/// with a later stamp: the same value, which changes nothing on the devices that had it.
extension PreferencesSync {
    func runRound(lookingAtEveryKey: Bool) throws -> SyncReport {
        try store.withWriteLock {
            try store.withExclusiveAccess {
                try session.withLock { (session: inout Session) throws -> SyncReport in
                    try round(&session, lookingAtEveryKey: lookingAtEveryKey)
                }
            }
        }
    }

    private func round(_ session: inout Session, lookingAtEveryKey: Bool) throws -> SyncReport {
        let arrivals = try session.transport.readChanges()
        session.clock.see(arrivals.latestStamp)
        var keysToLookAt = lookingAtEveryKey || arrivals.startsOver ? Set(keys) : session.changedKeys ?? Set(keys)
        session.changedKeys = []
        keysToLookAt.formUnion(arrivals.changedKeys.intersection(keys))
        if arrivals.startsOver {
            try forgetSyncedVersions()
        }

        let hasJoined = store.storedValue(at: SyncState.joinedKey) != nil
        var offered: [SyncFile.Entry] = []
        var recordedHere: [PendingChange] =
            hasJoined ? [] : [PendingChange(key: SyncState.joinedKey, value: .bool(true), valueType: nil)]
        var applied: [String: [PendingChange]] = [:]
        var received: [StoredKey] = []
        var sent: [StoredKey] = []
        // A forced key is looked at again when the force ends: the store tells its observers.
        for key in keysToLookAt.sorted() where !isForced(key) {
            let current = store.storedValue(at: key)
            let synced = SyncState.version(in: store.storedValue(at: SyncState.versionKey(for: key)))
            let there = session.transport.version(of: key)
            if let synced {
                session.clock.see(synced.stamp)
            }
            let changedHere = synced.map { current != $0.value } ?? (current != nil)
            if changedHere && (hasJoined || synced != nil || there == nil) {
                let version = SyncVersion(stamp: session.clock.tick(), device: deviceID, value: current)
                offered.append(SyncFile.Entry(key: key, version: version))
                recordedHere.append(
                    PendingChange(key: SyncState.versionKey(for: key), value: SyncState.stored(version), valueType: nil)
                )
                sent.append(store.storedKey(for: key))
            } else if let there, there.isNewer(than: synced) {
                if current != there.value {
                    applied[there.device, default: []].append(
                        PendingChange(key: key, value: there.value, valueType: nil))
                    received.append(store.storedKey(for: key))
                }
                applied[there.device, default: []].append(
                    PendingChange(key: SyncState.versionKey(for: key), value: SyncState.stored(there), valueType: nil))
            } else if let synced, !synced.isSameChange(as: there) {
                offered.append(SyncFile.Entry(key: key, version: synced))
            }
        }

        for device in applied.keys.sorted() {
            try store.commit(applied[device] ?? [], syncedFrom: device)
        }
        // Offered before they are recorded: a round killed between the two leaves them recorded
        // nowhere, and the next round offers the changes again, rather than recorded and offered
        // nowhere.
        let refused = try session.transport.offer(offered) { heldVersions(replacing: offered) }
        if !recordedHere.isEmpty {
            try store.commit(recordedHere, syncedFrom: deviceID)
        }
        return SyncReport(received: received, sent: sent, problems: arrivals.problems + refused)
    }

    /// Removes what the store knows of the versions it synced, as if it had never synced.
    private func forgetSyncedVersions() throws {
        var removals = keys.map { PendingChange(key: SyncState.versionKey(for: $0), value: nil, valueType: nil) }
        removals.append(PendingChange(key: SyncState.joinedKey, value: nil, valueType: nil))
        try store.commit(removals, syncedFrom: deviceID)
    }

    /// Whether a managed setting forces `key`: a forced key is left alone while it is.
    private func isForced(_ key: ResolvedKey) -> Bool {
        store.state.withLock { $0.forcingOrigin(of: key) } != nil
    }

    /// Every version the store holds of a synced key, with `offered`, not yet recorded, in place of
    /// what it replaces: what this device's file holds when written whole.
    private func heldVersions(replacing offered: [SyncFile.Entry]) -> [SyncFile.Entry] {
        var versions: [ResolvedKey: SyncVersion] = [:]
        for key in keys {
            if let version = SyncState.version(in: store.storedValue(at: SyncState.versionKey(for: key))) {
                versions[key] = version
            }
        }
        for entry in offered {
            versions[entry.key] = entry.version
        }
        return versions.sorted { $0.key < $1.key }.map { SyncFile.Entry(key: $0.key, version: $0.value) }
    }
}
