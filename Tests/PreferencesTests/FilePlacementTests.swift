import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a store's files live and whose they are: a store reached through a symbolic link, the
/// owner and mode of files a compaction replaces, and a log that can be read but not written.
struct FilePlacementTests {
    private let counter = PreferenceKey<Int>("counter", default: -1)

    private func status(of url: URL) throws -> stat {
        var status = stat()
        try #require(lstat(url.path, &status) == 0)
        return status
    }

    @Test(arguments: [false, true])
    func theStoresFilesAreKeptOutOfBackupsWhenAsked(excluded: Bool) throws {
        let directory = try TemporaryDirectory()
        let operations = FileOperationLog()
        let store = try PreferencesStore(
            fileURL: directory.storeURL, excludedFromBackup: excluded, fileSystem: operations.fileSystem)
        store[.count] = 1
        try store.compact()
        let excludedPaths = operations.performed.filter { $0.0 == .excludeFromBackup }.map(\.path)
        // The lock file always; the snapshot, the log and the history, each written under a
        // temporary name and renamed, only when asked.
        #expect(excludedPaths.contains(directory.lockURL.path))
        let storeFiles = excludedPaths.filter { $0 != directory.lockURL.path }
        let written = operations.performed.filter { $0.0 == .write }.map(\.path)
        if excluded {
            #expect(storeFiles.contains { $0.hasPrefix(directory.storeURL.path + ".tmp") }, "\(storeFiles)")
            #expect(storeFiles.contains { $0.hasPrefix(directory.storeURL.path + ".history.tmp") }, "\(storeFiles)")
            #expect(storeFiles.contains { $0.hasPrefix(directory.logURL.path + ".tmp") }, "\(storeFiles)")
            #expect(Set(storeFiles).isSubset(of: Set(written)), "excluded a file it did not write")
        } else {
            #expect(storeFiles.isEmpty, "\(storeFiles)")
        }

        // Opened again with the option, a store excludes the files it finds, written without it.
        let reopening = FileOperationLog()
        if !excluded {
            _ = try PreferencesStore(
                fileURL: directory.storeURL, excludedFromBackup: true, fileSystem: reopening.fileSystem)
            let found = reopening.performed.filter { $0.0 == .excludeFromBackup }.map(\.path)
            #expect(
                Set(found) == [
                    directory.storeURL.path, directory.logURL.path, directory.storeURL.path + ".history",
                ])
        }
    }

    @Test func aStoreOpenedThroughASymbolicLinkKeepsEveryFileBesideTheRealOne() throws {
        let real = try TemporaryDirectory()
        let elsewhere = try TemporaryDirectory()
        let link = elsewhere.storeURL
        let store = try PreferencesStore(fileURL: real.storeURL)
        try store.setValue(1, for: counter)
        try store.compact()
        try FileManager().createSymbolicLink(atPath: link.path, withDestinationPath: real.storeURL.path)

        let linked = try PreferencesStore(fileURL: link)
        #expect(linked[counter] == 1)
        try linked.setValue(2, for: counter)
        try linked.compact()
        try linked.setValue(3, for: counter)

        #expect(try elsewhere.fileNames() == ["preferences.store"], "files were made beside the link")
        #expect(try status(of: link).st_mode & S_IFMT == S_IFLNK, "compaction replaced the link")
        #expect(try PreferencesStore(fileURL: real.storeURL)[counter] == 3)
        #expect(try PreferencesStore(fileURL: link)[counter] == 3)
    }

    @Test func aRelativeLinkToAStoreNotYetWrittenPointsWhereItWillBe() throws {
        let directory = try TemporaryDirectory()
        try FileManager().createDirectory(
            at: directory.url.appendingPathComponent("real"), withIntermediateDirectories: true)
        try FileManager().createSymbolicLink(
            atPath: directory.storeURL.path, withDestinationPath: "real/settings.store")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(7, for: counter)
        #expect(
            try FileManager().contentsOfDirectory(atPath: directory.url.appendingPathComponent("real").path).sorted()
                == ["settings.store.lock", "settings.store.log"]
        )
    }

    @Test func aCompactionKeepsTheModeTheOwnerChose() throws {
        let directory = try TemporaryDirectory()
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(1, for: counter)
        try store.compact()
        for url in [directory.storeURL, directory.logURL] {
            #expect(chmod(url.path, 0o644) == 0)
        }
        try store.setValue(2, for: counter)
        try store.compact()
        for url in [directory.storeURL, directory.logURL] {
            #expect(try status(of: url).st_mode & 0o777 == 0o644, "\(url.lastPathComponent)")
        }
    }

    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func aCompactionRunByRootLeavesTheFilesToTheirOwner() throws {
        let directory = try TemporaryDirectory()
        let owner: uid_t = 4321
        let group: gid_t = 4322
        let store = try PreferencesStore(fileURL: directory.storeURL)
        try store.setValue(1, for: counter)
        try store.compact()
        for url in [directory.storeURL, directory.logURL] {
            #expect(chown(url.path, owner, group) == 0)
        }
        try FileManager().removeItem(at: directory.lockURL)

        let asRoot = try PreferencesStore(fileURL: directory.storeURL)
        try asRoot.setValue(2, for: counter)
        try asRoot.compact()
        for url in [directory.storeURL, directory.logURL, directory.lockURL] {
            let status = try status(of: url)
            #expect(status.st_uid == owner && status.st_gid == group, "\(url.lastPathComponent)")
        }
    }

    @Test func aLogThatCannotBeWrittenOpensTheStoreReadOnlyAndSaysWhy() throws {
        let directory = try TemporaryDirectory()
        try PreferencesStore(fileURL: directory.storeURL).setValue(1, for: counter)
        let log = FileOperationLog()
        log.fail(.openForWriting, with: EACCES, where: { $0.hasSuffix(".log") })

        let store = try PreferencesStore(fileURL: directory.storeURL, fileSystem: log.fileSystem)
        #expect(store[counter] == 1)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(2, for: counter) }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.description.contains("its log can be read but not written, so it is read-only") == true)
        #expect(error?.description.contains("Permission denied") == true)
        #expect(try PreferencesStore(fileURL: directory.storeURL)[counter] == 1)
    }

    /// A store's path is split into its folder and its name as `NSString` splits a file's path,
    /// except that a bare name lies in the current folder, `.`, where a temporary file beside it is
    /// found.
    @Test(arguments: [
        ("/tmp/a/preferences.store", "/tmp/a", "preferences.store"),
        ("/preferences.store", "/", "preferences.store"),
        ("relative/preferences.store", "relative", "preferences.store"),
        ("preferences.store", ".", "preferences.store"),
        ("/tmp/a/", "/tmp/a", ""),
    ])
    func aPathSplitsIntoItsFolderAndName(path: String, folder: String, name: String) {
        let split = FileSystem.split(path)
        #expect(split.directory == folder)
        #expect(split.name == name)
        #expect(FileSystem.folder(of: path) == folder)
        if !name.isEmpty {
            #expect(FileSystem.path(of: name, in: folder) == (folder == "." ? "./" + name : path))
        }
        if folder != "." && !name.isEmpty {
            #expect(folder == (path as NSString).deletingLastPathComponent)
        }
    }
}
