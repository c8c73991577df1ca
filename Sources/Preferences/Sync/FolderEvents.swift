import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// Says when another device's file in a sync folder appears, is replaced, grows or goes.
///
/// The folder is watched for its entries, and each other device's file for what is written to
/// it; the files are looked for again whenever the entries change, so a file that appears, or is
/// renamed over, is watched from then on. This device's own file is not watched: only its rounds
/// write it. The watches are the platform's file events, made by a ``PathWatches`` leaf (inotify
/// on Linux, Dispatch sources on Apple platforms); nothing polls.
final class FolderEvents: SyncWatch {
    private let folder: String
    private let ownFile: String
    private let watches: PathWatches
    /// Told what could not be watched: a file that then goes unwatched until it changes name.
    private let onProblem: @Sendable (PreferencesError) -> Void
    /// Held while the files are looked for, which events on the queue and `resume` may both ask.
    private let looking = Locked(())

    private struct State {
        /// What to call on a change, once resumed; `nil` once cancelled.
        var onChange: (@Sendable () -> Void)?
        /// Each other device's file watched, by name, and the identity of the file watched.
        var files: [String: (identity: FileIdentity, watch: PathWatches.Watch)] = [:]
        var isCancelled = false
    }
    private let state = Locked(State())

    /// Watches the folder at `path`, which must exist; events are handled on `queue`.
    ///
    /// - Throws: A ``PreferencesError`` if the platform cannot watch the folder.
    init(
        watching path: String,
        ignoring ownFile: String,
        queue: DispatchQueue,
        onProblem: @escaping @Sendable (PreferencesError) -> Void
    ) throws(PreferencesError) {
        folder = path
        self.ownFile = ownFile
        self.onProblem = onProblem
        watches = try PathWatches(queue: queue)
    }

    /// Starts calling `onChange`, on the queue, after each change.
    ///
    /// - Throws: A ``PreferencesError`` if the folder cannot be watched.
    func resume(onChange handler: @escaping @Sendable () -> Void) throws(PreferencesError) {
        state.withLock { $0.onChange = handler }
        _ = try watches.watch(folder, isFolder: true) { [weak self] in self?.entriesChanged() }
        _ = lookForFiles()
    }

    /// Stops the events; `onChange` is not called again.
    func cancel() {
        state.withLock { state in
            state.onChange = nil
            state.isCancelled = true
            state.files = [:]
        }
        watches.cancel()
    }

    private func entriesChanged() {
        if lookForFiles() {
            changed()
        }
    }

    private func changed() {
        state.withLock { $0.onChange }?()
    }

    /// Watches the other devices' files that appeared or were replaced since the last look, and
    /// stops watching those that went.
    ///
    /// - Returns: Whether any did.
    private func lookForFiles() -> Bool {
        looking.withLock { _ in lookForFilesNow() }
    }

    private func lookForFilesNow() -> Bool {
        let names: [String]
        do throws(PreferencesError) {
            names = try FileSystem().fileNames(in: folder)
        } catch {
            onProblem(error)
            return false
        }
        var found: [String: FileIdentity] = [:]
        for name in names where name != ownFile && SyncFile.device(named: name) != nil {
            let path = (folder as NSString).appendingPathComponent(name)
            if let identity = FileSystem().identity(at: path) {
                found[name] = identity
            }
        }
        let (gone, new) = state.withLock { state -> ([PathWatches.Watch], [String]) in
            guard !state.isCancelled else { return ([], []) }
            let gone = state.files.filter { found[$0.key] != $0.value.identity }
            for name in gone.keys {
                state.files[name] = nil
            }
            return (gone.map(\.value.watch), found.keys.filter { state.files[$0] == nil })
        }
        for watch in gone {
            watches.stopWatching(watch)
        }
        for name in new {
            let path = (folder as NSString).appendingPathComponent(name)
            guard let identity = found[name] else { continue }
            let watch: PathWatches.Watch
            do throws(PreferencesError) {
                watch = try watches.watch(path, isFolder: false) { [weak self] in self?.changed() }
            } catch {
                onProblem(error)
                continue
            }
            let isKept = state.withLock { state in
                guard !state.isCancelled else { return false }
                state.files[name] = (identity, watch)
                return true
            }
            if !isKept {
                watches.stopWatching(watch)
            }
        }
        return !gone.isEmpty || !new.isEmpty
    }
}
