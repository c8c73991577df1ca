import Foundation
import Preferences

/// The commands of `prefs`, each printing its result and returning how the tool ends.
struct Commands {
    var invocation: Invocation
    let output: Output

    /// Opens a store that must exist, refusing to touch it if it is damaged.
    mutating func existingStore() throws(ToolError) -> PreferencesStore {
        let url = try invocation.storeURL()
        let fileManager = FileManager()
        guard fileManager.fileExists(atPath: url.path) || fileManager.fileExists(atPath: url.path + ".log") else {
            throw ToolError(.storeFailed, "no store at '\(url.path)'.")
        }
        return try open(url)
    }

    /// Opens a store, creating it if need be, refusing to touch it if it is damaged.
    func open(_ url: URL) throws(ToolError) -> PreferencesStore {
        do {
            // The history as the app keeps it: the tool prunes none of it to limits of its own.
            return try PreferencesStore(fileURL: url, ifDamaged: .throwError, history: .unpruned)
        } catch let error as PreferencesError where error.code == .damagedFile {
            throw ToolError(
                .storeFailed,
                "\(error)\nNothing was changed. 'prefs verify' reports the damage; 'prefs repair' recovers what verifies."
            )
        } catch {
            throw ToolError(.storeFailed, "\(error)")
        }
    }

    func operand(_ index: Int, _ name: String) throws(ToolError) -> String {
        guard index < invocation.operands.count else {
            throw ToolError(
                .usage, "'prefs \(invocation.command)' needs \(name). Run 'prefs \(invocation.command) --help'.")
        }
        return invocation.operands[index]
    }

    mutating func read() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let defaults = Self.unsetDefaults(in: store)
        if let text = invocation.operands.first {
            let key = try invocation.key(text)
            if let value = store.storedValue(at: key) {
                output.entries([(key, value)], single: true)
            } else if let value = defaults.first(where: { $0.key == key })?.value {
                output.entries([(key, value)], single: true, defaults: [key])
            } else {
                throw ToolError(.notFound, "no value for '\(key)'.")
            }
        } else {
            let entries = (store.storedEntries() + defaults).sorted { $0.key.description < $1.key.description }
            output.entries(entries, single: false, defaults: Set(defaults.map(\.key)))
        }
        return .success
    }

    mutating func write() throws(ToolError) -> ExitCode {
        let url = try invocation.storeURL()
        let key = try invocation.key(try operand(0, "a KEY"))
        let text = try operand(1, "a VALUE")
        let store = try open(url)
        let existing = store.storedValue(at: key)
        let declaration = Self.declaration(of: key, in: store)
        let declaredTypes = declaration.map(Self.typeNames) ?? []
        let type = invocation.type ?? existing.map(ValueText.typeName) ?? declaredTypes.first ?? "string"
        let value: StoredValue
        do throws(ValueText.Failure) {
            value = try ValueText.parse(text, as: type, like: existing ?? declaration.flatMap(Self.itemTemplate))
        } catch {
            guard invocation.type == nil, existing != nil else { throw ToolError(.usage, error.message) }
            throw ToolError(
                .usage,
                "\(error.message) '\(key)' holds \(ValueText.described(type)); to store another type, give --type and --force."
            )
        }
        if let declaration, !declaration.kinds.contains(value.kind), !invocation.force {
            throw ToolError(
                .refused,
                "'\(key)' is declared as \(declaration.typeName), which reads \(declaredTypes.joined(separator: " or ")); "
                    + "writing \(ValueText.described(type)) would not read. Nothing was written; use --force to write it anyway."
            )
        }
        if let declaration, !invocation.force, let item = Self.unreadableItem(of: value, for: declaration) {
            throw ToolError(
                .refused,
                "'\(key)' is declared as \(declaration.typeName), whose items are not \(ValueText.described(item)); "
                    + "writing it would not read. Nothing was written; use --force to write it anyway."
            )
        }
        if let declaration, !invocation.force,
            let broken = declaration.rules.first(where: { $0.admits(value) == false })
        {
            throw ToolError(
                .refused,
                "'\(key)' must be \(Self.ruleText(broken)) (a rule of the app's); \(ValueText.text(value)) is not. "
                    + "Nothing was written; use --force to write it anyway."
            )
        }
        if let existing, ValueText.typeName(of: existing) != type, !invocation.force {
            throw ToolError(
                .refused,
                "'\(key)' holds \(ValueText.described(ValueText.typeName(of: existing))) (\(ValueText.text(existing))); "
                    + "writing \(ValueText.described(type)) would change its type. Nothing was written; use --force to replace it."
            )
        }
        try performing { try store.writeStoredValues([(key, value)]) }
        output.done(
            "\(key) = \(ValueText.text(value)) (\(type))",
            ["key": "\(key)", "type": type, "value": ValueText.json(value)])
        return .success
    }

    mutating func delete() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let key = try invocation.key(try operand(0, "a KEY"))
        guard store.storedValue(at: key) != nil else { throw ToolError(.notFound, "no value for '\(key)'.") }
        try performing { try store.writeStoredValues([(key, nil)]) }
        output.done("deleted \(key)", ["deleted": "\(key)"])
        return .success
    }

    mutating func keys() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let namespace = invocation.namespace.map(Invocation.namespace)
        let keys = store.storedEntries().map(\.key).filter { namespace == nil || $0.namespace == namespace }
        output.list(keys.map(\.description))
        return .success
    }

    mutating func ledger() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        output.ledger(store.appliedMigrations)
        return .success
    }

    mutating func compact() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        try performing { try store.compact() }
        output.done("compacted \(store.fileURL?.path ?? "")", ["compacted": store.fileURL?.path ?? ""])
        return .success
    }

    mutating func verify() throws(ToolError) -> ExitCode {
        let url = try invocation.storeURL()
        let report: StoreVerification
        do {
            report = try StoreVerification.verify(fileURL: url)
        } catch {
            throw ToolError(.storeFailed, "\(error)")
        }
        guard !report.files.isEmpty else { throw ToolError(.storeFailed, "no store at '\(url.path)'.") }
        output.verification(report)
        return report.isDamaged ? .notFound : .success
    }

    mutating func repair() throws(ToolError) -> ExitCode {
        let url = try invocation.storeURL()
        let before = try? StoreVerification.verify(fileURL: url)
        guard let before, !before.files.isEmpty else { throw ToolError(.storeFailed, "no store at '\(url.path)'.") }
        guard before.isDamaged else {
            output.done("nothing to repair: every record verifies", ["repaired": false])
            return .success
        }
        let store: PreferencesStore
        do {
            store = try PreferencesStore(fileURL: url, ifDamaged: .recover, history: .unpruned)
            // Opening repairs what it finds damaged; a value that verifies but does not decode
            // goes with a compaction, which keeps a copy of the snapshot first.
            try store.compact()
            _ = try store.repairHistory()
        } catch {
            throw ToolError(.storeFailed, "\(error)")
        }
        let after: StoreVerification
        do {
            after = try StoreVerification.verify(fileURL: url)
        } catch {
            throw ToolError(.storeFailed, "the repaired store could not be verified: \(error)")
        }
        guard !after.isDamaged else {
            throw ToolError(.storeFailed, "the store is still damaged after the repair: run 'prefs verify' to see how")
        }
        let copies =
            (try? FileManager().contentsOfDirectory(atPath: url.deletingLastPathComponent().path))?
            .filter { $0.hasPrefix(url.lastPathComponent) && $0.contains(".damaged-") } ?? []
        output.done(
            "repaired: \(store.storedEntries().count) entries kept; the damaged files were copied to "
                + copies.sorted().joined(separator: ", "),
            ["repaired": true, "entries": store.storedEntries().count, "copies": copies.sorted()]
        )
        return .success
    }
}

/// Runs a store operation, turning its error into one that ends `prefs` with status 3.
func performing(_ operation: () throws -> Void) throws(ToolError) {
    do {
        try operation()
    } catch {
        throw ToolError(.storeFailed, "\(error)")
    }
}
