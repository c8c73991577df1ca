import Foundation

extension PreferencesStore {
    /// Runs each migration that the ledger does not record as applied, in order, once.
    ///
    /// Call it at startup, before the app reads what the migrations change:
    ///
    /// ```swift
    /// try store.runMigrations(
    ///     MigrateName(from: PreferenceKey<Date>("dateOfBrith", default: .distantPast), to: .dateOfBirth),
    ///     MigrateValue(from: PreferenceKey<Int>("rating", default: 0), to: .rating) { Double($0) }
    /// )
    /// ```
    ///
    /// Each migration runs in a transaction of its own, locked against every other writer of the
    /// store in any process. What it changes is committed together with its ledger entry, so a
    /// migration whose commit happened never runs again, even if the process is killed right after,
    /// and one whose commit did not happen did not run. A migration already in the ledger costs a
    /// lookup in memory and writes nothing.
    ///
    /// - Parameter migrations: The migrations, in the order to apply them.
    /// - Returns: The migrations this call applied; an empty array when all were applied before.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/migrationFailed`` naming the
    ///   first migration that failed, which changed nothing; the migrations after it did not run.
    ///   Or the error of a commit that could not be written.
    @discardableResult
    public func runMigrations(_ migrations: any PreferencesMigration...) throws -> [AppliedMigration] {
        try runMigrations(migrations)
    }

    /// Runs each migration that the ledger does not record as applied, in order, once.
    ///
    /// - Parameter migrations: The migrations, in the order to apply them.
    /// - Returns: The migrations this call applied; an empty array when all were applied before.
    /// - Throws: A ``PreferencesError`` with code ``PreferencesError/Code/migrationFailed`` naming the
    ///   first migration that failed; the migrations after it did not run.
    @discardableResult
    public func runMigrations(_ migrations: [any PreferencesMigration]) throws -> [AppliedMigration] {
        var seen: Set<String> = []
        var pending: [any PreferencesMigration] = []
        for migration in migrations {
            guard seen.insert(migration.id).inserted else {
                throw PreferencesError(
                    .migrationFailed(
                        migration: migration.id, key: nil, reason: "two migrations in this call have this id")
                )
            }
            // An id in the ledger was valid when it was recorded; checking it again on every launch
            // would cost more than the lookup that skips it.
            if isApplied(migration.id) {
                continue
            }
            if let rule = KeyValidation.violation(in: migration.id, isNamespace: false) {
                throw PreferencesError(
                    .migrationFailed(migration: migration.id, key: nil, reason: "its id is invalid: \(rule)"))
            }
            pending.append(migration)
        }
        var applied: [AppliedMigration] = []
        for migration in pending {
            if let entry = try apply(migration) {
                applied.append(entry)
            }
        }
        return applied
    }

    /// The ledger: every migration applied to this store, oldest first.
    public var appliedMigrations: [AppliedMigration] {
        catchUpForRead()
        let entries = state.withLock { state in
            state.everySlot().compactMap { key, slot -> AppliedMigration? in
                guard key.namespace == AppliedMigration.ledgerNamespace, let stored = slot.stored else { return nil }
                return AppliedMigration(id: key.name, stored: stored)
            }
        }
        return entries.sorted { ($0.appliedAt, $0.id) < ($1.appliedAt, $1.id) }
    }

    /// Whether the ledger in memory records the migration: the cheap check before any lock.
    private func isApplied(_ id: String) -> Bool {
        catchUpForRead()
        let key = AppliedMigration.ledgerKey(for: id)
        return state.withLock { $0.slot(for: key).stored != nil }
    }

    /// Applies one migration in a transaction, unless another store or process applied it meanwhile.
    private func apply(_ migration: any PreferencesMigration) throws -> AppliedMigration? {
        try withWriteLock {
            try withExclusiveAccess {
                var transaction = PreferencesTransaction(store: self, isMigration: true)
                if transaction.recordsMigration(migration.id) {
                    return nil
                }
                let result: MigrationResult
                do {
                    result = try migration.migrate(&transaction)
                } catch let error as PreferencesError where error.code == .migrationFailed {
                    throw error
                } catch let error as PreferencesError {
                    throw PreferencesError(
                        .migrationFailed(migration: migration.id, key: error.key, reason: error.description))
                } catch {
                    throw PreferencesError(.migrationFailed(migration: migration.id, key: nil, reason: "\(error)"))
                }
                let entry = AppliedMigration(id: migration.id, appliedAt: Date(), result: result)
                transaction.record(entry)
                do {
                    try commit(transaction.finish(), migration: migration.id)
                } catch let error as PreferencesError where error.code == .valueForced {
                    throw PreferencesError(
                        .migrationFailed(migration: migration.id, key: error.key, reason: error.description))
                }
                return entry
            }
        }
    }
}
