public import Foundation

/// A migration that copies chosen keys from `UserDefaults`, or from a property-list file, into
/// typed keys of the store.
///
/// ```swift
/// try store.runMigrations(
///     ImportFromUserDefaults(.standard, keys: [
///         .key(.prefersLargeText, from: "largeText"),
///         .key(.theme),
///         .key(.launchCount),
///     ])
/// )
/// ```
///
/// The target key's type decides how each value is read: a stored `1` becomes `true` for a `Bool`
/// key and `1` for an `Int` key, so no separate list of Bool keys is needed. `Data` holding JSON is
/// decoded for a `Codable` key. Values that sindresorhus/Defaults stored read too: a `Codable`
/// value (a URL or a `Codable` enum included) kept as its JSON text in a string, and arrays and
/// dictionaries of such strings. A value that fits no reading is reported with its key, and either
/// skipped or made to fail the whole import: see ``MismatchPolicy``.
///
/// A key that already holds a value in the store is not imported: the store's value is the newer.
/// With the ledger recording the import, running it again changes nothing, so a stale value in
/// `UserDefaults` never overwrites a newer one. The import never deletes anything from its source;
/// clear the old suite yourself once you no longer need it.
public struct ImportFromUserDefaults: PreferencesMigration {
    /// Where the values come from.
    public enum Source: Sendable, Hashable {
        /// `UserDefaults.standard`.
        case standard
        /// `UserDefaults(suiteName:)` with this name.
        case suite(String)
        /// A property-list file, binary or XML, whose top level is a dictionary: what
        /// `defaults export` writes, or what `UserDefaults` keeps on disk.
        case propertyListFile(URL)
    }

    /// What the import does with a value that fits no reading of its key's type.
    public enum MismatchPolicy: Sendable, Hashable {
        /// Leave that key out, import the others, and report it. The default.
        case skipAndReport
        /// Import nothing, and fail the migration.
        case fail
    }

    /// One key to import: where its value is in the source, and the typed key it goes to.
    public struct Key: Sendable {
        let sourceName: String
        /// The namespace and name the value goes to.
        let target: StoredKey
        let read: @Sendable (Any) -> Reading

        enum Reading {
            case value(StoredValue)
            /// Why the value does not fit, and the code to report it with.
            case mismatch(String, PreferencesError.Code)
        }

        /// Imports the value stored under `sourceName` (the key's own name if `nil`) into `key`.
        ///
        /// - Parameters:
        ///   - key: The typed key to import into; its type decides how the value is read.
        ///   - sourceName: The name of the value in the source.
        /// - Returns: The key to import.
        public static func key<Value>(_ key: PreferenceKey<Value>, from sourceName: String? = nil) -> Key {
            Key(key, from: sourceName) { _ in [] }
        }

        /// Imports the value stored under `sourceName` (the key's own name if `nil`) into a key of
        /// a `Codable` enum: also from the JSON text of its raw value, as sindresorhus/Defaults
        /// keeps one (`"2"` for an `Int` raw value).
        ///
        /// - Parameters:
        ///   - key: The typed key to import into; its type decides how the value is read.
        ///   - sourceName: The name of the value in the source.
        /// - Returns: The key to import.
        public static func key<Value: RawRepresentable & Codable>(
            _ key: PreferenceKey<Value>, from sourceName: String? = nil
        ) -> Key where Value.RawValue: DirectPreferenceValue {
            let codec = key.codec
            return Key(key, from: sourceName) { object in
                decodedJSON(in: object, as: Value.self).flatMap { (try? codec.encode($0)) ?? nil }.map { [$0] } ?? []
            }
        }

        /// Imports the value stored under `sourceName` (the key's own name if `nil`) into a key of
        /// an optional `Codable` enum: also from the JSON text of its raw value, as
        /// sindresorhus/Defaults keeps one.
        ///
        /// - Parameters:
        ///   - key: The typed key to import into; its type decides how the value is read.
        ///   - sourceName: The name of the value in the source.
        /// - Returns: The key to import.
        public static func key<Wrapped: RawRepresentable & Codable>(
            _ key: PreferenceKey<Wrapped?>, from sourceName: String? = nil
        ) -> Key where Wrapped.RawValue: DirectPreferenceValue {
            let codec = key.codec
            return Key(key, from: sourceName) { object in
                decodedJSON(in: object, as: Wrapped.self).flatMap { (try? codec.encode($0)) ?? nil }.map { [$0] } ?? []
            }
        }

        /// A key whose value is read, in order, as a property list holds it, as Defaults keeps
        /// it, and then as `moreReadings` reads it; each reading computed only if the last failed.
        private init<Value>(
            _ key: PreferenceKey<Value>, from sourceName: String?,
            moreReadings: @escaping @Sendable (Any) -> [StoredValue]
        ) {
            let codec = key.codec
            self.sourceName = sourceName ?? key.name
            target = StoredKey(key.name, in: key.namespace)
            read = { object in
                let plain = PropertyListValue.candidates(for: object)
                let readings = [{ plain }, { DefaultsLibraryValue.candidates(for: object) }, { moreReadings(object) }]
                var brokenRule: BrokenRule?
                for reading in readings {
                    for candidate in reading() {
                        do throws(DecodeFailure) {
                            _ = try codec.decode(candidate)
                            return .value(candidate)
                        } catch {
                            if case .ruleBroken(let broken) = error { brokenRule = broken }
                        }
                    }
                }
                if let brokenRule {
                    return .mismatch("holds \(brokenRule.value), but the key must be \(brokenRule.rule)", .invalidValue)
                }
                let stored = plain.first?.kindDescription ?? "\(type(of: object))"
                return .mismatch(
                    "holds \(withArticle(stored)), which does not read as \(typeName(Value.self))", .typeMismatch)
            }
        }

        /// The value a string of JSON text holds, decoded as `Value`; `nil` if it holds none.
        private static func decodedJSON<Value: Decodable>(in object: Any, as type: Value.Type) -> Value? {
            guard let text = object as? String else { return nil }
            return try? JSONDecoder().decode(Value.self, from: Data(text.utf8))
        }
    }

    /// Where the values come from.
    public let source: Source

    /// The keys to import.
    public let keys: [Key]

    /// What to do with a value that fits no reading of its key's type.
    public let policy: MismatchPolicy

    /// The migration's identity; by default `import from UserDefaults <suite or file>`.
    ///
    /// Adding keys to the list does not make it a new migration: import them with another
    /// `ImportFromUserDefaults` of its own identity.
    public let id: String

    /// Creates an import.
    ///
    /// - Parameters:
    ///   - source: Where the values come from.
    ///   - keys: The keys to import, each with its typed key.
    ///   - policy: What to do with a value that fits no reading of its key's type.
    ///   - id: The migration's identity; derived from the source when `nil`.
    public init(
        _ source: Source, keys: [Key], ifValueDoesNotFit policy: MismatchPolicy = .skipAndReport, id: String? = nil
    ) {
        self.source = source
        self.keys = keys
        self.policy = policy
        switch source {
        case .standard: self.id = id ?? "import from UserDefaults standard"
        case .suite(let name): self.id = id ?? "import from UserDefaults suite \(name)"
        case .propertyListFile(let url): self.id = id ?? "import from property list \(url.lastPathComponent)"
        }
    }

    /// Copies the values, as described in the type's documentation.
    ///
    /// - Parameter preferences: The migration's transaction.
    /// - Returns: What was imported and what was skipped.
    /// - Throws: A ``PreferencesError`` if the property-list file cannot be read, or if a value does
    ///   not fit and the policy is ``MismatchPolicy/fail``.
    public func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
        let values = try sourceValues()
        var imported = 0
        var skipped: [String] = []
        for key in keys {
            guard let object = values[key.sourceName] else { continue }
            let place = preferences.resolvedKey(for: key.target)
            guard preferences.storedValue(at: place) == nil else {
                skipped.append("'\(key.sourceName)', the store already holding a newer value")
                continue
            }
            switch key.read(object) {
            case .value(let value):
                preferences.setStoredValue(value, at: place)
                imported += 1
            case .mismatch(let reason, let code):
                let storedKey = preferences.storedKey(for: place)
                if policy == .fail {
                    throw PreferencesError(
                        .migrationFailed(migration: id, key: storedKey, reason: "'\(key.sourceName)' \(reason)"))
                }
                preferences.report(
                    PreferencesError(
                        .skippedImportValue(
                            migration: id, key: storedKey, source: "'\(key.sourceName)'", reason: reason, code: code)))
                skipped.append("'\(key.sourceName)' \(reason)")
            }
        }
        let summary = "imported \(imported) of \(keys.count) keys"
        return MigrationResult(skipped.isEmpty ? summary : "\(summary); skipped \(skipped.joined(separator: "; "))")
    }

    /// What the user stored: the persistent domain, without the registered defaults and launch
    /// arguments that `dictionaryRepresentation()` mixes in, which nobody chose and which must
    /// not become stored values.
    private func sourceValues() throws -> [String: Any] {
        switch source {
        case .standard:
            return UserDefaults.standard.persistentDomain(forName: UserDefaultsBackend.domainName(suiteName: nil))
                ?? [:]
        case .suite(let name):
            return UserDefaults(suiteName: name)?.persistentDomain(forName: name) ?? [:]
        case .propertyListFile(let url):
            do {
                let data = try Data(contentsOf: url)
                guard
                    let dictionary = try PropertyListSerialization.propertyList(from: data, format: nil)
                        as? [String: Any]
                else {
                    throw CocoaError(.propertyListReadCorrupt)
                }
                return dictionary
            } catch {
                throw PreferencesError(
                    .migrationFailed(
                        migration: id, key: nil, reason: "the property list '\(url.path)' cannot be read: \(error)")
                )
            }
        }
    }
}
