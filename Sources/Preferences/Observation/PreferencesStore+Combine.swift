#if canImport(Combine)
    public import Combine

    // Apple platforms only, and so never compiled on the project's Linux machines: a few lines over
    // the observation that `changes(for:)` is built on, which the tests cover. Listed in
    // CONTRIBUTING.md.

    extension PreferencesStore {
        /// A publisher of a key's values, for code written with Combine: its value when subscribed
        /// to, then the value of each commit that changes it, in commit order.
        ///
        /// ```swift
        /// store.publisher(for: .theme)
        ///     .receive(on: DispatchQueue.main)
        ///     .sink { theme in apply(theme) }
        ///     .store(in: &cancellables)
        /// ```
        ///
        /// Each subscription observes the key until it is cancelled, and never completes. Values
        /// arrive on the thread that delivers the change, as ``observe(_:handler:)``'s handler does.
        ///
        /// - Parameter key: The key to watch.
        /// - Returns: The key's values; its default when the entry is removed or does not read as
        ///   its type.
        public func publisher<Value>(for key: PreferenceKey<Value>) -> AnyPublisher<Value, Never> {
            Deferred {
                // `nil` until observing starts, which sends the value as of that moment. Not
                // `Sendable`, and safe all the same: `start` sends under the store's write lock
                // before the observer is registered, and after that only the change hub sends,
                // from one delivering thread at a time, so no two sends ever overlap.
                nonisolated(unsafe) let subject = CurrentValueSubject<Value?, Never>(nil)
                let observation = self.observe(key) { value, _ in
                    subject.send(value)
                } start: { current in
                    subject.send(current)
                }
                return subject.compactMap { $0 }.handleEvents(receiveCancel: { observation.cancel() })
            }
            .eraseToAnyPublisher()
        }
    }
#endif
