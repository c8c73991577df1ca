import Testing

extension Tag {
    /// Tests that start other processes (the harness, `prefs`, the demo): the slow ones, which
    /// `swift test --skip "tag:childProcesses"` leaves out while iterating. CI runs everything.
    @Tag static var childProcesses: Self
}
