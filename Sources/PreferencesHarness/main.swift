import Foundation
import Preferences
import PreferencesHarnessKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// A child process for the package's durability tests; not part of the library.
//
//   preferences-harness numbered STORE ACKS [COMPACTION_BYTES] [synchronous]
//       Performs NumberedWrites 1, 2, 3, ... until killed, appending "N\n" to ACKS with one
//       write(2) as soon as write N has returned.
//   preferences-harness distinct STORE PREFIX COUNT
//       Sets PREFIX-0 ... PREFIX-(COUNT-1) in the harness namespace, one commit each.
//   preferences-harness increment STORE COUNT
//       Adds one to the harness counter COUNT times, with update.
//   preferences-harness userdefaults SUITE
//       Writes a few values to a UserDefaults suite, in $XDG_CONFIG_HOME on Linux.
//   preferences-harness observe STORE
//       Observes the harness counter, prints "ready", then "value V at T" for each value it is
//       told of (T: the monotonic clock in nanoseconds), and otherwise sleeps until killed: an
//       idle process with an observer.
//   preferences-harness hold STORE SECONDS
//       Sets the harness counter to 1, then holds the store's exclusive lock for SECONDS inside a
//       transaction that sets it to 2, printing "holding" once it has the lock.
//   preferences-harness standard FOLDER
//       With XDG_CONFIG_HOME set to FOLDER, which is a file at first: writes to the standard store
//       (refused), turns FOLDER into a folder, waits a second, and writes again.
//   preferences-harness standard-full FILLER
//       With XDG_CONFIG_HOME on a full volume: writes to the standard store (refused), deletes
//       FILLER to make room, waits a second, and writes again.
//   preferences-harness layers STORE [-name value ...]
//       Opens STORE reading its launch arguments, HARNESS_-prefixed environment variables and the
//       managed settings under $XDG_CONFIG_DIRS, and prints "name=value (source)" for the keys
//       count, flag, title and com.vendor.sdk:flag, then whether writing count is refused.
//   preferences-harness migrate STORE ACKS COUNT
//       Runs NumberedMigrations 0 ..< COUNT one call each, appending "N\n" to ACKS once
//       migration N has returned.
//   preferences-harness sync STORE FOLDER
//       Runs one round syncing SyncedKeys through FOLDER, and prints "received R sent S problems P".
//   preferences-harness sync-writes STORE FOLDER DEVICE COUNT [ACKS]
//       As device DEVICE (0, 1 or 2): for N in 1...COUNT (forever when COUNT is 0), sets
//       SyncedKeys.shared to "DEVICE-N" and SyncedKeys.own(DEVICE) to N, then runs a round, then
//       appends "N\n" to ACKS with one write(2).

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("preferences-harness: \(message)\n".utf8))
    exit(2)
}

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count >= 2 else { fail("usage: preferences-harness numbered|distinct|increment STORE ...") }
let storeURL = URL(fileURLWithPath: arguments[1])

do {
    switch arguments[0] {
    case "numbered":
        guard arguments.count >= 3 else { fail("numbered needs STORE ACKS") }
        let compaction = arguments.count > 3 ? Int(arguments[3]) ?? 16_384 : 16_384
        let durability: PreferencesStore.Durability = arguments.contains("synchronous") ? .synchronous : .standard
        let store = try PreferencesStore(
            fileURL: storeURL,
            durability: durability,
            compactionMinimumBytes: compaction
        )
        let acks = open(arguments[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard acks >= 0 else { fail("cannot open \(arguments[2])") }
        var number = 1
        while true {
            try NumberedWrites.perform(number, on: store)
            let line = Array("\(number)\n".utf8)
            guard line.withUnsafeBytes({ write(acks, $0.baseAddress, $0.count) }) == line.count else {
                fail("cannot acknowledge write \(number)")
            }
            number += 1
        }
    case "distinct":
        guard arguments.count == 4, let count = Int(arguments[3]) else { fail("distinct needs STORE PREFIX COUNT") }
        let store = try PreferencesStore(fileURL: storeURL)
        for index in 0..<count {
            try store.setValue(
                index, for: PreferenceKey<Int>("\(arguments[2])-\(index)", default: -1, in: .custom("harness")))
        }
    case "increment":
        guard arguments.count == 3, let count = Int(arguments[2]) else { fail("increment needs STORE COUNT") }
        let store = try PreferencesStore(fileURL: storeURL)
        let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))
        for _ in 0..<count {
            try store.update(counter) { $0 += 1 }
        }
    case "hold":
        guard arguments.count == 3, let seconds = Double(arguments[2]) else { fail("hold needs STORE SECONDS") }
        let store = try PreferencesStore(fileURL: storeURL)
        let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))
        try store.setValue(1, for: counter)
        try store.transaction { preferences in
            preferences[counter] = 2
            FileHandle.standardOutput.write(Data("holding\n".utf8))
            Thread.sleep(forTimeInterval: seconds)
        }
    case "standard", "standard-full":
        let launches = PreferenceKey<Int>("launches", default: 0)
        do {
            try PreferencesStore.standard.setValue(1, for: launches)
            print("opened at once")
        } catch let error as PreferencesError {
            print("refused: \(error.code)")
        }
        // What stopped the store: a file where its folder goes, or a file filling the disk.
        try FileManager.default.removeItem(atPath: arguments[1])
        if arguments[0] == "standard" {
            try FileManager.default.createDirectory(atPath: arguments[1], withIntermediateDirectories: true)
        }
        Thread.sleep(forTimeInterval: 1.1)
        try PreferencesStore.standard.setValue(2, for: launches)
        print("recovered: \(PreferencesStore.standard[launches])")
    case "observe":
        let store = try PreferencesStore(fileURL: storeURL)
        let counter = PreferenceKey<Int>("counter", default: 0, in: .custom("harness"))
        let observation = store.observe(counter) { value, _ in
            FileHandle.standardOutput.write(Data("value \(value) at \(DispatchTime.now().uptimeNanoseconds)\n".utf8))
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        // The test runner may start this process with signals blocked; `terminate()` must end it.
        var signals = sigset_t()
        sigemptyset(&signals)
        pthread_sigmask(SIG_SETMASK, &signals, nil)
        while true {
            pause()
        }
        withExtendedLifetime(observation) {}
    case "layers":
        let store = try PreferencesStore(
            fileURL: storeURL, overrides: [.launchArguments, .environment(prefix: "HARNESS_"), .managed])
        let count = PreferenceKey<Int>("count", default: 0)
        let flag = PreferenceKey<Bool>("flag", default: false)
        let title = PreferenceKey<String>("title", default: "untitled")
        let vendorFlag = PreferenceKey<Bool>("flag", default: false, in: .custom("com.vendor.sdk"))
        print("count=\(store[count]) (\(store.source(of: count)))")
        print("flag=\(store[flag]) (\(store.source(of: flag)))")
        print("title=\(store[title]) (\(store.source(of: title)))")
        print("vendor=\(store[vendorFlag]) (\(store.source(of: vendorFlag)))")
        do {
            try store.setValue(99, for: count)
            print("write: stored")
        } catch let error as PreferencesError {
            print("write: \(error.code)")
        }
    case "migrate":
        guard arguments.count == 4, let count = Int(arguments[3]) else { fail("migrate needs STORE ACKS COUNT") }
        let store = try PreferencesStore(fileURL: storeURL)
        let acks = open(arguments[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard acks >= 0 else { fail("cannot open \(arguments[2])") }
        for index in 0..<count {
            try store.runMigrations(NumberedMigrations.migration(index))
            let line = Array("\(index)\n".utf8)
            guard line.withUnsafeBytes({ write(acks, $0.baseAddress, $0.count) }) == line.count else {
                fail("cannot acknowledge migration \(index)")
            }
        }
    case "sync":
        guard arguments.count == 3 else { fail("sync needs STORE FOLDER") }
        let store = try PreferencesStore(fileURL: storeURL)
        let report = try SyncedKeys.sync(store, through: URL(fileURLWithPath: arguments[2])).synchronize()
        print("received \(report.received.count) sent \(report.sent.count) problems \(report.problems.count)")
    case "sync-writes":
        guard arguments.count >= 5, let device = Int(arguments[3]), let count = Int(arguments[4]) else {
            fail("sync-writes needs STORE FOLDER DEVICE COUNT [ACKS]")
        }
        let store = try PreferencesStore(fileURL: storeURL)
        let sync = try SyncedKeys.sync(store, through: URL(fileURLWithPath: arguments[2]))
        let acks = arguments.count > 5 ? open(arguments[5], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600) : -1
        var number = 1
        while count == 0 || number <= count {
            try store.transaction { preferences in
                preferences[SyncedKeys.shared] = "\(device)-\(number)"
                preferences[SyncedKeys.own(device)] = number
            }
            try sync.synchronize()
            if acks >= 0 {
                let line = Array("\(number)\n".utf8)
                guard line.withUnsafeBytes({ write(acks, $0.baseAddress, $0.count) }) == line.count else {
                    fail("cannot acknowledge write \(number)")
                }
            }
            number += 1
        }
    case "userdefaults":
        // Writes a suite as an app using Foundation's UserDefaults would; STORE is the suite's name.
        guard let defaults = UserDefaults(suiteName: arguments[1]) else { fail("cannot open the suite") }
        defaults.set(true, forKey: "largeText")
        defaults.set(7, forKey: "launchCount")
        defaults.set("dark", forKey: "theme")
        defaults.set(4.5, forKey: "ratio")
        defaults.set(["a", "b"], forKey: "recent")
        guard defaults.synchronize() else { fail("cannot save the suite") }
    default:
        fail("unknown mode \(arguments[0])")
    }
} catch {
    fail("\(error)")
}
