public import Foundation

/// A migration that reads one value from a file into a key: what swift-sharing's `fileStorage`
/// keeps, one JSON file per value, or a property list.
///
/// ```swift
/// try store.runMigrations(
///     ImportFile(URL.documentsDirectory.appending(component: "settings.json"), into: .settings)
/// )
/// ```
///
/// The file is decoded as the key's type: as JSON with `JSONDecoder`'s default strategies, as
/// `fileStorage` writes it by default, or as a property list when the file is one. Give `decode`
/// for a file written another way, such as with ISO 8601 dates.
///
/// With the ledger recording the import, it runs once. A key that already holds a value in the
/// store is not imported: the store's value is the newer. With no file, there is nothing to
/// import. A file that does not decode fails the migration, naming the file: nothing changes, and
/// it runs again next time. The file is never changed or deleted; remove it yourself once you no
/// longer need it.
public struct ImportFile<Value: Codable & Sendable>: PreferencesMigration {
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
        self.init(fileURL, into: key, id: id) { data in
            let isPropertyList = data.starts(with: Data("bplist".utf8)) || data.starts(with: Data("<?xml".utf8))
            return isPropertyList
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
    ///   - decode: Turns the file's bytes into the value; it may throw to fail the migration.
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
    /// - Throws: A ``PreferencesError`` when the file cannot be read or decoded, or the value cannot
    ///   be written.
    public func migrate(_ preferences: inout PreferencesTransaction) throws -> MigrationResult {
        let data: Data
        do {
            data = try Data(contentsOf: fileURL)
        } catch CocoaError.fileReadNoSuchFile {
            return MigrationResult("no file at '\(fileURL.path)'")
        } catch {
            throw failure("the file '\(fileURL.path)' cannot be read: \(describe(error))")
        }
        guard !preferences.contains(key) else {
            return MigrationResult("the store already holds a newer value; the file was left alone")
        }
        let value: Value
        do {
            value = try decode(data)
        } catch {
            throw failure(
                "the file '\(fileURL.path)' does not decode as \(typeName(Value.self)): \(describe(error))")
        }
        try preferences.setValue(value, for: key)
        return MigrationResult("imported '\(fileURL.lastPathComponent)'")
    }

    private func failure(_ reason: String) -> PreferencesError {
        PreferencesError(.migrationFailed(migration: id, key: StoredKey(key.name, in: key.namespace), reason: reason))
    }
}
