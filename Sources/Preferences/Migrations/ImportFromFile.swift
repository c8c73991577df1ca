public import Foundation

/// A migration that reads one value from a file into a key: what swift-sharing's `fileStorage`
/// keeps, one JSON file per value, or a property list.
///
/// ```swift
/// try store.runMigrations(
///     ImportFromFile(URL.documentsDirectory.appending(component: "settings.json"), into: .settings)
/// )
/// ```
///
/// The file is decoded as the key's type: as a property list when its name ends in `.plist` or it
/// is a binary property list, and otherwise as JSON, with `JSONDecoder`'s default strategies, as
/// `fileStorage` writes it by default. Give `decode` for a file written another way, such as with
/// ISO 8601 dates.
///
/// With the ledger recording the import, it runs once. A key that already holds a value in the
/// store is not imported: the store's value is the newer. With no file, there is nothing to
/// import. A file that does not decode as the key's type, or whose value breaks one of the key's
/// rules, is reported through ``PreferencesStore/errors`` and left out: the import is recorded as
/// applied without it, since a file the app no longer writes will not change, and a migration
/// that failed would keep every later one from running. A file that cannot be read at all (its
/// permissions, say) fails the migration, which runs again next time. The file is never changed or
/// deleted; remove it yourself once you no longer need it.
public struct ImportFromFile<Value: Codable & Sendable>: PreferencesMigration {
    /// The file to read.
    public let fileURL: URL

    /// The key the value goes to.
    public let key: PreferenceKey<Value>

    /// The migration's identity; by default `import file <file name> into <key> in <namespace>`.
    public let id: String

    private let decode: @Sendable (Data) throws -> Value

    /// Creates an import of a file decoded as JSON, or as a property list when the file is one.
    ///
    /// - Parameters:
    ///   - fileURL: The file to read.
    ///   - key: The key the value goes to; its type is what the file is decoded as.
    ///   - id: The migration's identity; derived from the file's name and the key when `nil`.
    public init(_ fileURL: URL, into key: PreferenceKey<Value>, id: String? = nil) {
        let isPropertyList = fileURL.pathExtension == "plist"
        self.init(fileURL, into: key, id: id) { data in
            isPropertyList || data.starts(with: Data("bplist".utf8))
                ? try PropertyListDecoder().decode(Value.self, from: data)
                : try JSONDecoder().decode(Value.self, from: data)
        }
    }

    /// Creates an import of a file decoded your own way.
    ///
    /// - Parameters:
    ///   - fileURL: The file to read.
    ///   - key: The key the value goes to.
    ///   - id: The migration's identity; derived from the file's name and the key when `nil`.
    ///   - decode: Turns the file's bytes into the value; an error it throws is reported, and the
    ///     value left out.
    public init(
        _ fileURL: URL, into key: PreferenceKey<Value>, id: String? = nil,
        decode: @escaping @Sendable (Data) throws -> Value
    ) {
        self.fileURL = fileURL
        self.key = key
        self.decode = decode
        self.id = id ?? "import file \(fileURL.lastPathComponent) into \(key.name) in \(key.namespace)"
    }

    /// Reads the file and writes its value, as described in the type's documentation.
    ///
    /// - Parameter preferences: The migration's transaction.
    /// - Returns: What was imported, or why nothing was.
    /// - Throws: A ``PreferencesError`` when the file cannot be read, or a managed setting forces
    ///   the key.
    public func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
        guard !preferences.contains(key) else {
            return MigrationResult("the store already holds a newer value; the file was left alone")
        }
        let storedKey = preferences.storedKey(for: preferences.resolvedKey(for: key))
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch CocoaError.fileReadNoSuchFile {
            return MigrationResult("no file at '\(fileURL.path)'")
        } catch {
            throw PreferencesError(
                .migrationFailed(
                    migration: id, key: storedKey,
                    reason: "the file '\(fileURL.path)' cannot be read: \(describe(error))"))
        }
        func skip(_ reason: String, _ code: PreferencesError.Code) -> MigrationResult {
            preferences.report(
                PreferencesError(
                    .skippedImportValue(
                        migration: id, key: storedKey, source: "the file '\(fileURL.path)'", reason: reason, code: code
                    )))
            return MigrationResult("skipped '\(fileURL.lastPathComponent)': it \(reason)")
        }
        let value: Value
        do {
            value = try decode(data)
        } catch {
            return skip("does not decode as \(typeName(Value.self)): \(describe(error))", .decodingFailed)
        }
        do {
            try preferences.setValue(value, for: key)
        } catch let error as PreferencesError where error.code == .invalidValue {
            guard case .invalidValue(_, let text, let rule, _) = error.detail else { throw error }
            return skip("holds \(text), but the key must be \(rule)", .invalidValue)
        }
        return MigrationResult("imported '\(fileURL.lastPathComponent)'")
    }
}
