/// A committed change that observers are told about: the keys it changed, and where it came from.
public struct PreferencesChange: Sendable, Hashable {
    /// The keys whose values changed, among those the observer watches, in commit order.
    public let keys: [StoredKey]

    /// Where the change was made.
    public let origin: ChangeOrigin

    /// The identifier its writer gave the transaction, if any, with
    /// ``PreferencesStore/transaction(durability:writeIdentifier:_:)``.
    ///
    /// It reaches observers in every process, so a sync loop can recognise and skip its own writes.
    public let writeIdentifier: String?
}

/// Where a committed change was made.
public enum ChangeOrigin: Sendable, Hashable {
    /// This store committed it.
    case thisStore

    /// Another store on the same file committed it: in another process, or in this one.
    case elsewhere

    /// A migration committed it, in this process or another.
    case migration(id: String)

    /// An administrator changed a managed setting: the key's value now comes from another layer,
    /// and nothing stored changed. See ``OverrideLayer/managed``.
    case managedSettings

    /// ``PreferencesSync`` applied a change that another device made, in this process or another.
    ///
    /// `device` is the other device's identifier (``PreferencesSync/deviceID``).
    case sync(device: String)
}

extension ChangeOrigin {
    /// The origin a record's cause names, if it names one: a migration, or another device.
    init?(_ record: Record) {
        switch record.cause {
        case .migration: self = .migration(id: record.subject ?? "")
        case .sync: self = .sync(device: record.subject ?? "")
        case .write, .transaction, .import, .reset, .tool, .restore: return nil
        }
    }
}

/// A change as the store records it for delivery: the new stored values, and where they came from.
///
/// A class, so that queueing and delivering it copies one reference: as a struct, its arrays and
/// optional string would be copied and destroyed through value witnesses on every write.
final class CommittedChange: Sendable {
    let changes: [EntryChange]
    let origin: ChangeOrigin
    let writeIdentifier: String?

    init(changes: [EntryChange], origin: ChangeOrigin, writeIdentifier: String?) {
        self.changes = changes
        self.origin = origin
        self.writeIdentifier = writeIdentifier
    }
}
