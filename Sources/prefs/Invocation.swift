import Foundation
import Preferences

/// What `prefs` was asked to do: a command, its operands, and its options.
struct Invocation {
    var command: String
    var operands: [String] = []
    var json = false
    var force = false
    var help = false
    var standard: String?
    var namespace: String?
    var type: String?
    var format: String?
    var since: String?
    var to: String?
    var clear = false

    /// Options that take a value, and the flags that do not.
    private static let valued: Set<String> = ["--standard", "--namespace", "--type", "--format", "--since", "--to"]
    private static let flags: Set<String> = ["--json", "--force", "--clear", "--help", "-h"]

    init(_ arguments: [String]) throws(ToolError) {
        var rest = arguments[...]
        guard let command = rest.popFirst() else {
            throw ToolError(.usage, "no command given. Run 'prefs --help' for the commands.")
        }
        self.command = command
        if command == "--help" || command == "-h" || command == "help" {
            self.command = rest.popFirst() ?? "help"
            help = true
        }
        while let argument = rest.popFirst() {
            if Self.flags.contains(argument) {
                switch argument {
                case "--json": json = true
                case "--force": force = true
                case "--clear": clear = true
                default: help = true
                }
            } else if Self.valued.contains(argument) {
                guard let value = rest.popFirst() else { throw ToolError(.usage, "\(argument) needs a value.") }
                switch argument {
                case "--standard": standard = value
                case "--namespace": namespace = value
                case "--type": type = value
                case "--since": since = value
                case "--to": to = value
                default: format = value
                }
            } else if argument.hasPrefix("--") {
                throw ToolError(.usage, "unknown option '\(argument)'. Run 'prefs \(command) --help'.")
            } else {
                operands.append(argument)
            }
        }
    }

    /// The store's file: the first operand, or the standard store of `--standard IDENTIFIER`.
    mutating func storeURL() throws(ToolError) -> URL {
        if let standard {
            return PreferencesStore.standardFileURL(identifier: standard)
        }
        guard !operands.isEmpty else {
            throw ToolError(.usage, "'prefs \(command)' needs a STORE path, or --standard IDENTIFIER.")
        }
        return URL(fileURLWithPath: operands.removeFirst())
    }

    /// A key written `namespace:name`, or a plain name in `--namespace`, or else the app namespace.
    ///
    /// `app` is the app namespace and `global` the global one; any other namespace is custom.
    func key(_ text: String) throws(ToolError) -> StoredKey {
        let namespaceText: String
        let name: String
        if let separator = text.firstIndex(of: ":") {
            namespaceText = String(text[..<separator])
            name = String(text[text.index(after: separator)...])
        } else {
            namespaceText = namespace ?? "app"
            name = text
        }
        guard !name.isEmpty, !name.contains(":") else {
            throw ToolError(.usage, "'\(text)' is not a key: write it as namespace:name, such as app:theme.")
        }
        let key = StoredKey(name, in: Self.namespace(namespaceText))
        if let rule = key.ruleBroken {
            throw ToolError(.usage, "'\(text)' is not a key a program can declare: \(rule).")
        }
        return key
    }

    static func namespace(_ text: String) -> PreferenceNamespace {
        switch text {
        case "app": .app
        case "global", "": .global
        default: .custom(text)
        }
    }
}

/// How `prefs` ends, as its exit status.
enum ExitCode: Int32 {
    /// The command did what was asked; `verify` found the store whole.
    case success = 0
    /// `verify` found damage, or `read` found no value for the key.
    case notFound = 1
    /// The command line was wrong: an unknown command or option, a bad key, a value that does not
    /// parse as its type.
    case usage = 2
    /// The store could not be opened, read or written: no such store, damage, a file-system error.
    case storeFailed = 3
    /// The command was refused: a write that would change an entry's type, without `--force`.
    case refused = 4
}

/// A failure that ends `prefs` with a message on standard error and an exit status.
struct ToolError: Error {
    let code: ExitCode
    let message: String

    init(_ code: ExitCode, _ message: String) {
        self.code = code
        self.message = message
    }
}
