extension PreferencesStore {
    /// Tells the store which keys the app declares, and stores their schema with the data.
    ///
    /// ```swift
    /// store.register(.prefersLargeText, .theme, .launchCount)
    /// ```
    ///
    /// Declared keys are what ``resetAll(removingUndeclaredKeys:)`` puts back to their defaults and
    /// what ``import(_:)`` checks each entry's type against. Their schema (namespace, name, type,
    /// the kinds of value it reads, default, and the summary given with
    /// ``PreferenceKey/described(_:)``) is stored in a namespace reserved for the library, so that
    /// `prefs read` shows unset keys with their defaults, `prefs write` refuses a value of another
    /// type, and `prefs schema` prints it. Registering again adds keys; an unchanged schema is not
    /// written again. A schema that cannot be written is reported through ``errors``: the keys are
    /// declared all the same.
    ///
    /// - Parameter keys: The keys the app declares.
    public func register(_ keys: PreferenceKeys...) {
        register(keys)
    }

    /// Tells the store which keys the app declares, and stores their schema with the data.
    ///
    /// - Parameter keys: The keys the app declares.
    public func register(_ keys: [PreferenceKeys]) {
        let declarations = keys.map { $0.declaration(appNamespace: appNamespace) }
        state.withLock { state in
            for declaration in declarations {
                state.declarations[declaration.key] = declaration
            }
        }
        do {
            try commit(declarations.map { PendingChange(key: $0.schemaKey, value: $0.schemaValue, valueType: nil) })
        } catch {
            errorChannel.report(error)
        }
    }

    /// Puts every declared key back to its default, in one commit.
    ///
    /// Removes the stored value of each key declared with ``register(_:)-(PreferenceKeys...)``,
    /// except those a managed setting forces, which an app cannot change. Values stored under keys
    /// the app does not declare (a key an older version used, say) stay, unless you ask.
    ///
    /// - Parameter removingUndeclaredKeys: Whether to remove, too, every stored value outside the
    ///   library's reserved namespaces whose key is not declared, and the schema of such keys.
    /// - Throws: A ``PreferencesError`` if the removals cannot be written. Nothing changes when it throws.
    public func resetAll(removingUndeclaredKeys: Bool = false) throws {
        try removeStoredValues { key, state in
            if key.isSchemaEntry {
                return removingUndeclaredKeys && key.declaredKey.map { state.declarations[$0] == nil } ?? true
            }
            return state.declarations[key] != nil || (removingUndeclaredKeys && !key.isReserved)
        }
    }

    /// Removes a key's stored value, so that it reads as its default: the same as ``removeValue(for:)``.
    ///
    /// - Parameter key: The key to reset.
    /// - Throws: A ``PreferencesError`` if the removal cannot be written, or
    ///   ``PreferencesError/Code/valueForced`` if a managed setting forces the key.
    public func reset<Value>(_ key: PreferenceKey<Value>) throws {
        try removeValue(for: key)
    }

    /// Removes every stored value in every namespace, in one commit.
    ///
    /// Leaves the library's reserved namespaces (the migration ledger and the schema) and the
    /// stored values of keys a managed setting forces.
    ///
    /// - Throws: A ``PreferencesError`` if the removals cannot be written. Nothing changes when it throws.
    public func removeAll() throws {
        try removeStoredValues { key, _ in !key.isReserved }
    }

    /// Removes, in one commit, the stored values whose key `removes` picks, leaving forced keys.
    func removeStoredValues(where removes: (ResolvedKey, StoreState) -> Bool) throws(PreferencesError) {
        do {
            try withWriteLock {
                try withExclusiveAccess {
                    // As declared, where they are: a key declared without history erases its history.
                    let keys = state.withLock { state in
                        state.everySlot().compactMap { key, slot in
                            slot.stored != nil && state.overrides[key]?.managedValue == nil && removes(key, state)
                                ? state.declarations[key]?.key ?? key : nil
                        }
                    }
                    try commit(keys.sorted().map { PendingChange(key: $0, value: nil, valueType: nil) }, cause: .reset)
                }
            }
        } catch let error as PreferencesError {
            throw error
        } catch {
            preconditionFailure("a commit throws only PreferencesError, not \(error)")
        }
    }
}

extension ResolvedKey {
    /// The key whose schema entry this is; `nil` if the entry's name is not `namespace:name`.
    fileprivate var declaredKey: ResolvedKey? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        return ResolvedKey(namespace: String(name[..<colon]), name: String(name[name.index(after: colon)...]))
    }
}
