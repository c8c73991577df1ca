import Foundation
import Testing

@testable import Preferences

/// The privacy manifest Apple asks of a library that calls required-reason APIs ships in the
/// library's bundle, and declares each one this library calls.
struct PrivacyManifestTests {
    @Test func theManifestShipsWithTheLibraryAndGivesAReasonForEachAPI() throws {
        let url = try #require(Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy"))
        let manifest = try #require(
            try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil) as? [String: Any]
        )
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        let types = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        var reasons: [String: [String]] = [:]
        for entry in types {
            let type = try #require(entry["NSPrivacyAccessedAPIType"] as? String)
            reasons[type] = entry["NSPrivacyAccessedAPITypeReasons"] as? [String]
        }
        #expect(reasons["NSPrivacyAccessedAPICategoryFileTimestamp"] == ["C617.1"])
        // CA92.1: the app's own defaults (the suite backend, imports); 1C8F.1: an app group's;
        // AC6B.1: the managed app configuration (`com.apple.configuration.managed`) the standard
        // store reads as managed settings.
        #expect(reasons["NSPrivacyAccessedAPICategoryUserDefaults"] == ["CA92.1", "1C8F.1", "AC6B.1"])
    }
}
