/// A protocol named like SwiftUI's `PreferenceKey`, which cannot be imported on Linux.
public protocol PreferenceKey {}
