import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening a store waits for no writer, changes no file, and works on a full disk.
struct OpeningTests {
    private let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))

    /// An app launched while its extension is suspended in the middle of a commit opens and reads.
    @Test(.tags(.childProcesses)) func openingGoesOnWhileAnotherProcessHoldsTheWritersLock() throws {
        let directory = try TemporaryDirectory()
        // The holder commits 1, then holds the lock for a minute in a transaction, until killed.
        let holder = try ChildProcess.startCollectingOutput(
            "PreferencesHarness", ["hold", directory.storeURL.path, "60"])
        defer { holder.killAbruptly() }
        holder.waitFor("holding")
        let store = try PreferencesStore(fileURL: directory.storeURL)
        #expect(holder.isRunning, "opening waited for the holder to finish")
        #expect(store[counter] == 1)
        #expect(store.errorChannel.takeBacklog().isEmpty)
    }

    /// Opening and reading leave the snapshot and the log as they were.
    ///
    /// Contents, size and modification time: backups, sync tools and file watchers see no change
    /// when nothing was written.
    @Test func openingAndReadingChangeNoFile() throws {
        let directory = try TemporaryDirectory()
        let keys = (0..<40).map { PreferenceKey<Int>("key\($0)", default: -1) }
        do {
            let writer = try PreferencesStore(fileURL: directory.storeURL)
            for (index, key) in keys.enumerated() {
                try writer.setValue(index, for: key)
            }
            try writer.compact()
            try writer.setValue(1, for: counter)
        }
        let before = try fingerprints(of: [directory.storeURL, directory.logURL])
        for _ in 0..<2 {
            let reader = try PreferencesStore(fileURL: directory.storeURL)
            #expect(keys.enumerated().allSatisfy { reader[$0.element] == $0.offset })
            #expect(reader[counter] == 1)
        }
        #expect(try fingerprints(of: [directory.storeURL, directory.logURL]) == before)
    }

    /// A store on a full disk opens and reads in another process; its writes fail saying why, and
    /// succeed again once space is freed.
    @Test(.enabled(if: SmallVolume.canMount, "needs root to mount a tmpfs"))
    func aFullDiskNeverStopsAStoreFromOpeningAndReading() throws {
        let volume = try #require(SmallVolume(bytes: 1 << 20))
        let storeURL = volume.url.appendingPathComponent("preferences.store")
        let keys = (0..<20).map { PreferenceKey<String>("key\($0)", default: "") }
        var acknowledged: [String: String] = [:]
        var failure: (any Error)?
        let store = try PreferencesStore(fileURL: storeURL)
        let payload = String(repeating: "x", count: 2_000)
        try store.setValue("first", for: keys[0])
        acknowledged[keys[0].name] = "first"
        // Every block left, taken by a file to delete once the store has met the full disk.
        let filler = volume.url.appendingPathComponent("filler")
        #expect(FileManager().createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try handle.close()
        for round in 0..<10_000 {
            let key = keys[round % keys.count]
            let value = "\(round) \(payload)"
            do {
                try store.setValue(value, for: key)
                acknowledged[key.name] = value
            } catch {
                failure = error
                break
            }
        }
        let full = try #require(failure, "the volume never filled")
        #expect("\(full)".contains("No space left on device"), "\(full)")

        // Another process's store, here another store on the same files.
        let reader = try PreferencesStore(fileURL: storeURL)
        for key in keys {
            #expect(reader[key] == acknowledged[key.name, default: ""], "\(key.name)")
        }
        #expect(throws: PreferencesError.self) { try reader.setValue("more \(payload)", for: keys[0]) }

        // Space freed: writes go through again, and are there when the store is opened anew.
        try FileManager().removeItem(at: filler)
        try reader.setValue("after", for: keys[0])
        #expect(try PreferencesStore(fileURL: storeURL)[keys[0]] == "after")
    }

    /// A store opened for the first time on a full disk opens at once, reads its defaults, and says
    /// why it cannot write; opened again once space is freed, it writes.
    ///
    /// The store opened on the full disk stays read-only: it has no lock file to write under, and
    /// making one needs a page of disk.
    @Test(.enabled(if: SmallVolume.canMount, "needs root to mount a tmpfs"))
    func aNewStoreOnAFullDiskOpensAndWritesOnceSpaceIsFreed() throws {
        let volume = try #require(SmallVolume(bytes: 1 << 20))
        let storeURL = volume.url.appendingPathComponent("preferences.store")
        let filler = volume.url.appendingPathComponent("filler")
        #expect(FileManager().createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try handle.close()

        let opening = DispatchGroup()
        let opened = Locked<Result<PreferencesStore, any Error>?>(nil)
        DispatchQueue.global().async(group: opening) {
            let result = Result { try PreferencesStore(fileURL: storeURL) }
            opened.withLock { $0 = result }
        }
        try #require(
            opening.wait(timeout: .now() + 10) == .success, "opening a new store on a full disk never returned")
        let store = try #require(try opened.withLock { $0 }?.get())
        #expect(store[.count] == 0)
        let error = #expect(throws: PreferencesError.self) { try store.setValue(1, for: .count) }
        #expect(error.map { "\($0)".contains("No space left on device") } == true, "\(String(describing: error))")

        #expect(error.map { "\($0)".contains("read-only") } == true)

        try FileManager().removeItem(at: filler)
        let reopened = try PreferencesStore(fileURL: storeURL)
        try reopened.setValue(2, for: .count)
        #expect(try PreferencesStore(fileURL: storeURL)[.count] == 2)
    }

    /// The standard store, opened for the first time on a full disk, writes once space is freed:
    /// a later access opens it again, as it does one that could not open.
    @Test(
        .enabled(if: SmallVolume.canMount && isLinux, "needs root to mount a tmpfs, and XDG_CONFIG_HOME"),
        .tags(.childProcesses))
    func theStandardStoreOnAFullDiskWritesOnceSpaceIsFreed() throws {
        let volume = try #require(SmallVolume(bytes: 1 << 20))
        let configuration = volume.url.appendingPathComponent("config")
        try FileManager().createDirectory(at: configuration, withIntermediateDirectories: true)
        let filler = volume.url.appendingPathComponent("filler")
        #expect(FileManager().createFile(atPath: filler.path, contents: nil))
        let handle = try FileHandle(forWritingTo: filler)
        while (try? handle.write(contentsOf: Data(count: 4096))) != nil {}
        try handle.close()
        let run = try ChildProcess.run(
            "PreferencesHarness", ["standard-full", filler.path], environment: ["XDG_CONFIG_HOME": configuration.path])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.split(separator: "\n") == ["refused: storeUnavailable", "recovered: 2"], "\(run.output)")
    }

    /// What tells a file changed: its bytes, size and modification time, to the nanosecond.
    private func fingerprints(of urls: [URL]) throws -> [String] {
        try urls.map { url in
            var status = stat()
            #expect(stat(url.path, &status) == 0)
            #if canImport(Darwin)
                let modified = (status.st_mtimespec.tv_sec, status.st_mtimespec.tv_nsec)
            #else
                let modified = (status.st_mtim.tv_sec, status.st_mtim.tv_nsec)
            #endif
            let bytes = try Data(contentsOf: url)
            return "\(url.lastPathComponent) \(status.st_size) \(modified) \(bytes.hashValue) \(bytes.count)"
        }
    }
}
