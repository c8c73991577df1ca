import Foundation
import Preferences

extension Commands {
    /// Runs one round of sync of the keys the app last synced the store with, through a folder.
    mutating func sync() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let folder = URL(fileURLWithPath: try operand(0, "a FOLDER"), isDirectory: true)
        let report: SyncReport
        do {
            report = try PreferencesSync(syncingRecordedKeysOf: store, folder: folder).synchronize()
        } catch let error as PreferencesError where error.code == .notSyncable {
            throw ToolError(.notFound, "\(error)")
        } catch {
            throw ToolError(.storeFailed, "\(error)")
        }
        for problem in report.problems {
            FileHandle.standardError.write(Data("prefs: \(problem)\n".utf8))
        }
        let received = report.received.map(\.description)
        let sent = report.sent.map(\.description)
        output.done(
            "received \(received.count)\(Self.list(received)), sent \(sent.count)\(Self.list(sent))",
            ["received": received, "sent": sent, "problems": report.problems.map(\.description)])
        return .success
    }

    private static func list(_ keys: [String]) -> String {
        keys.isEmpty ? "" : " (\(keys.joined(separator: ", ")))"
    }
}
