extension PreferencesStore {
    /// The layer a key's value comes from: the one the subscript reads.
    ///
    /// ```swift
    /// if store.source(of: .apiEndpoint) == .launchArgument {
    ///     logger.notice("Using the endpoint given on the command line")
    /// }
    /// ```
    ///
    /// A value that does not read as the key's type is skipped, as a read skips it: a stored value
    /// that does not read gives ``PreferenceSource/default``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The topmost layer holding a value that reads as the key's type.
    public func source<Value>(of key: PreferenceKey<Value>) -> PreferenceSource {
        var value = key.defaultValue
        return (try? readStoredValue(for: key, into: &value)) ?? .default
    }

    /// Whether a managed setting forces the key's value, so that the app cannot change it.
    ///
    /// Settings screens grey out the controls of forced keys. Writing a forced key throws
    /// ``PreferencesError/Code/valueForced``, and through the subscript changes nothing and reports
    /// that error. A key stays forced when its managed setting does not read as the key's type:
    /// the setting is reported and skipped, and the key keeps its stored value or default.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: `true` if the managed layer holds a setting for the key.
    public func isForced<Value>(_ key: PreferenceKey<Value>) -> Bool {
        let resolvedKey = resolvedKey(for: key)
        return state.withLock { $0.overrides[resolvedKey]?.managedValue != nil }
    }

    /// The default a key reads as in this store.
    ///
    /// The key's ``PreferenceKey/defaultValue``, or, for a key declared with a computed default,
    /// the value this store computed the first time it needed one; it computes it once.
    ///
    /// - Parameter key: The key whose default to return.
    /// - Returns: The default.
    public func defaultValue<Value>(for key: PreferenceKey<Value>) -> Value {
        guard key.hasComputedDefault, let computeDefault = key.computeDefault else { return key.defaultValue }
        let resolvedKey = resolvedKey(for: key)
        if let computed = state.withLock({ $0.slot(for: resolvedKey).computedDefault }) as? Value {
            return computed
        }
        // Computed outside the lock, since it is the app's code; the first one kept wins.
        let computed = computeDefault()
        return state.withLock { state in
            let slot = state.slot(for: resolvedKey)
            if let kept = slot.computedDefault as? Value {
                return kept
            }
            slot.computedDefault = computed
            return computed
        }
    }

    /// Reads every override layer again and applies what changed, telling observers of each key
    /// whose layers changed.
    func readOverrides() {
        guard let overrideLayers else { return }
        overrideReading.withLock { _ in
            let (values, problems) = overrideLayers.read()
            let table = OverrideEntry.table(for: values, appNamespace: appNamespace)
            let (changes, paths, isFirstReading) = state.withLock {
                state -> ([EntryChange], ObservationPaths, Bool) in
                var entries: [ResolvedKey: OverrideEntry] = [:]
                var changed: [ResolvedKey] = []
                for (key, values) in table {
                    if let entry = state.overrides[key], entry.values == values {
                        entries[key] = entry
                    } else {
                        entries[key] = OverrideEntry(values: values)
                        changed.append(key)
                    }
                }
                changed += state.overrides.keys.filter { table[$0] == nil }
                state.overrides = entries
                var paths = ObservationPaths()
                let changes = changed.sorted().map { key in
                    let slot = state.slot(for: key)
                    slot.override = entries[key]
                    if let path = state.announcement(for: slot) {
                        paths.append(path)
                    }
                    return EntryChange(key: key, value: slot.stored)
                }
                let isFirstReading = !state.hasReadOverrides
                state.hasReadOverrides = true
                return (changes, paths, isFirstReading)
            }
            // The first reading, while the store opens, changes nothing anyone saw.
            if !isFirstReading {
                changeHub.enqueue(changes, origin: .managedSettings, writeIdentifier: nil, observationPaths: paths)
            }
            errorChannel.report(problems)
        }
        changeHub.deliverPending(announcingThrough: self)
    }

    /// Whether any override layer holds a value for the key.
    func isOverridden(_ key: ResolvedKey) -> Bool {
        state.withLock { !$0.overrides.isEmpty && $0.overrides[key] != nil }
    }

    /// Reports the override values a key could not read, once per value and type.
    func reportUnreadableOverrides(
        _ failures: [(OverrideValue, DecodeFailure)], key: ResolvedKey, expected: any Any.Type
    ) {
        let storedKey = storedKey(for: key)
        errorChannel.report(
            failures.map { value, failure in
                switch failure {
                case .ruleBroken(let broken):
                    PreferencesError(
                        .invalidValue(
                            key: storedKey, value: broken.value, rule: broken.rule, origin: .layer(value.origin)))
                case .invalid(let reason):
                    PreferencesError(
                        .unreadableOverride(
                            key: storedKey, origin: value.origin, text: value.text, expected: typeName(expected),
                            reason: reason.text))
                case .mismatch:
                    PreferencesError(
                        .unreadableOverride(
                            key: storedKey, origin: value.origin, text: value.text, expected: typeName(expected),
                            reason: ""))
                }
            }
        )
    }
}

extension StoreState {
    /// Where the managed setting that forces a key comes from; `nil` when none forces it.
    @inline(__always)
    func forcingOrigin(of key: ResolvedKey) -> String? {
        guard !overrides.isEmpty else { return nil }
        return overrides[key]?.managedValue?.origin
    }
}
