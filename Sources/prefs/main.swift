import Foundation
import Preferences

// prefs: a command-line tool to read, write, check and repair Preferences stores. See Help.tool,
// or run `prefs --help`.

func run() -> ExitCode {
    do throws(ToolError) {
        let invocation = try Invocation(Array(CommandLine.arguments.dropFirst()))
        if invocation.help {
            print(Help.commands[invocation.command] ?? Help.tool)
            return .success
        }
        var commands = Commands(invocation: invocation, output: Output(json: invocation.json))
        switch invocation.command {
        case "read": return try commands.read()
        case "write": return try commands.write()
        case "delete": return try commands.delete()
        case "keys": return try commands.keys()
        case "export": return try commands.export()
        case "import": return try commands.import()
        case "verify": return try commands.verify()
        case "repair": return try commands.repair()
        case "ledger": return try commands.ledger()
        case "compact": return try commands.compact()
        case "watch": try commands.watch()
        case "schema": return try commands.schema()
        case "log": return try commands.log()
        case "restore": return try commands.restore()
        case "sync": return try commands.sync()
        default:
            throw ToolError(.usage, "unknown command '\(invocation.command)'. Run 'prefs --help' for the commands.")
        }
    } catch {
        FileHandle.standardError.write(Data("prefs: \(error.message)\n".utf8))
        return error.code
    }
}

exit(run().rawValue)
