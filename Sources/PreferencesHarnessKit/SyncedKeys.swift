package import Foundation
package import Preferences

/// The keys the sync tests' devices sync: one every device writes, and one of its own for each.
package enum SyncedKeys {
    /// Written by every device at once, to see them agree.
    package static let shared = PreferenceKey<String?>("shared", in: .custom("harness"))

    /// Written by one device only: the device numbered `index` writes `own(index)`.
    package static func own(_ index: Int) -> PreferenceKey<Int> {
        PreferenceKey<Int>("own-\(index)", default: -1, in: .custom("harness"))
    }

    package static let deviceCount = 3

    package static var all: [PreferenceKeys] {
        [shared] + (0..<deviceCount).map(own)
    }

    /// A sync of `store` through `folder`, of every key in ``all``.
    package static func sync(_ store: PreferencesStore, through folder: URL) throws -> PreferencesSync {
        try PreferencesSync(store: store, keys: all, folder: folder)
    }
}
