// A stand-in for the few Combine declarations the package's Apple-only code uses, with the
// signatures Apple's documentation gives them, so that a Linux machine can type-check that code
// (`Scripts/typecheck-apple-blocks`). Never linked or run: every body traps.

/// `protocol Cancellable`.
public protocol Cancellable {
    /// Cancels the activity.
    func cancel()
}

/// `protocol Subscription: Cancellable`.
public protocol Subscription: Cancellable {}

/// `enum Subscribers`.
public enum Subscribers {
    /// `enum Completion<Failure> where Failure: Error`.
    public enum Completion<Failure: Error> {
        /// Finished normally.
        case finished
        /// Finished with an error.
        case failure(Failure)
    }

    /// `struct Demand`.
    public struct Demand {}
}

/// `protocol Publisher<Output, Failure>`.
public protocol Publisher<Output, Failure> {
    /// The type of the values published.
    associatedtype Output
    /// The type of the error published.
    associatedtype Failure: Error
}

/// `protocol Subject<Output, Failure>: AnyObject, Publisher`.
public protocol Subject<Output, Failure>: AnyObject, Publisher {
    /// Sends a value to the subscribers.
    func send(_ value: Output)
}

/// `struct AnyPublisher<Output, Failure> where Failure: Error`.
public struct AnyPublisher<Output, Failure: Error>: Publisher {}

/// `struct Deferred<DeferredPublisher> where DeferredPublisher: Publisher`.
public struct Deferred<DeferredPublisher: Publisher>: Publisher {
    /// The deferred publisher's values.
    public typealias Output = DeferredPublisher.Output
    /// The deferred publisher's error.
    public typealias Failure = DeferredPublisher.Failure
    /// `init(createPublisher: @escaping () -> DeferredPublisher)`.
    public init(createPublisher: @escaping () -> DeferredPublisher) {}
}

/// `final class CurrentValueSubject<Output, Failure> where Failure: Error`.
public final class CurrentValueSubject<Output, Failure: Error>: Subject {
    /// `init(_ value: Output)`.
    public init(_ value: Output) {}
    /// `func send(_ input: Output)`.
    public func send(_ input: Output) {}
}

/// `enum Publishers`.
public enum Publishers {
    /// `struct CompactMap<Upstream, Output> where Upstream: Publisher`.
    public struct CompactMap<Upstream: Publisher, Output>: Publisher {
        /// The upstream's error.
        public typealias Failure = Upstream.Failure
    }

    /// `struct HandleEvents<Upstream> where Upstream: Publisher`.
    public struct HandleEvents<Upstream: Publisher>: Publisher {
        /// The upstream's values.
        public typealias Output = Upstream.Output
        /// The upstream's error.
        public typealias Failure = Upstream.Failure
    }
}

extension Publisher {
    /// `func compactMap<T>(_ transform: @escaping (Self.Output) -> T?) -> Publishers.CompactMap<Self, T>`.
    public func compactMap<T>(_ transform: @escaping (Output) -> T?) -> Publishers.CompactMap<Self, T> {
        fatalError()
    }

    /// `func handleEvents(receiveSubscription:receiveOutput:receiveCompletion:receiveCancel:receiveRequest:)
    /// -> Publishers.HandleEvents<Self>`, every closure optional and `nil` by default.
    public func handleEvents(
        receiveSubscription: ((any Subscription) -> Void)? = nil,
        receiveOutput: ((Output) -> Void)? = nil,
        receiveCompletion: ((Subscribers.Completion<Failure>) -> Void)? = nil,
        receiveCancel: (() -> Void)? = nil,
        receiveRequest: ((Subscribers.Demand) -> Void)? = nil
    ) -> Publishers.HandleEvents<Self> {
        fatalError()
    }

    /// `func eraseToAnyPublisher() -> AnyPublisher<Self.Output, Self.Failure>`.
    public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> {
        fatalError()
    }
}
