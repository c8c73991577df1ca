extension PreferencesStore {
    /// Writes a value for a key; for an optional key, `nil` removes the entry.
    ///
    /// The value is on disk, as far as the store's backend promises, when this returns. A value
    /// equal to the one stored is no change for observers, and is not written again unless another
    /// process committed since the store last caught up.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    /// - Throws: A ``PreferencesError``: ``PreferencesError/Code/invalidValue`` if the value breaks one
    ///   of the key's rules, ``PreferencesError/Code/encodingFailed`` if it cannot be encoded,
    ///   ``PreferencesError/Code/valueForced`` if a managed setting forces the key, or the backend's
    ///   error if it cannot be written. Nothing changes when it throws.
    @_specialize(where Value == Int)
    @_specialize(where Value == Bool)
    @_specialize(where Value == Double)
    @_specialize(where Value == String)
    public func setValue<Value>(_ value: Value, for key: PreferenceKey<Value>) throws {
        try write(value, for: key)
    }

    /// What ``setValue(_:for:)`` does, its error typed: for the subscript's setter to report.
    func write<Value>(_ value: Value, for key: PreferenceKey<Value>) throws(PreferencesError) {
        // The resolved key made once, as the change's: the encoder needs it only for an error.
        try commit(EntryChange(key: resolvedKey(for: key), value: encode(value, for: key)), valueType: Value.self)
    }

    /// Removes the entry for a key, so that reading it gives the key's default.
    ///
    /// - Parameter key: The key whose entry to remove.
    /// - Throws: A ``PreferencesError`` if the removal cannot be written. Nothing changes when it throws.
    public func removeValue<Value>(for key: PreferenceKey<Value>) throws {
        try remove(key)
    }

    /// What ``removeValue(for:)`` does, its error typed: for the property wrappers' `reset()`.
    func remove<Value>(_ key: PreferenceKey<Value>) throws(PreferencesError) {
        try commit(EntryChange(key: resolvedKey(for: key), value: nil), valueType: Value.self)
    }

    /// Removes every entry in a namespace, in one commit.
    ///
    /// Leaves the stored values of keys a managed setting forces.
    ///
    /// - Parameter namespace: The namespace to empty.
    /// - Throws: A ``PreferencesError`` if the removal cannot be written. Nothing changes when it throws.
    public func removeAll(in namespace: PreferenceNamespace) throws {
        let resolved = namespace.resolved(appNamespace: appNamespace)
        try removeStoredValues { key, _ in key.namespace == resolved && !key.isReserved }
    }

    /// Reads, changes and writes one value atomically: no other write to the store comes between.
    ///
    /// ```swift
    /// try store.update(.launchCount) { $0 += 1 }
    /// ```
    ///
    /// The body starts from the key's value as the subscript reads it (an override layer's value
    /// if one holds the key), or the key's default when no layer holds one.
    ///
    /// - Parameters:
    ///   - key: The key to update.
    ///   - body: Changes the value in place; it may return a result.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` throws, or a ``PreferencesError`` if the stored value cannot be read as
    ///   the key's type (the body does not run), or the new value breaks one of the key's rules
    ///   (``PreferencesError/Code/invalidValue``) or cannot be written. Nothing changes when it throws.
    @discardableResult
    public func update<Value, Result>(_ key: PreferenceKey<Value>, _ body: (inout Value) throws -> Result) throws
        -> Result
    {
        try transaction { preferences in
            var value = try preferences.value(for: key) ?? defaultValue(for: key)
            let result = try body(&value)
            try preferences.setValue(value, for: key)
            return result
        }
    }

    /// Runs a body that reads and writes several keys, and commits its writes together: all or nothing.
    ///
    /// ```swift
    /// try store.transaction { preferences in
    ///     preferences[.theme] = .dark
    ///     preferences[.fontSize] = preferences[.fontSize] + 1
    /// }
    /// ```
    ///
    /// No other write to the store comes between the body's reads and the commit, from this process
    /// or another. If the body throws, or a value set in it cannot be encoded, nothing is written.
    /// The writes are one record in the store's log (one write to disk) and one change for observers.
    ///
    /// - Parameters:
    ///   - durability: How far the commit goes before this returns; the store's ``durability`` if `nil`.
    ///   - writeIdentifier: A tag that observers, in every process, receive with the change as
    ///     ``PreferencesChange/writeIdentifier``: a sync loop can tag its own writes and skip them.
    ///   - body: Reads and writes through the transaction it is given.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` throws, or a ``PreferencesError`` if a value breaks a rule of its key's or
    ///   cannot be encoded, or the batch cannot be written.
    @discardableResult
    public func transaction<Result>(
        durability: Durability? = nil,
        writeIdentifier: String? = nil,
        _ body: (inout PreferencesTransaction) throws -> Result
    ) throws -> Result {
        try withWriteLock {
            try withExclusiveAccess {
                var transaction = PreferencesTransaction(store: self)
                let result = try body(&transaction)
                try commit(transaction.finish(), durability: durability, writeIdentifier: writeIdentifier)
                return result
            }
        }
    }

    /// Encodes a value for a key into the change that writes it.
    func change<Value>(setting value: Value, for key: PreferenceKey<Value>) throws(PreferencesError) -> PendingChange {
        PendingChange(key: resolvedKey(for: key), value: try encode(value, for: key), valueType: Value.self)
    }

    /// Encodes a value for a key, as the key's codec does: `nil`, for an optional key, removes the
    /// entry.
    private func encode<Value>(_ value: Value, for key: PreferenceKey<Value>) throws(PreferencesError) -> StoredValue? {
        do throws(EncodeFailure) {
            return try key.codec.encodeValue(value)
        } catch {
            let storedKey = storedKey(for: resolvedKey(for: key))
            switch error {
            case .encoderFailed(let reason):
                throw PreferencesError(.encodingFailed(key: storedKey, valueType: typeName(Value.self), reason: reason))
            case .ruleBroken(let broken):
                throw PreferencesError(
                    .invalidValue(key: storedKey, value: broken.value, rule: broken.rule, origin: .write))
            }
        }
    }

    /// Writes a batch of changes, durably and then to memory, its record saying why (`cause`).
    ///
    /// Refuses the whole batch if a managed setting forces one of its keys. Catches up with commits
    /// made elsewhere, drops the changes that change nothing, has the
    /// backend make the rest durable, then applies them to memory. Nothing changes if the backend
    /// throws. A write of one key takes ``commit(_:valueType:)`` instead.
    ///
    /// Two drivers over the same steps (``StoreState/admit(_:_:as:isCurrent:)`` for each change,
    /// the backend's append, ``ChangeHub`` for observers), because a batch needs arrays and a
    /// record that a write of one key does without: through this function, a write of one key
    /// costs half as much again, and an in-memory write twice as much.
    func commit(
        _ changes: [PendingChange],
        durability: Durability? = nil,
        writeIdentifier: String? = nil,
        migration: String? = nil,
        syncedFrom device: String? = nil,
        cause: CommitCause = .transaction
    ) throws(PreferencesError) {
        var conflicts: [(ResolvedKey, any Any.Type, any Any.Type)] = []
        defer {
            for (key, first, second) in conflicts {
                reportConflict(for: key, first: first, second: second)
            }
        }
        do {
            try withWriteLock {
                try withExclusiveAccess {
                    // The changes that change something, built in one pass: the record's own array,
                    // and their slots, which applying the changes then need not look up again.
                    let (effective, slots) = try state.withLock {
                        (state: inout StoreState) throws(PreferencesError) -> ([EntryChange], [Slot]) in
                        var (effective, slots) = state.takeChangeBuffers()
                        effective.reserveCapacity(changes.count)
                        slots.reserveCapacity(changes.count)
                        var forced: (key: ResolvedKey, origin: String)?
                        // By index: each field is read where it lies, where `for change in changes`
                        // would copy every change whole, through its value witness.
                        for index in changes.indices {
                            // Memory is current: the exclusive access above caught up.
                            let admitted = state.admit(
                                changes[index].key, changes[index].value, as: changes[index].valueType, isCurrent: true)
                            if let first = admitted.conflictingType, let type = changes[index].valueType {
                                conflicts.append((changes[index].key, first, type))
                            }
                            if forced == nil, let origin = admitted.forcingOrigin {
                                forced = (changes[index].key, origin)
                            }
                            if admitted.isChange {
                                effective.append(EntryChange(key: changes[index].key, value: changes[index].value))
                                slots.append(admitted.slot)
                            }
                        }
                        if let forced {
                            throw PreferencesError(.valueForced(key: storedKey(for: forced.key), origin: forced.origin))
                        }
                        return (effective, slots)
                    }
                    guard !effective.isEmpty else { return }
                    let record = Record(
                        changes: effective, writeIdentifier: writeIdentifier, subject: migration ?? device,
                        cause: migration != nil ? .migration : device != nil ? .sync : cause)
                    var paths = ObservationPaths()
                    try backend.commit(record, flushesToDisk: (durability ?? self.durability) == .synchronous) {
                        update, isCommitted in
                        guard isCommitted else { return absorb(update) }
                        takeIn(update)
                        paths = state.withLock { state in
                            state.seenCommitCount = update.commitCount
                            defer { state.returnChangeBuffers(record.changes, slots) }
                            return state.apply(record.changes, slots: slots)
                        }
                    }
                    changeHub.enqueue(
                        record.changes,
                        origin: ChangeOrigin(record) ?? .thisStore,
                        writeIdentifier: writeIdentifier,
                        observationPaths: paths
                    )
                }
            }
        } catch let error as PreferencesError {
            throw error
        } catch {
            preconditionFailure("a commit throws only PreferencesError, not \(error)")
        }
    }

    /// Writes one change, durably and then to memory, in the store's durability.
    ///
    /// What ``commit(_:durability:writeIdentifier:migration:)`` does for a batch of one, with no
    /// array, record or list of key paths made for it, and the backend called once
    /// (``PreferencesBackend/commitExclusively(_:flushesToDisk:_:)``): the change is built once,
    /// and the backend, memory and the change hub are handed it as it lies. Inside a transaction,
    /// it joins the transaction's exclusive access as a batch of one.
    ///
    /// The stored value is compared before the backend catches up: when memory is behind a commit
    /// made elsewhere, the change is written even if it turns out to change nothing, and then, like
    /// any write of the value stored, is no change for observers.
    ///
    /// - Parameters:
    ///   - change: The key and its new value; `nil` removes the entry.
    ///   - valueType: The type the key was written as, checked against the one it was first used
    ///     with; `nil` for a change made without a typed key.
    /// - Throws: ``PreferencesError/Code/valueForced`` if a managed setting forces the key, or the
    ///   backend's error. Nothing changes when it throws.
    func commit(_ change: EntryChange, valueType: (any Any.Type)?) throws(PreferencesError) {
        var conflict: (any Any.Type)?
        // The key's path, announced by this thread once it lets go of the write lock, for a write
        // nobody observes: it need not pass the change hub.
        var announcement: KeyPath<PreferencesStore, Int>?
        defer {
            #if canImport(Observation)
                if let announcement {
                    announce(announcement)
                }
            #endif
            if let conflict, let valueType {
                reportConflict(for: change.key, first: conflict, second: valueType)
            }
        }
        try withWriteLock { () throws(PreferencesError) in
            guard writeLock.isHeldOnce else {
                return try commit([PendingChange(key: change.key, value: change.value, valueType: valueType)])
            }
            let commitCount = backend.commitCount
            let found = try state.withLock { (state: inout StoreState) throws(PreferencesError) -> Slot? in
                let admitted = state.admit(
                    change.key, change.value, as: valueType, isCurrent: state.seenCommitCount == commitCount)
                conflict = admitted.conflictingType
                if let origin = admitted.forcingOrigin {
                    throw PreferencesError(.valueForced(key: storedKey(for: change.key), origin: origin))
                }
                return admitted.isChange ? admitted.slot : nil
            }
            guard let found else { return }
            var isChange = true
            var path: KeyPath<PreferencesStore, Int>?
            // Copied here, where it is loaded: copied inside the closure, from the captured change's
            // address, it would go through the type's runtime value witnesses on every write.
            let value = change.value
            try backend.commitExclusively(change, flushesToDisk: durability == .synchronous) { update, isCommitted in
                guard isCommitted else { return absorb(update) }
                takeIn(update)
                state.withLock { state in
                    state.seenCommitCount = update.commitCount
                    // What the backend caught up with may have stored this value already: written
                    // again, it is no change to tell anyone of.
                    if !update.records.isEmpty && found.stores(value) {
                        isChange = false
                        return
                    }
                    found.replace(with: value)
                    path = state.announcement(for: found)
                }
            }
            guard isChange else { return }
            if changeHub.hasObservers {
                changeHub.enqueue(change, origin: .thisStore, observationPath: path)
            } else {
                announcement = path
            }
        }
    }

    /// Takes in what the backend reported with a commit, before the commit's own changes reach
    /// memory: applies the records it found only now (see ``PreferencesBackend/commit(_:flushesToDisk:_:)``),
    /// and reports its problems.
    ///
    /// Reported at once, under the locks, as a failed commit's are (``absorb(_:)``): reporting
    /// only yields to the error streams, and runs no code of the app's. Gathered into an array to
    /// report after the commit, they would cost every write the release of that empty array.
    @inline(__always)
    private func takeIn(_ update: BackendUpdate) {
        if !update.records.isEmpty {
            absorb(BackendUpdate(records: update.records, commitCount: update.commitCount))
        }
        if !update.problems.isEmpty {
            errorChannel.report(update.problems)
        }
    }

    /// Runs `body` with writers everywhere else locked out, after applying what they committed.
    ///
    /// Call it holding the write lock.
    func withExclusiveAccess<Result>(_ body: () throws -> Result) throws -> Result {
        try backend.withExclusiveAccess({ absorb($0) }, body)
    }

    /// Applies what the backend caught up with to memory, and reports its problems.
    func absorb(_ update: BackendUpdate) {
        // The common case, nobody else committed: only the count to note, with no records to apply
        // and no problems to report.
        guard !update.records.isEmpty || !update.problems.isEmpty else {
            state.withLock { $0.seenCommitCount = update.commitCount }
            return
        }
        let paths = state.withLock { state in
            state.seenCommitCount = update.commitCount
            return update.records.map { state.apply($0.changes) }
        }
        for (record, paths) in zip(update.records, paths) {
            changeHub.enqueue(
                record.changes,
                origin: ChangeOrigin(record) ?? .elsewhere,
                writeIdentifier: record.writeIdentifier,
                observationPaths: paths
            )
        }
        errorChannel.report(update.problems)
    }
}

/// A change on its way to a commit, with the value type it was written as.
struct PendingChange {
    var key: ResolvedKey
    var value: StoredValue?
    /// `nil` for changes made without a typed key, such as removing a namespace.
    var valueType: (any Any.Type)?
}
