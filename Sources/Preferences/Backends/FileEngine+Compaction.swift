#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension FileEngine {
    /// Folds the log into a new snapshot of the next generation, then starts a new log.
    ///
    /// A crash before the snapshot's rename leaves the old snapshot and log; after it, the new
    /// snapshot and a log of the old generation, which opening ignores because the snapshot holds
    /// all of it. Either way nothing is lost. Call it holding the exclusive lock.
    ///
    /// - Returns: Problems that did not stop the compaction.
    func compact(_ state: inout State) throws(PreferencesError) -> [PreferencesError] {
        guard let lockFile else { return [] }
        let generation = state.generation + 1
        let bytes = SnapshotFile.encode(state.entries, generation: generation)
        var problems: [PreferencesError] = []
        if let warning = try fileSystem.replaceFile(at: location, with: bytes) {
            problems.append(warning)
        }
        state.generation = generation
        state.snapshotSize = bytes.count
        state.log = nil
        // Others must reload now, even if no new log can be started: theirs is stale.
        defer { state.seenCount = lockFile.countCommit() }
        problems += try ensureLog(&state)
        return problems
    }

    /// Starts a new, empty log of the current generation, unless one is open.
    func ensureLog(_ state: inout State) throws(PreferencesError) -> [PreferencesError] {
        guard state.log == nil else { return [] }
        var problems: [PreferencesError] = []
        if let warning = try fileSystem.replaceFile(at: logPath, with: LogFile.header(generation: state.generation)) {
            problems.append(warning)
        }
        guard let log = try fileSystem.openExisting(at: logPath, readOnly: false) else {
            throw PreferencesError(.fileOperationFailed(path: logPath, operation: "open", errorNumber: ENOENT))
        }
        state.log = log
        state.logValidEnd = FileHeader.size
        return problems
    }
}
