import Foundation
import Testing

@testable import Preferences

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum Theme: String, Codable, Sendable, CaseIterable {
    case system, light, dark
}

enum Level: Int, Sendable {
    case low = 1
    case high = 2
}

struct Pet: Codable, Sendable, Hashable {
    var name: String
    var age: Int
}

/// A value whose `Double` cannot be encoded as JSON when it is not finite.
struct Measurement: Codable, Sendable, Hashable {
    var value: Double
}

extension PreferenceKeys {
    static let flag = PreferenceKey<Bool>("flag", default: false)
    static let count = PreferenceKey<Int>("count", default: 0)
    static let ratio = PreferenceKey<Double>("ratio", default: 0)
    static let title = PreferenceKey<String>("title", default: "untitled")
    static let theme = PreferenceKey<Theme>("theme", default: .system)
    static let level = PreferenceKey<Level>("level", default: .low)
    static let pet = PreferenceKey<Pet?>("pet")
    static let nickname = PreferenceKey<String?>("nickname")
    static let measurement = PreferenceKey<Measurement>("measurement", default: Measurement(value: 0))
    static let vendorFlag = PreferenceKey<Bool>("flag", default: false, in: .custom("com.vendor.sdk"))
    static let globalFlag = PreferenceKey<Bool>("flag", default: false, in: .global)
}

/// A folder of its own under the system's temporary directory, removed when the test is done.
final class TemporaryDirectory: Sendable {
    let url: URL

    // `mkdtemp` rather than `FileManager.createDirectory`, which trips an exclusivity check inside
    // swift-foundation when tests running in parallel call it at once.
    init() throws {
        var template = Array(
            (URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("PreferencesTests-XXXXXX").path)
                .utf8CString)
        guard let path = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CocoaError(.fileWriteUnknown)
        }
        url = URL(fileURLWithPath: String(cString: path), isDirectory: true)
    }

    deinit {
        try? FileManager().removeItem(at: url)
    }

    var storeURL: URL { url.appendingPathComponent("preferences.store") }
    var logURL: URL { url.appendingPathComponent("preferences.store.log") }
    var lockURL: URL { url.appendingPathComponent("preferences.store.lock") }

    /// The bytes of the store's snapshot and log, which must not change when a write fails.
    func storeBytes() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for url in [storeURL, logURL] where FileManager().fileExists(atPath: url.path) {
            files[url.lastPathComponent] = try Data(contentsOf: url)
        }
        return files
    }

    /// Every file in the folder, by name.
    func fileNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}

/// Where a store under test keeps its values: the conformance tests run against each.
enum BackendKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case file

    var testDescription: String { rawValue }
}

/// A store of one kind, which can be reopened to check what outlives it.
final class StoreFixture: Sendable {
    let kind: BackendKind
    let directory: TemporaryDirectory
    let store: PreferencesStore

    init(_ kind: BackendKind, appNamespace: String = PreferencesStore.defaultAppNamespace) throws {
        self.kind = kind
        directory = try TemporaryDirectory()
        switch kind {
        case .memory: store = .inMemory(appNamespace: appNamespace)
        case .file: store = try PreferencesStore(fileURL: directory.storeURL, appNamespace: appNamespace)
        }
    }

    /// The same store opened again from its file; the in-memory store is its own only copy.
    func reopened() throws -> PreferencesStore {
        switch kind {
        case .memory: store
        case .file: try PreferencesStore(fileURL: directory.storeURL, appNamespace: store.appNamespace)
        }
    }
}

/// Counts the file operations a store performs, through the engine's seam, and fails chosen ones.
final class FileOperationLog: Sendable {
    private struct Failure {
        var errorNumber: Int32
        var applies: @Sendable (String) -> Bool
    }

    private struct State {
        var counts: [FileSystem.Operation: Int] = [:]
        var performed: [(FileSystem.Operation, path: String)] = []
        var failing: [FileSystem.Operation: Failure] = [:]
    }

    private let state = Locked(State())

    var fileSystem: FileSystem {
        FileSystem { operation, path in
            self.state.withLock { state in
                state.counts[operation, default: 0] += 1
                state.performed.append((operation, path))
                guard let failure = state.failing[operation] else { return nil }
                return failure.applies(path) ? failure.errorNumber : nil
            }
        }
    }

    func count(of operation: FileSystem.Operation) -> Int {
        state.withLock { $0.counts[operation, default: 0] }
    }

    /// Every operation counted so far.
    var counts: [FileSystem.Operation: Int] {
        state.withLock { $0.counts }
    }

    /// Every operation so far, in order, with the path it was on.
    var performed: [(FileSystem.Operation, path: String)] {
        state.withLock { $0.performed }
    }

    /// Makes `operation` fail with `errorNumber`, or succeed again when it is `nil`; only on the
    /// paths `applies` accepts.
    func fail(
        _ operation: FileSystem.Operation,
        with errorNumber: Int32?,
        where applies: @escaping @Sendable (String) -> Bool = { _ in true }
    ) {
        state.withLock { state in
            state.failing[operation] = errorNumber.map { Failure(errorNumber: $0, applies: applies) }
        }
    }
}

/// Whether the tests run on Linux, for those that point Foundation or the standard store somewhere
/// through `XDG_CONFIG_HOME`, which only Linux reads: elsewhere they would write into the real
/// Application Support or Preferences folder.
let isLinux: Bool = {
    #if os(Linux)
        true
    #else
        false
    #endif
}()
