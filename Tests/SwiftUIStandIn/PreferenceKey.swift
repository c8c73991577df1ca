public protocol PreferenceKey {}
