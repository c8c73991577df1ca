// swift-tools-version: 6.2
import PackageDescription

let upcomingFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
]

// `ExplicitSendable` as an error only where `.ci/run` asks for it: Xcode builds a package added to
// an app with `-suppress-warnings`, which conflicts with any warning treated as an error.
let strictSettings: [SwiftSetting] =
    Context.environment["PREFERENCES_STRICT_SENDABLE"] == "1" ? [.treatWarning("ExplicitSendable", as: .error)] : []

let package = Package(
    name: "Preferences",
    // Observation needs macOS 14 / iOS 17; the store locks with `pthread_mutex_t` rather than
    // `Mutex` so that it does not need macOS 15 / iOS 18.
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Preferences", targets: ["Preferences"]),
        // SwiftUI's pieces, apart, so that the library links no SwiftUI into `prefs`, extensions
        // and apps without views. Empty where SwiftUI is not.
        .library(name: "PreferencesSwiftUI", targets: ["PreferencesSwiftUI"]),
        .executable(name: "prefs", targets: ["prefs"]),
    ],
    targets: [
        .target(
            name: "Preferences",
            dependencies: ["CPreferencesAtomics"],
            // Apple's privacy manifest: `stat`/`fstat` of the store's own files (C617.1) and
            // `UserDefaults` for the suite backend and imports (CA92.1, and 1C8F.1 for app groups), and
            // for the managed app configuration the standard store reads (AC6B.1).
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: upcomingFeatures + strictSettings
        ),
        .target(
            name: "PreferencesSwiftUI",
            dependencies: ["Preferences"],
            swiftSettings: upcomingFeatures + strictSettings
        ),
        // What Swift cannot say itself: atomics on words of a page several processes map, the robust
        // process-shared mutex, waiting on a shared word (futex; Darwin notifications on Apple platforms), CRC-32C.
        .target(name: "CPreferencesAtomics"),
        // The demo and the benchmarks are no products, so that packages depending on this one see
        // only the library and `prefs`; `swift run` still runs them from a clone, by target name.
        .executableTarget(
            name: "preferences-demo",
            dependencies: ["Preferences"],
            path: "Sources/PreferencesDemo",
            swiftSettings: upcomingFeatures
        ),
        // Declares a `PreferenceKey` protocol, as SwiftUI does, so the tests can prove that
        // `Preferences.PreferenceKey` keeps working in a file that imports both.
        .target(
            name: "SwiftUIStandIn",
            path: "Tests/SwiftUIStandIn",
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "prefs",
            dependencies: ["Preferences"],
            swiftSettings: upcomingFeatures
        ),
        .executableTarget(
            name: "preferences-benchmarks",
            dependencies: ["Preferences", "PreferencesHarnessKit"],
            path: "Sources/PreferencesBenchmarks",
            swiftSettings: upcomingFeatures
        ),
        // A child process for the durability tests: writes until killed, or writes from several
        // processes at once. Not a product.
        .executableTarget(
            name: "PreferencesHarness",
            dependencies: ["Preferences", "PreferencesHarnessKit"],
            swiftSettings: upcomingFeatures
        ),
        .target(
            name: "PreferencesHarnessKit",
            dependencies: ["Preferences"],
            swiftSettings: upcomingFeatures
        ),
        .testTarget(
            name: "PreferencesTests",
            dependencies: [
                "Preferences", "preferences-demo", "PreferencesHarness", "PreferencesHarnessKit", "SwiftUIStandIn",
                "prefs",
            ],
            swiftSettings: upcomingFeatures
        ),
    ]
)
