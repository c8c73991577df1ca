public import Foundation

extension PreferencesStore {
    /// Every stored value, with its type, as JSON that ``import(_:)`` reads back exactly.
    ///
    /// The format is the one `prefs export` writes: an array of entries, each with the key as
    /// `namespace:name`, the stored type, and the value, numbers as their exact text. Values of
    /// override layers and the library's reserved namespaces are not exported.
    ///
    /// ```swift
    /// let backup = store.export()
    /// try otherStore.import(backup)
    /// ```
    ///
    /// - Returns: The entries, as UTF-8 JSON.
    public func export() -> Data {
        let entries = storedEntries().map { entry in
            ValueText.exported(entry.value).merging(["key": entry.key.description]) { $1 }
        }
        // Every value in an exported entry is a string, number, Boolean, array or dictionary.
        return (try? JSONSerialization.data(withJSONObject: entries, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }

    /// Writes every entry of an export, in one commit: all of them, or none.
    ///
    /// An entry for a key declared with ``register(_:)-(PreferenceKeys...)`` must read as the key's
    /// type. Keys that are not declared are written as they are.
    ///
    /// - Parameter data: What ``export()`` or `prefs export` wrote.
    /// - Throws: A ``PreferencesError``: ``PreferencesError/Code/importFailed`` if the data is not an
    ///   export, an entry does not read, or an entry does not read as its declared key's type,
    ///   ``PreferencesError/Code/valueForced`` if a managed setting
    ///   forces one of the keys, or the backend's error if the commit cannot be written. Nothing
    ///   changes when it throws.
    public func `import`(_ data: Data) throws {
        guard let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw PreferencesError(.importFailed(key: nil, reason: "the data is not a JSON array of exported entries"))
        }
        var changes: [PendingChange] = []
        for object in array {
            guard let text = object["key"] as? String, let key = StoredKey(parsing: text) else {
                throw PreferencesError(
                    .importFailed(key: nil, reason: "an entry has no key of the form namespace:name: \(object)"))
            }
            let value: StoredValue
            do throws(ValueText.Failure) {
                value = try ValueText.value(fromExported: object)
            } catch {
                throw PreferencesError(.importFailed(key: key, reason: error.message))
            }
            let resolvedKey = resolvedKey(for: key)
            if let declaration = state.withLock({ $0.declarations[resolvedKey] }),
                let failure = declaration.readingFailure?(value)
            {
                let reason =
                    if case .ruleBroken(let broken) = failure {
                        "the entry holds \(broken.value), but the key must be \(broken.rule)"
                    } else {
                        "the entry holds \(withArticle(value.kindDescription)), which does not read as its declared "
                            + "type, \(declaration.typeName)"
                    }
                throw PreferencesError(.importFailed(key: key, reason: reason))
            }
            changes.append(PendingChange(key: resolvedKey, value: value, valueType: nil))
        }
        try commit(changes, cause: .import)
    }
}
