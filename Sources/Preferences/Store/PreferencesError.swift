/// An error that a store throws or reports: what went wrong, and the key or file it concerns.
///
/// Compare ``code`` to tell errors apart, and read ``key`` or ``filePath`` to see where:
///
/// ```swift
/// do {
///     let count = try store.value(for: .launchCount)
/// } catch let error as PreferencesError where error.code == .typeMismatch {
///     print(error)  // names the key, what was stored and what was expected
/// }
/// ```
///
/// Errors from a subscript, which cannot throw, reach ``PreferencesStore/errors`` instead.
public struct PreferencesError: Error, Hashable, Sendable {
    let detail: Detail

    /// What kind of error this is.
    public var code: Code { detail.code }

    /// The key the error concerns, if it concerns one.
    public var key: StoredKey? { detail.key }

    /// The path of the file the error concerns, if it concerns one.
    public var filePath: String? { detail.filePath }

    init(_ detail: Detail) {
        self.detail = detail
    }
}

extension PreferencesError {
    /// A kind of ``PreferencesError``.
    ///
    /// New codes may be added in later versions, so a `switch` over codes needs a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short name for the code, such as `typeMismatch`.
        public let description: String

        private init(_ description: String) {
            self.description = description
        }

        /// The stored value is of another type than the key's, or does not fit in it.
        ///
        /// The stored value was left untouched.
        public static let typeMismatch = Code("typeMismatch")

        /// The stored value has the right kind but does not decode as the key's type.
        ///
        /// A `Codable` value whose decoder threw, or a raw value with no matching case. The stored
        /// value was left untouched.
        public static let decodingFailed = Code("decodingFailed")

        /// The value could not be encoded for storage; nothing was written.
        public static let encodingFailed = Code("encodingFailed")

        /// One key was used with two different value types in this process.
        public static let conflictingValueTypes = Code("conflictingValueTypes")

        /// The store's file is damaged.
        ///
        /// What could be verified was loaded, and a copy of the damaged file kept beside it.
        public static let damagedFile = Code("damagedFile")

        /// The store's file was written by a newer version of this library.
        ///
        /// The file was left untouched.
        public static let unsupportedFormatVersion = Code("unsupportedFormatVersion")

        /// An operation on the file system failed, such as writing, syncing or renaming a file.
        public static let fileOperationFailed = Code("fileOperationFailed")

        /// The store cannot accept writes, because its file could not be opened or its damaged file
        /// could not be preserved before being replaced.
        public static let storeUnavailable = Code("storeUnavailable")

        /// A migration could not run: its transform threw, a value it read did not decode, or
        /// both keys of a rename held values and its policy was to fail.
        ///
        /// Nothing the migration would have changed was changed, and it was not recorded as applied:
        /// it runs again the next time migrations run.
        public static let migrationFailed = Code("migrationFailed")

        /// The key's value is forced by a managed setting, so the app cannot change it.
        ///
        /// Nothing was written. ``PreferencesStore/isForced(_:)`` tells beforehand.
        public static let valueForced = Code("valueForced")

        /// The value breaks one of the key's rules (see ``PreferenceRule``).
        ///
        /// A write of it wrote nothing; a stored value was left untouched, and the key read its
        /// default; an override layer's value was skipped.
        public static let invalidValue = Code("invalidValue")

        /// The data to import is not an export, or one of its entries does not read.
        ///
        /// Nothing was imported. See ``PreferencesStore/import(_:)``.
        public static let importFailed = Code("importFailed")

        /// A key cannot sync, or there is nothing to sync.
        ///
        /// The key is declared ``PreferenceKey/withoutHistory()``, or no keys to sync were given or
        /// recorded. Nothing was synced. See ``PreferencesSync``.
        public static let notSyncable = Code("notSyncable")

        /// A change could not be synced through iCloud's key-value store without breaking one of
        /// Apple's limits, or iCloud reported the app's entries over them.
        ///
        /// The limits: an entry's name of at most 64 bytes, at most 1,024 entries, and a megabyte in
        /// all. The store keeps its values; the change stays on the device and is offered again at
        /// later rounds. See <doc:Syncing>.
        public static let syncLimitExceeded = Code("syncLimitExceeded")
    }
}

extension PreferencesError: CustomStringConvertible {
    /// A sentence saying what went wrong, where, and what became of the data.
    public var description: String { detail.description }
}
