// Stand-ins for the declarations of Foundation's `NSUbiquitousKeyValueStore` that the library
// uses, with the signatures Apple documents: compiled into the Preferences module by
// `Scripts/typecheck-apple-blocks` with `-D PREFERENCES_APPLE_STAND_INS`, to type-check the
// Apple-only block of `SyncKeyValueStore.swift` on Linux. Never built otherwise; nothing runs.

public import Foundation

open class NSUbiquitousKeyValueStore: NSObject {
    open class var `default`: NSUbiquitousKeyValueStore { fatalError("a stand-in") }
    // Apple's is a `class let`, which Swift declares only for imported constants.
    public static let didChangeExternallyNotification = NSNotification.Name("stand-in")
    open func data(forKey aKey: String) -> Data? { fatalError("a stand-in") }
    open func set(_ anObject: Any?, forKey aKey: String) {}
    open func set(_ aData: Data?, forKey aKey: String) {}
    open func set(_ aString: String?, forKey aKey: String) {}
    open var dictionaryRepresentation: [String: Any] { fatalError("a stand-in") }
    open func synchronize() -> Bool { fatalError("a stand-in") }
}

// Not `Sendable`: the stricter of the two, since Apple's documentation does not say.
@available(*, unavailable)
extension NSUbiquitousKeyValueStore: Sendable {}

public let NSUbiquitousKeyValueStoreChangeReasonKey = "stand-in"
public let NSUbiquitousKeyValueStoreChangedKeysKey = "stand-in"
public var NSUbiquitousKeyValueStoreServerChange: Int { 0 }
public var NSUbiquitousKeyValueStoreInitialSyncChange: Int { 1 }
public var NSUbiquitousKeyValueStoreQuotaViolationChange: Int { 2 }
public var NSUbiquitousKeyValueStoreAccountChange: Int { 3 }
