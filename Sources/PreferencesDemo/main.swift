import Foundation
import Preferences

// A tour of the library: migrations that run once, keys of each kind, one transaction per
// launch, values that are still there next time, the history of a key's changes, launch
// arguments that override values for one run, and sync. Run it twice, then once with an override.
//
//     swift run preferences-demo [--store PATH] [-zoomPercent 150]
//     swift run preferences-demo --watch [--store PATH]   (prints changes as other runs make them)
//     swift run preferences-demo --store A.store --sync-folder FOLDER
//     swift run preferences-demo --store B.store --sync-folder FOLDER   (B takes A's nickname)
//
// The store is `PreferencesStore.standard` unless a path is given with `--store` or in the
// environment variable PREFERENCES_DEMO_STORE.

enum Appearance: String, Codable, Sendable, CaseIterable {
    case system, light, dark
}

struct WindowFrame: Codable, Sendable {
    var x: Int
    var y: Int
    var width: Int
    var height: Int
}

extension PreferenceKeys {
    static let launchCount = PreferenceKey<Int>("launchCount", default: 0)
    static let lastLaunch = PreferenceKey<Date?>("lastLaunch")
    static let appearance = PreferenceKey<Appearance>("appearance", default: .system)
    static let windowFrame = PreferenceKey<WindowFrame>(
        "windowFrame",
        default: WindowFrame(x: 0, y: 0, width: 800, height: 600)
    )
    static let homepage = PreferenceKey<URL>("homepage", default: URL(string: "https://www.swift.org/")!)
    static let recentLaunches = PreferenceKey<[String]>("recentLaunches", default: [])
    static let nickname = PreferenceKey<String?>("nickname")
    static let zoomPercent = PreferenceKey<Int>("zoomPercent", default: 100)
        .described("The text zoom, in percent.")
    static let telemetryEnabled = PreferenceKey<Bool>(
        "telemetryEnabled",
        default: true,
        in: .custom("com.example.analytics")
    )
}

/// The value given after `option` on the command line, if any.
func argument(after option: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: option), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func storeLocation() -> URL? {
    if let path = argument(after: "--store") {
        return URL(fileURLWithPath: path)
    }
    if let path = ProcessInfo.processInfo.environment["PREFERENCES_DEMO_STORE"], !path.isEmpty {
        return URL(fileURLWithPath: path)
    }
    return nil
}

/// Opens the store strictly first, so that damage is shown before anything is recovered.
func openStore() throws -> PreferencesStore {
    guard let url = storeLocation() else { return .standard }
    do {
        return try PreferencesStore(
            fileURL: url, ifDamaged: .throwError, overrides: PreferencesStore.standardOverrides)
    } catch let error as PreferencesError where error.code == .damagedFile {
        print("! \(error)")
        print("! Recovering what verifies; a copy of the damaged file is kept beside it.")
        return try PreferencesStore(fileURL: url, ifDamaged: .recover, overrides: PreferencesStore.standardOverrides)
    }
}

/// Syncs the appearance, the nickname and the zoom with the other stores that sync through
/// `folder`; names the nickname after this device if no device has named it yet.
func syncDemo(_ store: PreferencesStore, through folder: URL) throws {
    let sync = try PreferencesSync(store: store, keys: [.appearance, .nickname, .zoomPercent], folder: folder)
    let device = sync.deviceID.prefix(8)
    var reports = [try sync.synchronize()]
    if store[.nickname] == nil {
        // After the first round: a device that is new takes the others' values before offering its own.
        store[.nickname] = "named on device \(device)"
        reports.append(try sync.synchronize())
    }
    for problem in reports.flatMap(\.problems) {
        print("! \(problem)")
    }
    func names(_ keys: [StoredKey]) -> String {
        keys.isEmpty ? "nothing" : keys.map(\.description).joined(separator: ", ")
    }
    print("Synced through \(folder.path) as device \(device):")
    print("  received: \(names(reports.flatMap(\.received)))")
    print("  sent: \(names(reports.flatMap(\.sent)))")
    let cause = try store.history(for: .nickname).first?.cause
    let origin = if case .sync(let device)? = cause { "from device \(device.prefix(8))" } else { "made here" }
    print("  nickname: \(store[.nickname] ?? "none") (\(origin))")
}

if CommandLine.arguments.contains("--help") {
    print("usage: preferences-demo [--watch] [--store PATH] [--sync-folder FOLDER] [-name value ...]")
    exit(0)
}

/// Writes a line at once, even to a pipe, where `print` would wait for its buffer to fill.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("\(line)\n".utf8))
}

if CommandLine.arguments.contains("--watch") {
    do {
        let store = try openStore()
        say("Watching \(store.fileURL?.path ?? "memory"); run the demo elsewhere to see its changes. Ctrl-C stops.")
        for await change in store.changes(in: .app) {
            let keys = change.keys.map(\.name).joined(separator: ", ")
            say("Changed: \(keys) (from \(change.origin == .thisStore ? "this store" : "another process"))")
        }
    } catch {
        FileHandle.standardError.write(Data("preferences-demo: \(error)\n".utf8))
        exit(1)
    }
}

do {
    let store = try openStore()
    print("Store: \(store.fileURL?.path ?? "in memory")")
    // Declared, so that `prefs read` shows their defaults and `prefs schema` lists them.
    store.register(.launchCount, .lastLaunch, .appearance, .windowFrame, .homepage, .zoomPercent, .telemetryEnabled)

    // What an earlier version of the demo stored: a counter named "launches", and a Double
    // "zoom" that is now a whole percentage. Each migration runs once, however often the demo does.
    let applied = try store.runMigrations(
        MigrateName(from: PreferenceKey<Int>("launches", default: 0), to: .launchCount),
        MigrateValue(from: PreferenceKey<Double>("zoom", default: 1), to: .zoomPercent) { Int(($0 * 100).rounded()) }
    )
    for migration in applied {
        print("Migrated: \(migration.id) (\(migration.result))")
    }
    print("Ledger: \(store.appliedMigrations.count) migrations applied")
    for migration in store.appliedMigrations {
        print("  \(migration.appliedAt): \(migration.id): \(migration.result)")
    }

    let previousLaunch = try store.value(for: .lastLaunch)
    let launch = try store.transaction { preferences -> Int in
        preferences[.launchCount] += 1
        let launch = preferences[.launchCount]
        preferences[.lastLaunch] = Date()
        preferences[.recentLaunches] = Array((preferences[.recentLaunches] + ["launch \(launch)"]).suffix(3))
        let themes = Appearance.allCases
        preferences[.appearance] = themes[launch % themes.count]
        return launch
    }

    print("Launch \(launch); previous launch: \(previousLaunch.map { "\($0)" } ?? "never")")
    print("appearance (RawRepresentable): \(store[.appearance].rawValue)")
    let frame = store[.windowFrame]
    print("windowFrame (Codable): \(frame.width)x\(frame.height) at (\(frame.x), \(frame.y))")
    print("homepage (URL): \(store[.homepage].absoluteString)")
    print("recentLaunches ([String]): \(store[.recentLaunches].joined(separator: ", "))")
    print("nickname (String?): \(store[.nickname] ?? "none")")
    print("telemetryEnabled (in com.example.analytics): \(store[.telemetryEnabled])")
    // Stored or not, a launch argument such as `-zoomPercent 150` wins for this run.
    print("zoomPercent: \(store[.zoomPercent]) (from the \(store.source(of: .zoomPercent)))")
    print("Stored keys: \(store.storedKeys().map(\.description).joined(separator: ", "))")
    // Each launch's change to the appearance, kept across compactions: `prefs log` shows it too.
    print("Last changes to appearance (newest first):")
    for change in try store.history(for: .appearance).prefix(3) {
        let value = if case .value(let appearance) = change.value { appearance.rawValue } else { "(removed)" }
        let when = change.date.map { ISO8601DateFormatter().string(from: $0) } ?? "(no time)"
        print("  \(when)  \(value)  (\(change.cause), \(change.entry.program ?? "?")[\(change.entry.processID ?? 0)])")
    }
    if let folder = argument(after: "--sync-folder") {
        try syncDemo(store, through: URL(fileURLWithPath: folder, isDirectory: true))
    }
    print("Run me again: the launch count goes up.")
} catch {
    FileHandle.standardError.write(Data("preferences-demo: \(error)\n".utf8))
    exit(1)
}
