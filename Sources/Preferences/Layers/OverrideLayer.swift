public import Foundation

/// A layer of values a store reads above the stored ones: launch arguments, environment variables,
/// or settings an administrator manages.
///
/// Choose them when you open a store; ``PreferencesStore/standard`` reads
/// ``launchArguments`` and ``managed``:
///
/// ```swift
/// let store = try PreferencesStore(
///     fileURL: url,
///     overrides: [.launchArguments, .environment(prefix: "MYAPP_"), .managed]
/// )
/// ```
///
/// Whatever order you list them in, a store reads managed settings first, then launch arguments,
/// then environment variables, then the stored value, then the key's default: a managed setting
/// is forced, so nothing else overrides it. A value that does not read as the key's type is
/// reported through ``PreferencesStore/errors`` and skipped, never coerced.
/// See <doc:DefaultsOverridesAndManagedSettings>.
public struct OverrideLayer: Sendable {
    enum Kind: Sendable {
        case launchArguments([String])
        case environment(prefix: String, variables: [String: String])
        case managed(ManagedSettings.Location)
    }

    let kind: Kind

    /// This process's launch arguments: `-name value` for keys in the app's and the global
    /// namespace, `-namespace:name value` for others, as `UserDefaults` reads them.
    ///
    /// `YES`, `NO`, `true` and `false` read as Booleans, numbers as numbers, JSON as the value it
    /// spells (arrays, dictionaries and `Codable` values), dates as ISO 8601, data as base64, and
    /// any text as a string: the key's type decides which reading applies. An argument that
    /// begins with `--` is not read. Launch arguments never change while the process runs.
    public static var launchArguments: OverrideLayer {
        launchArguments(Array(ProcessInfo.processInfo.arguments.dropFirst()))
    }

    /// The given launch arguments, read as ``launchArguments`` reads the process's own.
    ///
    /// - Parameter arguments: The arguments, without the program's path.
    /// - Returns: The layer.
    public static func launchArguments(_ arguments: [String]) -> OverrideLayer {
        OverrideLayer(kind: .launchArguments(arguments))
    }

    /// Environment variables named with a prefix: `<prefix><name>` for keys in the app's and the
    /// global namespace, `<prefix><namespace>:<name>` for others.
    ///
    /// Values are read as ``launchArguments`` reads them. Only variables with the prefix are read,
    /// so choose one that is the app's own, such as `MYAPP_`.
    ///
    /// - Parameter prefix: What every variable's name starts with.
    /// - Returns: The layer, reading this process's environment.
    public static func environment(prefix: String) -> OverrideLayer {
        environment(prefix: prefix, variables: ProcessInfo.processInfo.environment)
    }

    /// The given variables, read as ``environment(prefix:)`` reads the process's environment.
    ///
    /// - Parameters:
    ///   - prefix: What every variable's name starts with.
    ///   - variables: The variables, by name.
    /// - Returns: The layer.
    public static func environment(prefix: String, variables: [String: String]) -> OverrideLayer {
        OverrideLayer(kind: .environment(prefix: prefix, variables: variables))
    }

    /// The settings an administrator manages for this program; each one is forced.
    ///
    /// On Apple platforms, the `com.apple.configuration.managed` dictionary that mobile device
    /// management delivers. On Linux, `preferences.json` or `preferences.plist` in a folder named
    /// after the program (its bundle identifier or process name, as in
    /// ``PreferencesStore/standardFileURL``) under each folder of `$XDG_CONFIG_DIRS`, `/etc/xdg` by
    /// default; the first folder listed wins. Settings are named as ``launchArguments`` names them.
    /// A change an administrator makes reaches the store, and its observers, while it is open.
    public static var managed: OverrideLayer {
        OverrideLayer(kind: .managed(.standard))
    }

    /// Managed settings in a file: a JSON object or a property-list dictionary whose entries are
    /// named as ``launchArguments`` names them.
    ///
    /// A file that does not exist holds no settings. The store watches the file, and its folder,
    /// while it is open.
    ///
    /// - Parameter fileURL: The file.
    /// - Returns: The layer.
    public static func managed(fileURL: URL) -> OverrideLayer {
        OverrideLayer(kind: .managed(.files([fileURL])))
    }
}
