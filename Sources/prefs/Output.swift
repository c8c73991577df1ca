import Foundation
import Preferences

/// Prints results: as readable lines, or as JSON with `--json`.
///
/// Every line is written at once, so that `watch` shows changes as they come even through a pipe.
struct Output {
    let json: Bool

    func raw(_ text: String) {
        FileHandle.standardOutput.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
    }

    func line(_ text: String) {
        if !json {
            raw(text)
        }
    }

    /// Prints entries; those in `defaults` are declared keys with no stored value, shown with their default.
    func entries(_ entries: [(key: StoredKey, value: StoredValue)], single: Bool, defaults: Set<StoredKey> = []) {
        if json {
            let objects = entries.map { entry in
                var object = Self.entryObject(entry)
                if defaults.contains(entry.key) {
                    object["default"] = true
                }
                return object
            }
            raw(Self.jsonText(single ? objects.first ?? [:] : objects))
        } else if single, let entry = entries.first {
            raw(ValueText.text(entry.value))
        } else {
            let width = entries.map { $0.key.description.count }.max() ?? 0
            let typeWidth = entries.map { ValueText.typeName(of: $0.value).count }.max() ?? 0
            for (key, value) in entries {
                let type = ValueText.typeName(of: value).padding(toLength: typeWidth + 2, withPad: " ", startingAt: 0)
                raw(
                    key.description.padding(toLength: width + 2, withPad: " ", startingAt: 0) + type
                        + ValueText.text(value) + (defaults.contains(key) ? "  (default, not stored)" : ""))
            }
        }
    }

    func list(_ items: [String]) {
        raw(json ? Self.jsonText(items) : items.joined(separator: "\n"))
    }

    func ledger(_ migrations: [AppliedMigration]) {
        if json {
            raw(
                Self.jsonText(
                    migrations.map {
                        [
                            "id": $0.id, "appliedAt": ValueText.dateFormatter.string(from: $0.appliedAt),
                            "result": $0.result.description,
                        ]
                    }
                )
            )
        } else if migrations.isEmpty {
            raw("No migrations applied.")
        } else {
            for migration in migrations {
                raw(
                    "\(ValueText.dateFormatter.string(from: migration.appliedAt))  \(migration.id)  (\(migration.result))"
                )
            }
        }
    }

    func verification(_ report: StoreVerification) {
        if json {
            raw(
                Self.jsonText(
                    [
                        "whole": !report.isDamaged,
                        "readableEntries": report.readableEntries,
                        "ledgerEntries": report.ledgerEntries,
                        "tornTailBytes": report.tornTailBytes,
                        "files": report.files.map { ["path": $0.path, "bytes": $0.bytes] },
                        "damage": report.damage.map { ["path": $0.path, "description": $0.description] },
                    ] as [String: Any]
                )
            )
            return
        }
        for file in report.files {
            raw("\(file.path): \(file.bytes) bytes")
        }
        raw("\(report.readableEntries) entries and \(report.ledgerEntries) ledger entries verify.")
        if report.tornTailBytes > 0 {
            raw(
                "The log ends in a torn record of \(report.tornTailBytes) bytes, left by a writer stopped mid-write; "
                    + "its call never returned, and the next write cuts it off. That is not damage."
            )
        }
        if report.isDamaged {
            for damage in report.damage {
                raw("DAMAGED \(damage.path): \(damage.description)")
            }
            raw("Run 'prefs repair' to keep a copy of the damaged files and write a store of everything that verifies.")
        } else {
            raw("Every checksum and record verifies.")
        }
    }

    func change(key: StoredKey, value: StoredValue?, origin: ChangeOrigin, writeIdentifier: String?) {
        let from: String =
            switch origin {
            case .thisStore: "this store"
            case .elsewhere: "another process"
            case .migration(let id): "migration '\(id)'"
            case .managedSettings: "managed settings"
            case .sync(let device): "device \(device)"
            }
        if json {
            var object: [String: Any] = ["key": key.description, "origin": from]
            object["value"] = value.map(ValueText.json)
            object["writeIdentifier"] = writeIdentifier
            raw(Self.jsonText(object, pretty: false))
        } else {
            let text = value.map { ValueText.text($0) } ?? "(removed)"
            raw("\(key) = \(text)  (from \(from)\(writeIdentifier.map { ", \($0)" } ?? ""))")
        }
    }

    /// The history's changes, newest first: one line each, the way `git log --oneline` reads.
    func history(_ lines: [(number: Int, entry: HistoryEntry, before: String?, isKnown: Bool)]) {
        let format = ISO8601DateFormatter()
        format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if json {
            raw(
                Self.jsonText(
                    lines.map { line -> [String: Any] in
                        var object: [String: Any] = [
                            "number": line.number, "key": line.entry.key.description,
                            "cause": Self.cause(line.entry.cause),
                        ]
                        object["date"] = line.entry.date.map { format.string(from: $0) }
                        object["value"] = line.entry.valueDescription
                        // Absent when not known; null when the key had no value.
                        if line.isKnown {
                            object["before"] = line.before ?? NSNull()
                        }
                        object["program"] = line.entry.program
                        object["processID"] = line.entry.processID.map { Int($0) }
                        object["writeIdentifier"] = line.entry.writeIdentifier
                        return object
                    }))
            return
        }
        if lines.isEmpty {
            raw("No changes in the history.")
        }
        for line in lines {
            let entry = line.entry
            let date = entry.date.map { format.string(from: $0) } ?? "(no time)"
            let before = line.isKnown ? line.before ?? "(no value)" : "?"
            let after = entry.valueDescription ?? "(removed)"
            let by = "\(entry.program ?? "?")[\(entry.processID.map(String.init) ?? "?")]"
            raw("\(date)  \(entry.key) #\(line.number)  \(before) → \(after)  \(Self.cause(entry.cause))  \(by)")
        }
    }

    private static func cause(_ cause: HistoryCause) -> String {
        switch cause {
        case .write: "write"
        case .transaction: "transaction"
        case .migration(let id): "migration '\(id)'"
        case .import: "import"
        case .reset: "reset"
        case .tool: "prefs"
        case .restore: "restore"
        case .sync(let device): "sync from \(device)"
        }
    }

    func done(_ message: String, _ object: [String: Any]) {
        raw(json ? Self.jsonText(object) : message)
    }

    static func entryObject(_ entry: (key: StoredKey, value: StoredValue)) -> [String: Any] {
        [
            "key": entry.key.description,
            "namespace": "\(entry.key.namespace)",
            "name": entry.key.name,
            "type": ValueText.typeName(of: entry.value),
            "value": ValueText.json(entry.value),
        ]
    }

    static func jsonText(_ object: Any, pretty: Bool = true) -> String {
        let options: JSONSerialization.WritingOptions = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: options.union(.fragmentsAllowed))
        else {
            return "null"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
