// A stand-in for the declarations of Foundation's `NSUbiquitousKeyValueStore` that the library
// uses, with the signatures Apple's documentation gives them: compiled into the Preferences module
// by `Scripts/typecheck-apple-blocks` with `-D PREFERENCES_APPLE_STAND_INS`, so that a Linux
// machine can type-check the Apple-only block of `SyncKeyValueStore.swift`. Never linked or run:
// every body traps.

public import Foundation

/// `class NSUbiquitousKeyValueStore: NSObject`.
open class NSUbiquitousKeyValueStore: NSObject {
    /// `class var default: NSUbiquitousKeyValueStore { get }`.
    open class var `default`: NSUbiquitousKeyValueStore { fatalError("a stand-in") }

    /// `class let didChangeExternallyNotification: NSNotification.Name`, a `class let` only an
    /// imported constant can be.
    public static let didChangeExternallyNotification = NSNotification.Name("stand-in")

    /// `func data(forKey aKey: String) -> Data?`.
    open func data(forKey aKey: String) -> Data? { fatalError("a stand-in") }

    /// `func set(_ anObject: Any?, forKey aKey: String)`.
    open func set(_ anObject: Any?, forKey aKey: String) { fatalError("a stand-in") }

    /// `func set(_ aData: Data?, forKey aKey: String)`.
    open func set(_ aData: Data?, forKey aKey: String) { fatalError("a stand-in") }

    /// `func set(_ aString: String?, forKey aKey: String)`.
    open func set(_ aString: String?, forKey aKey: String) { fatalError("a stand-in") }

    /// `var dictionaryRepresentation: [String : Any] { get }`.
    open var dictionaryRepresentation: [String: Any] { fatalError("a stand-in") }

    /// `func synchronize() -> Bool`.
    open func synchronize() -> Bool { fatalError("a stand-in") }
}

// Not `Sendable`: the stricter of the two, since Apple's documentation does not say.
@available(*, unavailable)
extension NSUbiquitousKeyValueStore: Sendable {}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// `let NSUbiquitousKeyValueStoreChangeReasonKey: String`.
public let NSUbiquitousKeyValueStoreChangeReasonKey = "stand-in"

// swift-format-ignore: AlwaysUseLowerCamelCase
/// `var NSUbiquitousKeyValueStoreServerChange: Int { get }`.
public var NSUbiquitousKeyValueStoreServerChange: Int { fatalError("a stand-in") }

// swift-format-ignore: AlwaysUseLowerCamelCase
/// `var NSUbiquitousKeyValueStoreInitialSyncChange: Int { get }`.
public var NSUbiquitousKeyValueStoreInitialSyncChange: Int { fatalError("a stand-in") }

// swift-format-ignore: AlwaysUseLowerCamelCase
/// `var NSUbiquitousKeyValueStoreQuotaViolationChange: Int { get }`.
public var NSUbiquitousKeyValueStoreQuotaViolationChange: Int { fatalError("a stand-in") }

// swift-format-ignore: AlwaysUseLowerCamelCase
/// `var NSUbiquitousKeyValueStoreAccountChange: Int { get }`.
public var NSUbiquitousKeyValueStoreAccountChange: Int { fatalError("a stand-in") }
