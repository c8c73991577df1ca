import Foundation
import Testing

@testable import Preferences

@Suite("App groups")
struct AppGroupTests {
    @Test("An app group's store is preferences.store in the group's folder, shared by every store opened there")
    func sharedStore() throws {
        let folder = try TemporaryDirectory()
        let url = try PreferencesStore.fileURL(inAppGroup: "group.com.example.reader") { identifier in
            #expect(identifier == "group.com.example.reader")
            return folder.url
        }
        #expect(url == folder.url.appendingPathComponent("preferences.store"))
        // The app and its extension, each with its own store on the group's file.
        let app = try PreferencesStore(fileURL: url)
        let widget = try PreferencesStore(fileURL: url)
        app[.count] = 3
        #expect(widget[.count] == 3)
        widget[.flag] = true
        #expect(app[.flag] == true)
    }

    @Test("A group with no container, or an identifier that cannot name a folder, throws saying which")
    func refusals() throws {
        let error = #expect(throws: PreferencesError.self) {
            try PreferencesStore.fileURL(inAppGroup: "group.com.example.missing") { _ in nil }
        }
        #expect(error?.code == .storeUnavailable)
        #expect(error?.description.contains("the app group 'group.com.example.missing' has no container") == true)
        #expect(error?.description.contains("App Groups entitlement") == true)
        for identifier in ["", ".", "..", "group/../../etc", "a\0b"] {
            let error = #expect(throws: PreferencesError.self) {
                try PreferencesStore.fileURL(inAppGroup: identifier) { _ in URL(fileURLWithPath: "/tmp") }
            }
            #expect(error?.description.contains("cannot name a folder") == true, "\(identifier)")
        }
    }

    @Test(
        "On Linux an app group is a folder beside the standard store's, under XDG_CONFIG_HOME",
        .enabled(if: isLinux, "Apple platforms use the group's container"))
    func linuxFolder() {
        let folder = PreferencesStore.appGroupFolder("group.example", environment: ["XDG_CONFIG_HOME": "/srv/config"])
        #expect(folder?.path == "/srv/config/group.example")
        let home = PreferencesStore.appGroupFolder("group.example", environment: [:])
        #expect(home?.path.hasSuffix("/.config/group.example") == true)
    }
}
