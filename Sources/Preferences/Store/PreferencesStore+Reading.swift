extension PreferencesStore {
    /// The key's value, or its default; setting it writes the value.
    ///
    /// The value is the topmost that reads as the key's type: a launch argument, an environment
    /// variable or a managed setting, if the store reads those layers (see ``OverrideLayer``), then
    /// the stored value. Writing stores the value, but an override still wins when read; writing a
    /// key that a managed setting forces changes nothing and reports
    /// ``PreferencesError/Code/valueForced``.
    ///
    /// When what is stored cannot be read as the key's type, the getter returns the default,
    /// leaves the stored data untouched, and reports the problem through ``errors`` once for that
    /// stored value. When a value cannot be written, the setter keeps the old value and reports.
    /// Setting `nil` for an optional key removes its entry.
    ///
    /// - Parameter key: The key to read or write.
    public subscript<Value>(key: PreferenceKey<Value>) -> Value {
        // Specialised inside the library for the types most preferences have: the app's module
        // calls the getter unspecialised, and unspecialised generic code reads them more slowly. A
        // read of any other type pays only for the check of its type.
        @_specialize(where Value == Int)
        @_specialize(where Value == Bool)
        @_specialize(where Value == Double)
        @_specialize(where Value == String)
        get { currentValue(for: key, tracksAccess: true) }
        set {
            do {
                try write(newValue, for: key)
            } catch {
                errorChannel.report(error)
            }
        }
    }

    /// What the subscript reads: the topmost value, or the default, with a failure reported.
    @inline(__always)
    func currentValue<Value>(for key: PreferenceKey<Value>, tracksAccess: Bool) -> Value {
        var value = key.defaultValue
        do {
            if try readStoredValue(for: key, into: &value, tracksAccess: tracksAccess) == nil, key.hasComputedDefault {
                return defaultValue(for: key)
            }
        } catch {
            reportOnce(error, for: resolvedKey(for: key))
            return defaultValue(for: key)
        }
        return value
    }

    /// The key's value from the topmost layer that holds one, or `nil` if none does.
    ///
    /// Unlike the subscript, this tells absence from the default, and throws rather than returning
    /// the default when the stored value cannot be read. An override layer's value comes first, as
    /// for the subscript.
    ///
    /// - Parameter key: The key to read.
    /// - Returns: The value, or `nil` if no override and nothing stored holds one.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/typeMismatch``,
    ///   ``PreferencesError/Code/decodingFailed`` or ``PreferencesError/Code/invalidValue`` (a stored
    ///   value that breaks one of the key's rules), naming the key, what is stored and what was expected.
    public func value<Value>(for key: PreferenceKey<Value>) throws -> Value? {
        try storedValue(for: key)
    }

    /// The optional key's value from the topmost layer that holds one, or `nil` if none does.
    ///
    /// - Parameter key: The key to read.
    /// - Returns: The value, or `nil` if no override and nothing stored holds one.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/typeMismatch`` or
    ///   ``PreferencesError/Code/decodingFailed``, naming the key, what is stored and what was expected.
    public func value<Wrapped>(for key: PreferenceKey<Wrapped?>) throws -> Wrapped? {
        try storedValue(for: key) ?? nil
    }

    /// Whether anything is stored for a key, whatever its type.
    ///
    /// - Parameter key: The key to look for.
    /// - Returns: `true` if the store holds an entry under the key's namespace and name.
    public func contains<Value>(_ key: PreferenceKey<Value>) -> Bool {
        catchUpForRead()
        let resolvedKey = resolvedKey(for: key)
        return state.withLock { $0.slot(for: resolvedKey).stored != nil }
    }

    /// The keys of every stored entry, or of those in one namespace, sorted by namespace and name.
    ///
    /// - Parameter namespace: The namespace to list, or `nil` for all of them.
    /// - Returns: The stored keys; entries in this store's app namespace have the namespace
    ///   ``PreferenceNamespace/app``.
    public func storedKeys(in namespace: PreferenceNamespace? = nil) -> [StoredKey] {
        catchUpForRead()
        let resolved = namespace?.resolved(appNamespace: appNamespace)
        let keys = state.withLock { state in
            state.everySlot().compactMap { key, slot in
                slot.stored != nil && !key.isReserved && (resolved == nil || key.namespace == resolved) ? key : nil
            }
        }
        return keys.sorted().map(storedKey(for:))
    }

    /// Reads a key: the stored value decoded as the key's type, `nil` when there is none.
    ///
    /// Takes the lock once to look the key up, and, for a type whose decoding costs something and
    /// the first time only, once more to cache what it decoded. Decoding runs outside the lock,
    /// because a type's `init(from:)` or `init(rawValue:)` is code of the app's. When the backend's
    /// commit count shows a commit made elsewhere, catches up with it first.
    func storedValue<Value>(
        for key: PreferenceKey<Value>,
        registeringType: Bool = true,
        readsOverrides: Bool = true
    ) throws(PreferencesError) -> Value? {
        var value = key.defaultValue
        let source = try readStoredValue(
            for: key, into: &value, registeringType: registeringType, readsOverrides: readsOverrides)
        return source == nil ? nil : value
    }

    /// The value stored at a key, in its stored form.
    func storedValue(at key: ResolvedKey) -> StoredValue? {
        catchUpForRead()
        return state.withLock { $0.slot(for: key).stored }
    }

    /// Reads a key into `value`, and says which layer it came from; `value` is untouched, and the
    /// result `nil`, if no layer holds a value for it.
    ///
    /// The read path itself: it avoids `Optional<Value>`, whose metadata unspecialised generic code
    /// (this runs in the app's module, for the app's types) would look up on every read.
    @discardableResult
    func readStoredValue<Value>(
        for key: PreferenceKey<Value>,
        into value: inout Value,
        registeringType: Bool = true,
        tracksAccess: Bool = false,
        readsOverrides: Bool = true
    ) throws(PreferencesError) -> PreferenceSource? {
        // The key's own resolved key is passed borrowed: built or copied here, it would cost a read
        // two string retains and releases.
        guard key.isInAppNamespace, !hasDefaultAppNamespace else {
            return try readStoredValue(
                for: key, at: key.defaultResolvedKey, serial: key.serial, into: &value,
                registeringType: registeringType, tracksAccess: tracksAccess, readsOverrides: readsOverrides)
        }
        let resolvedKey = resolvedKey(for: key)
        return try readStoredValue(
            for: key, at: resolvedKey, serial: 0, into: &value, registeringType: registeringType,
            tracksAccess: tracksAccess, readsOverrides: readsOverrides)
    }

    /// The read, given the key's resolved key and its serial (see ``KeySerials``; zero for a storage
    /// key of another app namespace): a scalar of the library's is decoded under the lock, any other
    /// value copied out of its slot and decoded outside it.
    private func readStoredValue<Value>(
        for key: PreferenceKey<Value>,
        at resolvedKey: ResolvedKey,
        serial: UInt32,
        into value: inout Value,
        registeringType: Bool,
        tracksAccess: Bool,
        readsOverrides: Bool
    ) throws(PreferencesError) -> PreferenceSource? {
        let codec = key.codec
        let type = registeringType ? Value.self : nil
        guard !codec.decodesInPlace else {
            // Decoded from the slot itself: copying the stored value out first would make every read
            // copy it and destroy the copy.
            var isOverridden = false
            var read = StoredRead.absent
            let (_, conflictingType) = withCurrentSlot(
                for: resolvedKey, serial: serial, as: type, tracksAccess: tracksAccess
            ) { slot in
                isOverridden = slot.override != nil
                guard let stored = slot.stored else { return }
                do throws(DecodeFailure) {
                    value = try codec.decode(stored)
                    read = .decoded
                } catch {
                    read = .failed(error, stored)
                }
            }
            if let conflictingType {
                reportConflict(for: resolvedKey, first: conflictingType, second: Value.self)
            }
            if readsOverrides, isOverridden, let source = readOverride(for: key, at: resolvedKey, into: &value) {
                return source
            }
            switch read {
            case .absent:
                return nil
            case .decoded:
                return .stored
            case .failed(let failure, let stored):
                throw readFailure(failure, key: storedKey(for: resolvedKey), stored: stored, expected: Value.self)
            }
        }
        let (slot, conflictingType) = withCurrentSlot(
            for: resolvedKey, serial: serial, as: type, tracksAccess: tracksAccess
        ) {
            SlotSnapshot($0)
        }
        if let conflictingType {
            reportConflict(for: resolvedKey, first: conflictingType, second: Value.self)
        }
        if readsOverrides, slot.isOverridden, let source = readOverride(for: key, at: resolvedKey, into: &value) {
            return source
        }
        guard slot.hasStored else { return nil }
        // Decoded outside the lock: a type's `init(from:)` or `init(rawValue:)` is code of the app's.
        if let decoded = slot.decoded, decoded.read(into: &value, decodedBy: codec) {
            return .stored
        }
        do throws(DecodeFailure) {
            value = try codec.decode(slot.stored)
        } catch {
            throw readFailure(error, key: storedKey(for: resolvedKey), stored: slot.stored, expected: Value.self)
        }
        cache(Decoded(value, decodedBy: codec), for: resolvedKey, generation: slot.generation)
        return .stored
    }

    /// What reading a key's stored value came to.
    private enum StoredRead {
        case absent
        case decoded
        case failed(DecodeFailure, StoredValue)
    }

    /// Reads the topmost override layer's value that reads as the key's type, if any does.
    ///
    /// Apart from the read path, and never inlined into it: its closures would cost every read,
    /// overridden or not, the copies they capture.
    @inline(never)
    private func readOverride<Value>(
        for key: PreferenceKey<Value>,
        at resolvedKey: ResolvedKey,
        into value: inout Value
    ) -> PreferenceSource? {
        guard let override = state.withLock({ $0.existingSlot(for: resolvedKey)?.override }),
            let found = override.read(
                with: key.codec,
                report: { reportUnreadableOverrides($0, key: resolvedKey, expected: Value.self) })
        else { return nil }
        value = found.value
        return found.source
    }

    /// What a read that decodes outside the lock needs of a key's slot, copied out under it.
    private struct SlotSnapshot {
        /// The stored value if `hasStored`, and a placeholder if not.
        ///
        /// Not an optional: copies of a `StoredValue?` would go through the generic `Optional`'s
        /// value witnesses on every read.
        var stored = StoredValue.bool(false)
        var hasStored = false
        var decoded: DecodedValue?
        var generation: UInt64 = 0
        /// Whether an override layer holds the key: a flag, so that the common read copies no reference.
        var isOverridden = false

        init(_ slot: Slot) {
            if let stored = slot.stored {
                self.stored = stored
                hasStored = true
            }
            decoded = slot.decoded
            generation = slot.generation
            isOverridden = slot.override != nil
        }
    }

    /// Runs `body` on a key's slot, under the lock, as of the latest commit anywhere, catching up
    /// first if memory is behind; `body` must run no code of the app's.
    ///
    /// Always inlined, so that it is specialised for each caller's result, whatever the key's
    /// value type: through a closure that filled a variable of the caller's, a read that copies
    /// the slot out would cost more.
    ///
    /// - Returns: What `body` returned, and the type the key was first used with when `type` is
    ///   another, reported once.
    @inline(__always)
    private func withCurrentSlot<Result>(
        for key: ResolvedKey,
        serial: UInt32,
        as type: (any Any.Type)?,
        tracksAccess: Bool,
        _ body: (Slot) -> Result
    ) -> (Result, conflictingType: (any Any.Type)?) {
        if let current = withSlotIfCurrent(for: key, serial: serial, as: type, tracksAccess: tracksAccess, body) {
            return current
        }
        catchUpForRead()
        return withSlotIfCurrent(
            for: key, serial: serial, as: type, tracksAccess: tracksAccess, evenIfBehind: true, body)!
    }

    /// Runs `body` on a key's slot, under the lock; `nil`, without running it, if memory is
    /// behind the backend's commits.
    @inline(__always)
    private func withSlotIfCurrent<Result>(
        for key: ResolvedKey,
        serial: UInt32,
        as type: (any Any.Type)?,
        tracksAccess: Bool,
        evenIfBehind: Bool = false,
        _ body: (Slot) -> Result
    ) -> (Result, conflictingType: (any Any.Type)?)? {
        let commitCount = backend.commitCount
        return state.withLock { state in
            guard evenIfBehind || state.seenCommitCount == commitCount else { return nil }
            // Tracked under the lock, before the value is read: a write that commits after this read
            // then finds the key tracked, and announces its change.
            #if canImport(Observation)
                let tracking = tracksAccess
            #else
                let tracking = false
            #endif
            return state.withSlot(for: key, serial: serial, tracking: tracking) { slot in
                #if canImport(Observation)
                    // Inside the lock: `access` runs no code of the app's, and takes no lock unless
                    // tracking.
                    if tracksAccess {
                        trackAccess(slot.observationPath)
                    }
                #endif
                var conflictingType: (any Any.Type)?
                if let type {
                    conflictingType = slot.register(type)
                }
                return (body(slot), conflictingType)
            }
        }
    }

    /// Keeps a decoded value for later reads, if the stored value has not changed since it was read.
    private func cache(_ decoded: DecodedValue, for key: ResolvedKey, generation: UInt64) {
        state.withLock { state in
            if let slot = state.existingSlot(for: key), slot.generation == generation {
                slot.decoded = decoded
            }
        }
    }

    /// The error for a stored value that does not decode as a key's type.
    func readFailure(
        _ failure: DecodeFailure,
        key: StoredKey,
        stored: StoredValue,
        expected: any Any.Type
    ) -> PreferencesError {
        switch failure {
        case .mismatch:
            .typeMismatch(key: key, stored: stored, expected: expected)
        case .invalid(let reason):
            PreferencesError(.decodingFailed(key: key, expected: typeName(expected), reason: reason.text))
        case .ruleBroken(let broken):
            PreferencesError(.invalidValue(key: key, value: broken.value, rule: broken.rule, origin: .stored))
        }
    }

    /// Reports a read failure the first time it happens for the value now stored, not on every read.
    private func reportOnce(_ error: PreferencesError, for key: ResolvedKey) {
        let isNew = state.withLock { state in
            guard let slot = state.existingSlot(for: key), slot.reportedFailureGeneration != slot.generation else {
                return false
            }
            slot.reportedFailureGeneration = slot.generation
            return true
        }
        if isNew {
            errorChannel.report(error)
        }
    }

    func reportConflict(for key: ResolvedKey, first: any Any.Type, second: any Any.Type) {
        errorChannel.report(
            PreferencesError(
                .conflictingValueTypes(key: storedKey(for: key), first: typeName(first), second: typeName(second))
            )
        )
    }
}
