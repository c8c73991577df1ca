import Foundation
import Testing

@testable import Preferences

struct KeyTests {
    @Test func aKeyCarriesItsNameNamespaceAndDefault() {
        let key = PreferenceKeys.vendorFlag
        #expect(key.name == "flag")
        #expect(key.namespace == .custom("com.vendor.sdk"))
        #expect(key.defaultValue == false)
        #expect(key.description == "com.vendor.sdk:flag")
        #expect(PreferenceKeys.flag.namespace == .app)
        #expect(PreferenceKeys.pet.defaultValue == nil)
    }

    /// Keys of one value type and strategy share one codec; each other type or strategy has its
    /// own, which reads and writes only its own values, however many keys came first.
    @Test func keysOfOneTypeAndStrategyShareACodecAndNoOtherDoes() throws {
        let first = PreferenceKey<Int>("first", default: 0)
        let second = PreferenceKey<Int>("second", default: 1)
        #expect(first.codec === second.codec)
        let optional = PreferenceKey<Int?>("optional")
        #expect(optional.codec === PreferenceKey<Int?>("another").codec)
        #expect(ObjectIdentifier(optional.codec) != ObjectIdentifier(first.codec))
        let theme = PreferenceKey<Theme>("theme", default: .system)
        let optionalTheme = PreferenceKey<Theme?>("optionalTheme")
        let pet = PreferenceKey<Pet?>("pet")
        let codecs: [AnyObject] = [first.codec, optional.codec, theme.codec, optionalTheme.codec, pet.codec]
        #expect(Set(codecs.map(ObjectIdentifier.init)).count == codecs.count)

        let store = PreferencesStore.inMemory()
        store[second] = 7
        store[optional] = 8
        store[optionalTheme] = .dark
        store[pet] = Pet(name: "Rex", age: 3)
        #expect(store[second] == 7 && store[optional] == 8)
        #expect(store[optionalTheme] == .dark && store[theme] == .system)
        #expect(store[pet] == Pet(name: "Rex", age: 3))
        #expect(store.storedValue(at: store.resolvedKey(for: optionalTheme)) == .string("dark"))
    }

    @Test func theSameNameInDifferentNamespacesIsADifferentKey() throws {
        let store = PreferencesStore.inMemory()
        store[.flag] = true
        #expect(store[.vendorFlag] == false)
        #expect(store[.globalFlag] == false)
        store[.vendorFlag] = true
        #expect(
            store.storedKeys() == [
                StoredKey("flag", in: .app),
                StoredKey("flag", in: .custom("com.vendor.sdk")),
            ])
    }

    @Test func theAppNamespaceIsTheStoresAndACustomNamespaceOfTheSameNameMeetsIt() {
        let store = PreferencesStore.inMemory(appNamespace: "com.example.app")
        store[.flag] = true
        let sameEntry = PreferenceKey<Bool>("flag", default: false, in: .custom("com.example.app"))
        #expect(store[sameEntry] == true)
        #expect(store.storedKeys() == [StoredKey("flag", in: .app)])
    }

    /// A key remembers the resolved key of the last app namespace it was used in: stores of two
    /// namespaces taking turns must still each find their own entry.
    @Test func oneKeyInStoresOfTwoAppNamespacesTakingTurnsKeepsTheirValuesApart() {
        let first = PreferencesStore.inMemory(appNamespace: "com.example.first")
        let second = PreferencesStore.inMemory(appNamespace: "com.example.second")
        for round in 0..<3 {
            first[.count] = round
            second[.count] = 100 + round
            #expect(first[.count] == round)
            #expect(second[.count] == 100 + round)
        }
        let inFirst = PreferenceKey<Int>("count", default: 0, in: .custom("com.example.first"))
        let inSecond = PreferenceKey<Int>("count", default: 0, in: .custom("com.example.second"))
        #expect(first[inFirst] == 2)
        #expect(first[inSecond] == 0)
        #expect(second[inSecond] == 102)
        #expect(PreferencesStore.inMemory()[.count] == 0)
    }

    @Test(arguments: [
        ("", "it must not be empty"),
        ("a\u{7}b", "it must not contain control characters"),
        ("line\nbreak", "it must not contain control characters"),
        ("a:b", "it must not contain ':'"),
        ("e\u{301}", "Normalization Form C"),
    ])
    func invalidNamesBreakARule(name: String, rule: String) throws {
        let violation = try #require(KeyValidation.violation(in: name, isNamespace: false))
        #expect(violation.contains(rule))
    }

    @Test func reservedNamespacesBreakARuleButNamesMayBeginWithAnUnderscore() {
        #expect(KeyValidation.violation(in: "_private", isNamespace: true)?.contains("reserved") == true)
        #expect(KeyValidation.violation(in: "_private", isNamespace: false) == nil)
    }

    @Test(arguments: ["largeText", "com.example.setting", "a b", "é", "日本語", "with-dash_and.dot"])
    func ordinaryNamesAreValid(name: String) {
        #expect(KeyValidation.violation(in: name, isNamespace: false) == nil)
        #expect(KeyValidation.violation(in: name, isNamespace: true) == nil)
    }

    @Test func declaringAKeyWithAnEmptyNameStopsWithAMessageNamingTheRule() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PreferenceKey<Bool>("", default: false)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("Invalid preference key name \"\""))
        #expect(message.contains("it must not be empty"))
    }

    @Test func declaringAKeyWithTheSeparatorStopsWithAMessageNamingTheKey() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PreferenceKey<Int>("window:width", default: 0)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("\"window:width\""))
        #expect(message.contains("must not contain ':'"))
    }

    @Test func declaringAKeyInAReservedNamespaceStopsWithAMessageNamingBoth() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = PreferenceKey<Int>("count", default: 0, in: .custom("_ledger"))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("\"_ledger\""))
        #expect(message.contains("\"count\""))
        #expect(message.contains("reserved"))
    }

    @Test func declaringAKeyWithAControlCharacterStops() async {
        await #expect(processExitsWith: .failure) {
            _ = PreferenceKey<String?>("tab\there")
        }
    }

    @Test func aStoreWithAnInvalidAppNamespaceStops() async {
        await #expect(processExitsWith: .failure) {
            _ = PreferencesStore.inMemory(appNamespace: "")
        }
    }
}
