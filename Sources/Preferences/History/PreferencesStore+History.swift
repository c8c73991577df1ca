public import Foundation

extension PreferencesStore {
    /// The changes to a key that the store's history keeps, newest first.
    ///
    /// ```swift
    /// for change in try store.history(for: .theme) {
    ///     print(change.date ?? .distantPast, change.value, change.entry.program ?? "?")
    /// }
    /// ```
    ///
    /// A file store keeps the last changes of each key across compactions, within the limits it was
    /// opened with (``HistoryRetention``); a store kept in memory or in `UserDefaults` keeps none,
    /// and returns no changes. A value that does not read as the key's type is returned as
    /// ``HistoryValue/otherType(_:)``, not as an error. A history file that is damaged does not
    /// stop this: what verifies is returned, and the damage reported through ``errors``. A key
    /// declared ``PreferenceKey/withoutHistory()`` has none.
    ///
    /// - Parameter key: The key whose changes to list.
    /// - Returns: The key's changes, newest first, at most ``HistoryRetention/changesPerKey`` of them.
    /// - Throws: A ``PreferencesError`` if the store's files cannot be read.
    public func history<Value>(for key: PreferenceKey<Value>) throws -> [KeyHistoryEntry<Value>] {
        // Changes from before the key was declared without history, until a compaction erases them.
        guard key.keepsHistory else { return [] }
        let resolved = resolvedKey(for: key)
        let storedKey = storedKey(for: resolved)
        var entries: [KeyHistoryEntry<Value>] = []
        for (record, change) in try historyChanges().reversed() where change.key == resolved {
            guard entries.count < backend.historyRetention.changesPerKey else { break }
            let entry = HistoryEntry(key: storedKey, stored: change.value, record: record)
            let value: HistoryValue<Value>
            if let stored = change.value {
                do throws(DecodeFailure) {
                    value = .value(try key.codec.decode(stored))
                } catch {
                    value = .otherType(ValueText.text(stored))
                }
            } else {
                value = .removed
            }
            entries.append(KeyHistoryEntry(value: value, entry: entry))
        }
        return entries
    }

    /// The changes to every key that the store's history keeps, newest first, made at or after
    /// `date`.
    ///
    /// Changes to the library's own entries, such as the migration ledger, are left out, and so
    /// are those of keys registered with ``register(_:)-(PreferenceKeys...)`` that were declared
    /// ``PreferenceKey/withoutHistory()``. See ``history(for:)`` for what is kept.
    ///
    /// - Parameter date: The earliest change to list; `nil` lists every change kept. Changes with
    ///   no recorded time are listed only when `date` is `nil`.
    /// - Returns: The changes, newest first.
    /// - Throws: A ``PreferencesError`` if the store's files cannot be read.
    public func history(since date: Date? = nil) throws -> [HistoryEntry] {
        let limit = backend.historyRetention.changesPerKey
        // Registered keys declared without history: their changes from before they were declared so.
        let withoutHistory = state.withLock { state in
            Set(state.declarations.values.compactMap { $0.key.keepsNoHistory ? $0.key : nil })
        }
        var counts: [ResolvedKey: Int] = [:]
        var entries: [HistoryEntry] = []
        for (record, change) in try historyChanges().reversed()
        where !change.key.isReserved && !withoutHistory.contains(change.key) {
            let entry = HistoryEntry(key: storedKey(for: change.key), stored: change.value, record: record)
            if let date {
                guard let changed = entry.date, changed >= date else { continue }
            }
            let count = counts[change.key, default: 0]
            guard count < limit else { continue }
            counts[change.key] = count + 1
            entries.append(entry)
        }
        return entries
    }

    /// Writes a value from the key's history back, as a write of its own: the history then shows
    /// the restore as the newest change, its cause ``HistoryCause/restore``.
    ///
    /// ```swift
    /// if let before = try store.history(for: .theme).dropFirst().first {
    ///     try store.restore(.theme, to: before)
    /// }
    /// ```
    ///
    /// An entry that removed the value removes it again.
    ///
    /// - Parameters:
    ///   - key: The key to write.
    ///   - entry: A change from ``history(for:)`` of the same key.
    /// - Throws: A ``PreferencesError``: ``PreferencesError/Code/typeMismatch`` if the entry's value
    ///   is of another type than the key's (``HistoryValue/otherType(_:)``) or the entry is of
    ///   another key, ``PreferencesError/Code/valueForced`` if a managed setting forces the key,
    ///   ``PreferencesError/Code/invalidValue`` if the value breaks a rule the key has now, or the
    ///   backend's error if it cannot be written. Nothing changes when it throws.
    public func restore<Value>(_ key: PreferenceKey<Value>, to entry: KeyHistoryEntry<Value>) throws {
        let resolved = resolvedKey(for: key)
        let change: PendingChange
        switch entry.value {
        case .value(let value) where entry.entry.key == storedKey(for: resolved):
            change = try self.change(setting: value, for: key)
        case .removed where entry.entry.key == storedKey(for: resolved):
            change = PendingChange(key: resolved, value: nil, valueType: Value.self)
        default:
            throw PreferencesError(
                .typeMismatch(
                    key: storedKey(for: resolved),
                    stored: "\(entry.entry.valueDescription ?? "no value") (of key \(entry.entry.key))",
                    expected: typeName(Value.self)))
        }
        try commit([change], cause: .restore)
    }

    /// Removes the store's whole history; the values stay as they are.
    ///
    /// Removes the history file, and the records of the log, which a compaction folds into the
    /// snapshot at once.
    ///
    /// Every process's history goes, since they share the files; a store kept in memory or in
    /// `UserDefaults` has none to remove.
    ///
    /// - Throws: A ``PreferencesError`` if the store is read-only or its files cannot be written.
    public func clearHistory() throws {
        try withWriteLock {
            try withExclusiveAccess {
                errorChannel.report(try backend.clearHistory(flushesToDisk: durability == .synchronous))
            }
        }
    }

    /// Every change the backend's history keeps, in commit order, with its record; reports damage.
    private func historyChanges() throws(PreferencesError) -> [(HistoryRecord, EntryChange)] {
        let (records, problems) = try backend.history()
        errorChannel.report(problems)
        var changes: [(HistoryRecord, EntryChange)] = []
        for record in records {
            for change in record.record.changes where !change.key.keepsNoHistory {
                changes.append((record, change))
            }
        }
        return changes
    }
}
