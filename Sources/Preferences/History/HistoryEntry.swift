public import Foundation

/// A change the store's history keeps: the key, what it stored, when, and where it came from.
///
/// ``PreferencesStore/history(since:)`` returns these for every key; ``PreferencesStore/history(for:)``
/// wraps each in a ``KeyHistoryEntry`` with the value decoded as the key's type. See <doc:History>.
public struct HistoryEntry: Sendable, Hashable {
    /// The key the change was made to.
    public let key: StoredKey

    /// The value the change stored, as the `prefs` tool writes it; `nil` when it removed the value.
    public let valueDescription: String?

    /// When the change was committed, by the clock of the device that made it; `nil` for a change
    /// written by version 0.1 of the library, which recorded no time.
    public let date: Date?

    /// Why the change was made.
    public let cause: HistoryCause

    /// The name of the program that made the change, as it was started; `nil` if unknown.
    public let program: String?

    /// The id of the process that made the change; `nil` if unknown.
    public let processID: Int32?

    /// The identifier the writer gave its transaction, if any, with
    /// ``PreferencesStore/transaction(durability:writeIdentifier:_:)``.
    public let writeIdentifier: String?

    /// What the change stored, for ``PreferencesStore/restore(_:to:)``.
    let stored: StoredValue?

    init(key: StoredKey, stored: StoredValue?, record: HistoryRecord) {
        self.key = key
        self.stored = stored
        valueDescription = stored.map(ValueText.text)
        date = record.record.stamp.time.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        cause = HistoryCause(record.record)
        program = record.program
        processID = record.record.stamp.processID
        writeIdentifier = record.record.writeIdentifier
    }

    /// Whether two entries record the same change: the same key, value, time, cause and writer.
    public static func == (lhs: HistoryEntry, rhs: HistoryEntry) -> Bool {
        lhs.key == rhs.key && lhs.stored == rhs.stored && lhs.date == rhs.date && lhs.cause == rhs.cause
            && lhs.program == rhs.program && lhs.processID == rhs.processID
            && lhs.writeIdentifier == rhs.writeIdentifier
    }

    /// Hashes the entry's key, value, time and process.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(key)
        hasher.combine(valueDescription)
        hasher.combine(date)
        hasher.combine(processID)
    }
}

/// A change to one key that the store's history keeps, its value decoded as the key's type.
public struct KeyHistoryEntry<Value: Sendable>: Sendable {
    /// What the change did to the key's value.
    public let value: HistoryValue<Value>

    /// The change as the history keeps it: when, why, and by which program.
    public let entry: HistoryEntry

    /// When the change was committed, if known (see ``HistoryEntry/date``).
    public var date: Date? { entry.date }

    /// Why the change was made.
    public var cause: HistoryCause { entry.cause }
}

/// What a change in the history did to a key's value.
public enum HistoryValue<Value: Sendable>: Sendable {
    /// The change stored this value.
    case value(Value)

    /// The change removed the stored value: the key read its default after it.
    case removed

    /// The change stored a value that does not read as the key's type (another type wrote it, or
    /// the key's type changed since), shown as the `prefs` tool writes it.
    case otherType(String)
}

/// Why a change that the history keeps was made.
public enum HistoryCause: Sendable, Hashable {
    /// A write of one key: a subscript, ``PreferencesStore/setValue(_:for:)`` or ``PreferencesStore/removeValue(for:)``.
    case write

    /// A transaction or an ``PreferencesStore/update(_:_:)``.
    case transaction

    /// A migration, with its identifier in the ledger.
    case migration(id: String)

    /// ``PreferencesStore/import(_:)``.
    case `import`

    /// ``PreferencesStore/removeAll(in:)``.
    case reset

    /// The `prefs` tool.
    case tool

    /// ``PreferencesStore/restore(_:to:)``.
    case restore

    /// ``PreferencesSync``, applying a change another device made; `device` is its identifier.
    case sync(device: String)

    init(_ record: Record) {
        switch record.cause {
        case .write: self = .write
        case .transaction: self = .transaction
        case .migration: self = .migration(id: record.subject ?? "")
        case .sync: self = .sync(device: record.subject ?? "")
        case .import: self = .import
        case .reset: self = .reset
        case .tool: self = .tool
        case .restore: self = .restore
        }
    }
}
