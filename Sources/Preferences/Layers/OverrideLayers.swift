import Foundation

/// A store's override layers: the launch arguments and environment, read once, and the managed
/// settings, read again whenever they change.
final class OverrideLayers: Sendable {
    /// The launch arguments' and environment's values, top first.
    private let fixed: [NamedOverride]
    private let managedLocation: ManagedSettings.Location?
    /// Each managed source's settings as they last read, so that a file that stops reading keeps them.
    private let lastManaged = Locked<[String: [NamedOverride]]>([:])

    init(_ layers: [OverrideLayer]) {
        var arguments: [NamedOverride] = []
        var environment: [NamedOverride] = []
        var managed: ManagedSettings.Location?
        for layer in layers {
            switch layer.kind {
            case .launchArguments(let list): arguments += Self.named(launchArguments: list)
            case .environment(let prefix, let variables):
                environment += Self.named(environment: variables, prefix: prefix)
            case .managed(let location): managed = location
            }
        }
        fixed = arguments + environment
        managedLocation = managed
    }

    /// Every layer's values, top first, with the managed settings read again, and their problems.
    ///
    /// Managed settings come first: forced means forced, so no launch argument or environment
    /// variable may stand above an administrator's value.
    func read() -> (values: [NamedOverride], problems: [PreferencesError]) {
        guard let managedLocation else { return (fixed, []) }
        let sources = ManagedSettings.read(managedLocation)
        var problems: [PreferencesError] = []
        let managed = lastManaged.withLock { last in
            sources.flatMap { source in
                if let settings = source.settings {
                    last[source.name] = settings
                } else {
                    problems.append(
                        PreferencesError(
                            .unreadableSettings(
                                path: source.name, reason: source.failure ?? "",
                                keepsEarlierSettings: last[source.name] != nil)))
                }
                return last[source.name] ?? []
            }
        }
        return (managed + fixed, problems)
    }

    /// Watches the managed settings; `nil` when the store reads none.
    func watch(onChange: @escaping @Sendable () -> Void) -> ManagedSettingsWatcher? {
        managedLocation.map { ManagedSettingsWatcher(location: $0, onChange: onChange) }
    }

    /// `-name value` pairs, as `UserDefaults` reads them; when a name is given twice, the last wins.
    static func named(launchArguments arguments: [String]) -> [NamedOverride] {
        var named: [NamedOverride] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            guard argument.count > 1, argument.hasPrefix("-"), !argument.hasPrefix("--"),
                index + 1 < arguments.endIndex
            else {
                index += 1
                continue
            }
            let text = arguments[index + 1]
            let value = OverrideValue(
                source: .launchArgument, origin: "launch argument '\(argument)'", text: "'\(text)'",
                readings: OverrideText.readings(of: text))
            named.append(NamedOverride(name: String(argument.dropFirst()), value: value))
            index += 2
        }
        return named.reversed()
    }

    /// The variables whose name starts with the prefix, named by the rest of their name.
    static func named(environment variables: [String: String], prefix: String) -> [NamedOverride] {
        variables.filter { $0.key.hasPrefix(prefix) && $0.key.count > prefix.count }
            .sorted { $0.key < $1.key }
            .map { variable, text in
                NamedOverride(
                    name: String(variable.dropFirst(prefix.count)),
                    value: OverrideValue(
                        source: .environment, origin: "environment variable '\(variable)'", text: "'\(text)'",
                        readings: OverrideText.readings(of: text)))
            }
    }
}
