// A stand-in for the few SwiftUI declarations the package's Apple-only code uses, with the
// signatures Apple's documentation gives them, so that a Linux machine can type-check that code
// (`Scripts/typecheck-apple-blocks`). Never linked or run: every body traps.

/// `@MainActor @preconcurrency protocol View`.
@MainActor @preconcurrency
public protocol View {
    /// The type of the view's body.
    associatedtype Body: View
    /// The view's content.
    @MainActor @preconcurrency var body: Body { get }
}

extension Never: View {
    /// No body: `Never` ends the chain of bodies, as in SwiftUI.
    public var body: Never { fatalError() }
}

/// What a modifier returns, standing in for SwiftUI's `ModifiedContent`.
public struct ModifiedView: View {
    /// No body.
    public var body: Never { fatalError() }
}

extension View {
    /// `nonisolated func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some View`.
    nonisolated public func environment<V>(_ keyPath: WritableKeyPath<EnvironmentValues, V>, _ value: V) -> some View {
        ModifiedView()
    }
}

/// `protocol PreferenceKey`, SwiftUI's own: here so that an unqualified `PreferenceKey` in the
/// package's SwiftUI code is ambiguous on Linux, as it is on Apple platforms.
public protocol PreferenceKey {
    /// The type of the preference's value.
    associatedtype Value
    /// The value when no view set one.
    static var defaultValue: Value { get }
    /// Combines a sequence of values into one.
    static func reduce(value: inout Value, nextValue: () -> Value)
}

/// `protocol DynamicProperty`, with `mutating func update()` and a default implementation.
public protocol DynamicProperty {
    /// Updates the property before its view's body is computed.
    mutating func update()
}

extension DynamicProperty {
    /// Does nothing, as SwiftUI's default does.
    public mutating func update() {}
}

/// `protocol EnvironmentKey`: `associatedtype Value`, `static var defaultValue: Self.Value { get }`.
public protocol EnvironmentKey {
    /// The type of the value.
    associatedtype Value
    /// The value when none was set.
    static var defaultValue: Value { get }
}

/// `struct EnvironmentValues`, read and written by key type.
public struct EnvironmentValues {
    /// The value of a key.
    public subscript<K: EnvironmentKey>(key: K.Type) -> K.Value {
        get { fatalError() }
        set { fatalError() }
    }
}

/// `@frozen @propertyWrapper struct Environment<Value>`.
@propertyWrapper
public struct Environment<Value>: DynamicProperty {
    /// `init(_ keyPath: KeyPath<EnvironmentValues, Value>)`.
    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {}
    /// `var wrappedValue: Value { get }`.
    public var wrappedValue: Value { fatalError() }
}

/// `@frozen @propertyWrapper @dynamicMemberLookup struct Binding<Value>`, `Sendable` where `Value` is.
@propertyWrapper
public struct Binding<Value>: DynamicProperty {
    /// `@preconcurrency init(get: @escaping @isolated(any) @Sendable () -> Value,
    /// set: @escaping @isolated(any) @Sendable (Value) -> Void)`.
    @preconcurrency
    public init(
        get: @escaping @isolated(any) @Sendable () -> Value,
        set: @escaping @isolated(any) @Sendable (Value) -> Void
    ) {}
    /// The value the binding reads and writes.
    public var wrappedValue: Value {
        get { fatalError() }
        nonmutating set { fatalError() }
    }
}

extension Binding: @unchecked Sendable where Value: Sendable {}
