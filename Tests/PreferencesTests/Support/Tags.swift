import Testing

extension Tag {
    /// Tests that start other processes (the harness, `prefs`, the demo): the slow ones.
    ///
    /// An Xcode test plan can leave them out while iterating (see CONTRIBUTING.md for the
    /// command line). CI runs everything.
    @Tag static var childProcesses: Self
}
