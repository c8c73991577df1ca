import Foundation

/// The file backend: the whole store in one checksummed file, replaced atomically on every commit.
///
/// Opening never treats a damaged file as empty and never overwrites it unread: it loads every
/// record that verifies, keeps a copy of the damaged file beside it, and reports what was lost. If
/// the copy cannot be made, the backend refuses writes rather than replace the only copy.
final class FileBackend: PreferencesBackend {
    let location: String
    private let fileSystem: FileSystem
    private let state: Locked<State>

    private struct State {
        /// What the file holds: the image of every successful commit.
        var entries: [StorageKey: StoredValue]
        /// Set when writes must be refused, with the reason.
        var refusal: String?
    }

    /// What opening found: the backend, the entries it loaded, and any damage to report.
    struct Opened {
        var backend: FileBackend
        var entries: [StorageKey: StoredValue]
        var problems: [PreferencesError]
    }

    private init(path: String, fileSystem: FileSystem, entries: [StorageKey: StoredValue], refusal: String?) {
        location = path
        self.fileSystem = fileSystem
        state = Locked(State(entries: entries, refusal: refusal))
    }

    static func open(
        path: String,
        ifDamaged handling: PreferencesStore.DamageHandling,
        fileSystem: FileSystem = FileSystem()
    ) throws(PreferencesError) -> Opened {
        guard let bytes = try fileSystem.readFile(at: path) else {
            return Opened(
                backend: FileBackend(path: path, fileSystem: fileSystem, entries: [:], refusal: nil),
                entries: [:],
                problems: []
            )
        }
        let contents: StoreFile.Contents
        do throws(StoreFile.UnsupportedVersion) {
            contents = try StoreFile.decode(bytes)
        } catch {
            throw PreferencesError(
                .unsupportedFormatVersion(path: path, found: error.version, supported: StoreFile.currentVersion)
            )
        }
        guard var damage = contents.damage else {
            return Opened(
                backend: FileBackend(path: path, fileSystem: fileSystem, entries: contents.entries, refusal: nil),
                entries: contents.entries,
                problems: []
            )
        }
        if handling == .throwError {
            throw PreferencesError(.damagedFile(path: path, damage: damage))
        }
        return preserveDamagedFile(
            bytes, path: path, damage: &damage, entries: contents.entries, fileSystem: fileSystem)
    }

    /// Keeps a copy of a damaged file, then replaces the file with what verified.
    ///
    /// Replacing it means the damage is found and reported once. Without a copy, the file is left
    /// alone and writes are refused.
    private static func preserveDamagedFile(
        _ bytes: [UInt8],
        path: String,
        damage: inout DamageReport,
        entries: [StorageKey: StoredValue],
        fileSystem: FileSystem
    ) -> Opened {
        var problems: [PreferencesError] = []
        var refusal: String?
        do {
            let copyPath = try keepCopy(of: bytes, beside: path, fileSystem: fileSystem)
            damage.copyPath = copyPath
            do throws(PreferencesError) {
                if let warning = try fileSystem.replaceFile(at: path, with: StoreFile.encode(entries)) {
                    problems.append(warning)
                }
            } catch {
                // The copy is safe, so later commits may still replace the file.
                problems.append(error)
            }
        } catch {
            refusal = "its file is damaged and no copy of it could be kept (\(error))"
            problems.append(error)
        }
        problems.insert(PreferencesError(.damagedFile(path: path, damage: damage)), at: 0)
        return Opened(
            backend: FileBackend(path: path, fileSystem: fileSystem, entries: entries, refusal: refusal),
            entries: entries,
            problems: problems
        )
    }

    private static func keepCopy(
        of bytes: [UInt8],
        beside path: String,
        fileSystem: FileSystem
    ) throws(PreferencesError) -> String {
        let stamp = Int(Date().timeIntervalSince1970)
        var candidate = "\(path).damaged-\(stamp)"
        var suffix = 1
        while fileSystem.fileExists(at: candidate) {
            candidate = "\(path).damaged-\(stamp)-\(suffix)"
            suffix += 1
        }
        try fileSystem.createFile(at: candidate, with: bytes)
        return candidate
    }

    func commit(_ changes: [EntryChange]) throws(PreferencesError) -> [PreferencesError] {
        try state.withLock { (state: inout State) throws(PreferencesError) -> [PreferencesError] in
            if let refusal = state.refusal {
                throw PreferencesError(.storeUnavailable(path: location, reason: refusal))
            }
            // Applied in place and undone on failure: copying the map would cost O(n) per commit.
            var undo: [(StorageKey, StoredValue?)] = []
            undo.reserveCapacity(changes.count)
            for change in changes {
                let previous =
                    if let value = change.value {
                        state.entries.updateValue(value, forKey: change.key)
                    } else {
                        state.entries.removeValue(forKey: change.key)
                    }
                undo.append((change.key, previous))
            }
            do throws(PreferencesError) {
                let warning = try fileSystem.replaceFile(at: location, with: StoreFile.encode(state.entries))
                return warning.map { [$0] } ?? []
            } catch {
                for (key, previous) in undo.reversed() {
                    state.entries[key] = previous
                }
                throw error
            }
        }
    }
}
