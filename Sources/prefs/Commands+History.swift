import Foundation
import Preferences

extension Commands {
    mutating func log() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        if invocation.clear {
            try performing { try store.clearHistory() }
            output.done("cleared the history of \(store.fileURL?.path ?? "")", ["cleared": true])
            return .success
        }
        let key = try invocation.operands.first.map { (text) throws(ToolError) in try invocation.key(text) }
        let since = try invocation.since.map { (text) throws(ToolError) in try Self.date(text) }
        var entries: [HistoryEntry] = []
        try performing { entries = try store.history(since: since) }
        if let key {
            entries = entries.filter { $0.key == key }
        }
        // The value before each change: the next older change of the same key, if it was kept.
        var before: [String?] = Array(repeating: nil, count: entries.count)
        var isKnown = Array(repeating: false, count: entries.count)
        var last: [StoredKey: Int] = [:]
        for index in entries.indices.reversed() {
            if let older = last[entries[index].key] {
                before[index] = entries[older].valueDescription
                isKnown[index] = true
            }
            last[entries[index].key] = index
        }
        var numbers: [StoredKey: Int] = [:]
        let lines = entries.enumerated().map { index, entry in
            numbers[entry.key, default: 0] += 1
            return (number: numbers[entry.key] ?? 1, entry: entry, before: before[index], isKnown: isKnown[index])
        }
        output.history(lines)
        return .success
    }

    mutating func restore() throws(ToolError) -> ExitCode {
        let store = try existingStore()
        let key = try invocation.key(try operand(0, "a KEY"))
        guard let text = invocation.to, let number = Int(text), number >= 1 else {
            throw ToolError(.usage, "'prefs restore' needs --to N, N a change's number in 'prefs log STORE \(key)'.")
        }
        var entries: [HistoryEntry] = []
        try performing { entries = try store.history().filter { $0.key == key } }
        guard number <= entries.count else {
            throw ToolError(
                .notFound, "'\(key)' has \(entries.count) changes in the history; there is no change \(number).")
        }
        let entry = entries[number - 1]
        try performing { try store.restoreStoredValue(of: entry) }
        let value = entry.valueDescription ?? "(removed)"
        output.done(
            "\(key) = \(value) (restored change \(number))", ["key": "\(key)", "restored": number, "value": value])
        return .success
    }

    /// A date in ISO 8601: a day, or a day and a time.
    private static func date(_ text: String) throws(ToolError) -> Date {
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        let moment = ISO8601DateFormatter()
        let precise = ISO8601DateFormatter()
        precise.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        guard let date = moment.date(from: text) ?? precise.date(from: text) ?? day.date(from: text) else {
            throw ToolError(.usage, "'\(text)' is not a date: write it as 2026-11-27 or 2026-11-27T09:30:00Z.")
        }
        return date
    }
}
