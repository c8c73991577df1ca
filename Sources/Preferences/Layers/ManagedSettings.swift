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

    /// What reading one file or dictionary found.
    struct Source {
        /// The file's path, or the dictionary's key.
        var name: String
        /// Its settings; `nil` when it did not read.
        var settings: [NamedOverride]?
        /// Why it did not read, for a message: "it is not a JSON object".
        var failure: String?
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

    /// Reads every setting at a location, source by source, the most important first.
    static func read(_ location: Location) -> [Source] {
        switch location.resolved {
        case .standard:
            preconditionFailure("resolved locations are never .standard")
        case .userDefaults(let suiteName):
            let defaults = suiteName.flatMap(UserDefaults.init(suiteName:)) ?? .standard
            let dictionary = defaults.dictionary(forKey: appleConfigurationKey) ?? [:]
            let settings = settings(in: dictionary, origin: "managed app configuration")
            return [Source(name: appleConfigurationKey, settings: settings)]
        case .files(let urls):
            return urls.map { url in
                do throws(Unreadable) {
                    let dictionary = try dictionary(in: url) ?? [:]
                    return Source(
                        name: url.path,
                        settings: settings(in: dictionary, origin: "managed settings file '\(url.path)'"))
                } catch {
                    return Source(name: url.path, failure: error.reason)
                }
            }
        }
    }

    /// Why a file does not read.
    private struct Unreadable: Error {
        var reason: String
    }

    /// The settings of a file; `nil` if there is no file.
    private static func dictionary(in url: URL) throws(Unreadable) -> [String: Any]? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch CocoaError.fileReadNoSuchFile {
            return nil
        } catch {
            throw Unreadable(reason: describe(error))
        }
        let object: Any?
        if url.pathExtension == "json" {
            object = try? JSONSerialization.jsonObject(with: data)
        } else {
            object = try? PropertyListSerialization.propertyList(from: data, format: nil)
        }
        guard let dictionary = object as? [String: Any] else {
            let format = url.pathExtension == "json" ? "a JSON object" : "a property-list dictionary"
            throw Unreadable(reason: "it is not \(format)")
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
