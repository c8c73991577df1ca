/// The layer a key's value came from: see ``PreferencesStore/source(of:)``.
///
/// A store reads the layers from the top down and returns the first value that reads as the key's
/// type: launch arguments, environment variables, managed settings, the stored value, the default.
public enum PreferenceSource: Sendable, Hashable, CustomStringConvertible {
    /// A `-name value` pair among the process's launch arguments.
    case launchArgument
    /// An environment variable named with the prefix the store was given.
    case environment
    /// A setting an administrator made: forced, so the app cannot change it.
    case managed
    /// The value written to the store.
    case stored
    /// The key's default: nothing above it holds a value that reads as the key's type.
    case `default`

    /// The layer's name, such as `launch argument`.
    public var description: String {
        switch self {
        case .launchArgument: "launch argument"
        case .environment: "environment variable"
        case .managed: "managed setting"
        case .stored: "stored value"
        case .default: "default"
        }
    }
}
