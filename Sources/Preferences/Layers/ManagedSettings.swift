import Foundation

/// Reading the settings an administrator manages: the managed layer of a store.
enum ManagedSettings {
    /// Where the settings are.
    enum Location: Sendable {
        /// The platform's place for this program (see ``OverrideLayer/managed``).
        case standard
        /// Files, the most important first: a setting in an earlier one wins.
        case files([URL])
        /// The `com.apple.configuration.managed` dictionary of a `UserDefaults` suite; `nil` for the
        /// app's standard defaults, where mobile device management puts it.
        case userDefaults(suiteName: String?)

        /// The location `standard` stands for on this platform.
        var resolved: Location {
            guard case .standard = self else { return self }
            #if canImport(Darwin)
                return .userDefaults(suiteName: nil)
            #else
                return .files(ManagedSettings.standardFiles)
            #endif
        }
    }

    /// The key under which mobile device management delivers an app's managed configuration.
    static let appleConfigurationKey = "com.apple.configuration.managed"

    /// What reading the settings found, source by source, the most important first.
    struct Reading {
        /// Each file's or dictionary's settings; `nil` for a file that did not read, whose settings
        /// from the last reading stand until it reads again.
        var sources: [(name: String, settings: [NamedOverride]?)]
        var problems: [PreferencesError]
    }

    /// `preferences.json` and `preferences.plist` in this program's folder under each folder of
    /// `$XDG_CONFIG_DIRS`, in the order the specification gives them importance.
    static var standardFiles: [URL] {
        let identifier = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        let list =
            ProcessInfo.processInfo.environment["XDG_CONFIG_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/xdg"
        return list.split(separator: ":").filter { $0.hasPrefix("/") }.flatMap { folder in
            let base = URL(fileURLWithPath: String(folder), isDirectory: true)
                .appendingPathComponent(identifier, isDirectory: true)
            return [
                base.appendingPathComponent("preferences.json"), base.appendingPathComponent("preferences.plist"),
            ]
        }
    }

    /// Reads every setting at a location, the most important first.
    static func read(_ location: Location) -> Reading {
        switch location.resolved {
        case .standard:
            preconditionFailure("resolved locations are never .standard")
        case .userDefaults(let suiteName):
            let defaults = suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
            let dictionary = defaults.dictionary(forKey: appleConfigurationKey) ?? [:]
            let settings = settings(in: dictionary, origin: "managed app configuration")
            return Reading(sources: [(appleConfigurationKey, settings)], problems: [])
        case .files(let urls):
            var reading = Reading(sources: [], problems: [])
            for url in urls {
                do throws(PreferencesError) {
                    let dictionary = try dictionary(in: url) ?? [:]
                    reading.sources.append(
                        (url.path, settings(in: dictionary, origin: "managed settings file '\(url.path)'")))
                } catch {
                    reading.problems.append(error)
                    reading.sources.append((url.path, nil))
                }
            }
            return reading
        }
    }

    /// The settings of a file; `nil` if there is no file.
    private static func dictionary(in url: URL) throws(PreferencesError) -> [String: Any]? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch CocoaError.fileReadNoSuchFile {
            return nil
        } catch {
            throw PreferencesError(.unreadableSettings(path: url.path, reason: describe(error)))
        }
        let object: Any?
        if url.pathExtension == "json" {
            object = try? JSONSerialization.jsonObject(with: data)
        } else {
            object = try? PropertyListSerialization.propertyList(from: data, format: nil)
        }
        guard let dictionary = object as? [String: Any] else {
            let format = url.pathExtension == "json" ? "a JSON object" : "a property-list dictionary"
            throw PreferencesError(.unreadableSettings(path: url.path, reason: "it is not \(format)"))
        }
        return dictionary
    }

    private static func settings(in dictionary: [String: Any], origin: String) -> [NamedOverride] {
        dictionary.sorted { $0.key < $1.key }.map { name, object in
            let json = OverrideText.json(for: object)
            let text = json.map { String(decoding: $0, as: UTF8.self) } ?? "\(object)"
            return NamedOverride(
                name: name,
                value: OverrideValue(source: .managed, origin: origin, text: text, readings: json.map { [$0] } ?? [])
            )
        }
    }
}
