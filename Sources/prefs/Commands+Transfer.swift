import Foundation
import Preferences

extension Commands {
    /// Writes every entry, as JSON (typed, for `import`) or as a property list (as `UserDefaults` has it).
    mutating func export() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let entries = store.storedEntries()
        switch invocation.format ?? "json" {
        case "json":
            output.raw(
                Output.jsonText(
                    entries.map { entry in
                        ValueText.exported(entry.value).merging(["key": entry.key.description]) { $1 }
                    }
                )
            )
        case "plist":
            var dictionary: [String: Any] = [:]
            for (key, value) in entries {
                if !Self.propertyListsKeepNegativeZero, value.holdsNegativeZero {
                    throw ToolError(
                        .refused,
                        "'\(key)' holds -0.0, which this platform's Foundation writes in a property list as 0.0. "
                            + "Nothing was written; use --format json, which keeps every bit.")
                }
                let name = key.namespace == .global ? key.name : key.description
                // As a person reading a property list expects: its own dates and numbers.
                dictionary[name] = PropertyListValue.object(for: value, envelopes: false)
            }
            guard let data = try? PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0)
            else {
                throw ToolError(.storeFailed, "the entries cannot be written as a property list.")
            }
            output.raw(String(decoding: data, as: UTF8.self))
        case let other:
            throw ToolError(.usage, "unknown format '\(other)': use json or plist.")
        }
        return .success
    }

    /// Whether Foundation's property-list writer keeps the sign of `-0.0`: found by trying, since
    /// Foundation on Linux drops it.
    static let propertyListsKeepNegativeZero: Bool = {
        guard let data = try? PropertyListSerialization.data(fromPropertyList: [-0.0], format: .xml, options: 0),
            let read = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [Double]
        else { return false }
        return read.first?.sign == .minus
    }()

    /// Reads a file that `export` wrote, or a property list as `UserDefaults` writes it, and writes
    /// every entry in one commit: all of them, or, if any does not read, none.
    mutating func `import`() throws(ToolError) -> ExitCode {
        let url = try invocation.storeURL()
        let file = URL(fileURLWithPath: try operand(0, "a FILE"))
        guard let data = try? Data(contentsOf: file) else { throw ToolError(.usage, "cannot read '\(file.path)'.") }
        let entries = try Self.entries(in: data, file: file.path, invocation: invocation)
        let store = try open(url)
        try performing { try store.writeStoredValues(entries.map { ($0.key, $0.value) }) }
        output.done("imported \(entries.count) entries from \(file.path)", ["imported": entries.count])
        return .success
    }

    private static func entries(
        in data: Data,
        file: String,
        invocation: Invocation
    ) throws(ToolError) -> [(key: StoredKey, value: StoredValue?)] {
        if let array = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] {
            return try array.map { (object: [String: Any]) throws(ToolError) -> (key: StoredKey, value: StoredValue?) in
                guard let text = object["key"] as? String else {
                    throw ToolError(.usage, "'\(file)' has an entry without a key.")
                }
                let key = try invocation.key(text)
                do throws(ValueText.Failure) {
                    return (key, try ValueText.value(fromExported: object))
                } catch {
                    throw ToolError(.usage, error.message)
                }
            }
        }
        guard let dictionary = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else {
            throw ToolError(.usage, "'\(file)' is neither a prefs export nor a property list.")
        }
        return try dictionary.sorted { $0.key < $1.key }.map { (name, object) throws(ToolError) in
            // As the UserDefaults backend names them: plain names are global, others namespace:name.
            let key = try invocation.key(name.contains(":") ? name : "global:\(name)")
            guard let value = PropertyListValue.candidates(for: object).first else {
                throw ToolError(.usage, "'\(name)' in '\(file)' holds a \(type(of: object)), which cannot be stored.")
            }
            return (key, value)
        }
    }

    /// Prints each change other processes, or this one, make, until interrupted.
    ///
    /// The main thread then parks in `dispatchMain()` rather than awaiting a stream: an `async`
    /// main keeps a once-a-second timer running on Linux, and an idle watch should not wake at all.
    mutating func watch() throws(ToolError) -> Never {
        let store = try existingStore()
        let only = try invocation.operands.first.map { (text: String) throws(ToolError) in try invocation.key(text) }
        output.line("Watching \(store.fileURL?.path ?? ""); press Ctrl-C to stop.")
        let output = output
        let observation = store.observeEveryKey { change in
            for key in change.keys where only == nil || key == only {
                let value = store.storedValue(at: key)
                output.change(key: key, value: value, origin: change.origin, writeIdentifier: change.writeIdentifier)
            }
        }
        withExtendedLifetime(observation) { dispatchMain() }
    }
}

extension StoredValue {
    /// Whether the value is `-0.0`, or an array or dictionary holding one.
    fileprivate var holdsNegativeZero: Bool {
        switch self {
        case .double(let number): number == 0 && number.sign == .minus
        case .float(let number): number == 0 && number.sign == .minus
        case .array(let items): items.contains { $0.holdsNegativeZero }
        case .dictionary(let items): items.values.contains { $0.holdsNegativeZero }
        default: false
        }
    }
}
