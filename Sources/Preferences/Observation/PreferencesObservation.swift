/// An observation made with ``PreferencesStore/observe(_:handler:)``: it lasts until cancelled or released.
///
/// Keep it as long as you want to be told of changes:
///
/// ```swift
/// let observation = store.observe(.theme) { theme, change in
///     applyTheme(theme)
/// }
/// // …
/// observation.cancel()
/// ```
public final class PreferencesObservation: Sendable {
    private let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void) {
        self.end = end
    }

    deinit {
        end()
    }

    /// Ends the observation: the handler is not called again.
    public func cancel() {
        end()
    }
}
