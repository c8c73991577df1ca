extension PreferencesError {
    /// Everything an error knows, by kind.
    enum Detail: Hashable, Sendable {
        case typeMismatch(key: StoredKey, stored: String, expected: String)
        case decodingFailed(key: StoredKey, expected: String, reason: String)
        case encodingFailed(key: StoredKey, valueType: String, reason: String)
        case conflictingValueTypes(key: StoredKey, first: String, second: String)
        case damagedFile(path: String, damage: DamageReport)
        case unsupportedFormatVersion(path: String, found: Int, supported: Int)
        case fileOperationFailed(path: String, operation: String, errorNumber: Int32)
        case storeUnavailable(path: String, reason: String)
        case migrationFailed(migration: String, key: StoredKey?, reason: String)
        case valueForced(key: StoredKey, origin: String)
        /// A value in an override layer that does not read as the key's type (code `typeMismatch`).
        case unreadableOverride(key: StoredKey, origin: String, text: String, expected: String, reason: String)
        /// A managed settings file that does not read (code `fileOperationFailed`).
        case unreadableSettings(path: String, reason: String, keepsEarlierSettings: Bool)
        case importFailed(key: StoredKey?, reason: String)
        /// A value that breaks a key's rule, and where it was found.
        case invalidValue(key: StoredKey, value: String, rule: String, origin: ValueOrigin)
        /// A value an import migration left out, recorded as applied without it: `code` says why
        /// (`typeMismatch`, `decodingFailed` or `invalidValue`).
        case skippedImportValue(migration: String, key: StoredKey, source: String, reason: String, code: Code)
        /// A device's file in a sync folder that does not verify from `offset` on (code `damagedFile`).
        case unverifiedSyncFile(path: String, offset: Int, reason: String)
        case notSyncable(key: StoredKey?, reason: String)
        case syncLimitExceeded(key: StoredKey?, reason: String)
        /// A synced version that does not read, in iCloud's key-value store or in the store's own
        /// record of what it synced (code `damagedFile`).
        case unreadableSyncedVersion(place: String, reason: String)

        var code: Code {
            switch self {
            case .typeMismatch: .typeMismatch
            case .decodingFailed: .decodingFailed
            case .encodingFailed: .encodingFailed
            case .conflictingValueTypes: .conflictingValueTypes
            case .damagedFile: .damagedFile
            case .unsupportedFormatVersion: .unsupportedFormatVersion
            case .fileOperationFailed: .fileOperationFailed
            case .storeUnavailable: .storeUnavailable
            case .migrationFailed: .migrationFailed
            case .valueForced: .valueForced
            case .unreadableOverride: .typeMismatch
            case .unreadableSettings: .fileOperationFailed
            case .importFailed: .importFailed
            case .skippedImportValue(_, _, _, _, let code): code
            case .invalidValue: .invalidValue
            case .unverifiedSyncFile: .damagedFile
            case .notSyncable: .notSyncable
            case .syncLimitExceeded: .syncLimitExceeded
            case .unreadableSyncedVersion: .damagedFile
            }
        }

        var key: StoredKey? {
            switch self {
            case .typeMismatch(let key, _, _), .decodingFailed(let key, _, _), .encodingFailed(let key, _, _),
                .conflictingValueTypes(let key, _, _), .valueForced(let key, _),
                .unreadableOverride(let key, _, _, _, _), .skippedImportValue(_, let key, _, _, _),
                .invalidValue(let key, _, _, _):
                key
            case .migrationFailed(_, let key, _), .importFailed(let key, _), .notSyncable(let key, _),
                .syncLimitExceeded(let key, _):
                key
            case .damagedFile, .unsupportedFormatVersion, .fileOperationFailed, .storeUnavailable, .unreadableSettings,
                .unverifiedSyncFile, .unreadableSyncedVersion:
                nil
            }
        }

        var filePath: String? {
            switch self {
            case .damagedFile(let path, _), .unsupportedFormatVersion(let path, _, _),
                .fileOperationFailed(let path, _, _), .storeUnavailable(let path, _),
                .unreadableSettings(let path, _, _), .unverifiedSyncFile(let path, _, _):
                path
            case .typeMismatch, .decodingFailed, .encodingFailed, .conflictingValueTypes, .migrationFailed,
                .valueForced, .unreadableOverride, .importFailed, .skippedImportValue, .invalidValue, .notSyncable,
                .syncLimitExceeded, .unreadableSyncedVersion:
                nil
            }
        }

        var description: String {
            switch self {
            case .typeMismatch(let key, let stored, let expected):
                "Type mismatch for key '\(key)': \(withArticle(stored)) is stored, but the key's type is \(expected). "
                    + "The stored value was left untouched."
            case .decodingFailed(let key, let expected, let reason):
                "The value stored for key '\(key)' does not decode as \(expected): \(reason). "
                    + "The stored value was left untouched."
            case .encodingFailed(let key, let valueType, let reason):
                "A \(valueType) for key '\(key)' could not be encoded: \(reason). Nothing was written."
            case .conflictingValueTypes(let key, let first, let second):
                "Key '\(key)' is used with two value types in this process: \(first) and \(second). "
                    + "Declare each key once, with one type."
            case .damagedFile(let path, let damage):
                "The store file '\(path)' is damaged: \(damage)."
            case .unsupportedFormatVersion(let path, let found, let supported):
                "The store file '\(path)' has format version \(found), but this library reads versions up to "
                    + "\(supported). It was written by a newer version and was left untouched."
            case .fileOperationFailed(let path, let operation, let errorNumber):
                "Could not \(operation) '\(path)': \(systemErrorDescription(errorNumber)) (errno \(errorNumber))."
            case .storeUnavailable(let path, let reason):
                "The store '\(path)' cannot accept writes: \(reason)"
            case .migrationFailed(let migration, let key, let reason):
                "Migration '\(migration)' failed"
                    + (key.map { " at key '\($0)'" } ?? "")
                    + ": \(clause(reason)). It changed nothing and was not recorded, so it runs again next time."
            case .valueForced(let key, let origin):
                "Key '\(key)' is forced by the \(origin), so the app cannot change it. Nothing was written."
            case .unreadableOverride(let key, let origin, let text, let expected, let reason):
                "Type mismatch for key '\(key)': the \(origin) holds \(text), which does not read as \(expected)"
                    + (reason.isEmpty ? "" : " (\(reason))") + ". It was skipped."
            case .importFailed(let key, let reason):
                "Could not import" + (key.map { " key '\($0)'" } ?? "") + ": \(clause(reason)). Nothing was imported."
            case .invalidValue(let key, let value, let rule, let origin):
                switch origin {
                case .write:
                    "Key '\(key)' must be \(rule), so \(value) was refused. Nothing was written."
                case .stored:
                    "Key '\(key)' must be \(rule), but \(value) is stored. It was skipped, and the stored value "
                        + "was left untouched."
                case .layer(let origin):
                    "Key '\(key)' must be \(rule), but the \(origin) holds \(value). It was skipped."
                }
            case .skippedImportValue(let migration, let key, let source, let reason, _):
                "Migration '\(migration)' left key '\(key)' out: \(source) \(clause(reason)). It was recorded as "
                    + "applied without it, so the value is not imported again; it was left where it was."
            case .unreadableSettings(let path, let reason, let keepsEarlierSettings):
                "The managed settings file '\(path)' cannot be read: \(reason). "
                    + (keepsEarlierSettings
                        ? "The settings it held when it last read still apply."
                        : "None of its settings apply until it reads.")
            case .unverifiedSyncFile(let path, let offset, let reason):
                "The sync file '\(path)' does not verify from byte \(offset) on: \(clause(reason)). Nothing of it "
                    + "past that byte was applied; it is read again next round."
            case .notSyncable(let key, let reason):
                (key.map { "Key '\($0)' cannot sync" } ?? "Nothing can sync") + ": \(clause(reason))."
            case .syncLimitExceeded(let key, let reason):
                "Sync hit a limit of iCloud's key-value store" + (key.map { " at key '\($0)'" } ?? "")
                    + ": \(clause(reason)). The store keeps its values; the change is offered again at later rounds."
            case .unreadableSyncedVersion(let place, let reason):
                "The synced version in \(place) does not read: \(clause(reason)). The key was skipped, and its "
                    + "value left as it was."
            }
        }
    }

    /// Where a value that breaks a rule came from.
    enum ValueOrigin: Hashable, Sendable {
        case write
        case stored
        /// An override layer's value, described as `launch argument '-zoom'`.
        case layer(String)
    }

    static func typeMismatch(key: StoredKey, stored: StoredValue, expected: Any.Type) -> PreferencesError {
        PreferencesError(.typeMismatch(key: key, stored: stored.kindDescription, expected: typeName(expected)))
    }
}

/// What a store found in a damaged file, and what it did about it.
struct DamageReport: Hashable, Sendable, CustomStringConvertible {
    /// The entries or records that verified and were loaded.
    var recoveredRecords: Int
    /// The byte ranges of the file that did not verify.
    var damagedRanges: [Range<Int>]
    /// Why the file as a whole did not verify, such as a bad header or a short body.
    var reason: String
    /// Where a copy of the damaged file was kept, once one was.
    var copyPath: String?

    var description: String {
        let ranges =
            damagedRanges.isEmpty
            ? "none"
            : damagedRanges.map { "\($0.lowerBound)..<\($0.upperBound)" }
                .joined(separator: ", ")
        let copy = copyPath.map { "a copy of the damaged file was kept at '\($0)'" } ?? "no copy was kept"
        return "\(reason); recovered \(recoveredRecords) records; bytes that did not verify: \(ranges); \(copy)"
    }
}

extension DamageReport {
    /// Records of the history file that verified but do not decode: what only a program other
    /// than this library can write.
    static func undecodableHistory(_ count: Int) -> DamageReport {
        DamageReport(
            recoveredRecords: 0,
            damagedRanges: [],
            reason: "\(count) records of the history verified but do not decode; pruning leaves them out",
            copyPath: nil
        )
    }
}

/// A reason as a clause within a sentence: without its closing period.
private func clause(_ reason: String) -> Substring {
    reason.hasSuffix(".") ? reason.dropLast() : reason[...]
}

/// A value as a message shows it: a string in quotes, anything else as it describes itself.
func describeValue(_ value: Any) -> String {
    if let text = value as? String {
        return "'\(text)'"
    }
    return String(describing: value)
}

/// A kind or type name after "a" or "an": "an array", "a URL", "a String".
func withArticle(_ phrase: String) -> String {
    let startsWithVowelSound = phrase.first.map { "aeiou".contains($0) } ?? false
    return (startsWithVowelSound ? "an " : "a ") + phrase
}

/// The name of a type as a user wrote it, such as `Int` or `Optional<Theme>`.
func typeName(_ type: Any.Type) -> String {
    String(describing: type)
}
