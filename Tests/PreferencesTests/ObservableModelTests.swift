#if canImport(Observation)
    import Foundation
    import Observation
    import Testing

    @testable import Preferences

    /// A preference as a property of an `@Observable` model: `@ObservationIgnored @Preference`,
    /// with changes still tracked per key, through the store.
    @Observable
    final class ReadingModel: @unchecked Sendable {
        // `@unchecked`: the test touches the model from one thread at a time.
        @ObservationIgnored @Preference(.count, store: ReadingModel.store) var pagesRead: Int
        @ObservationIgnored @Preference(.title, store: ReadingModel.store) var bookTitle: String
        var localNote = ""

        static let store = PreferencesStore.inMemory()
    }

    struct ObservableModelTests {
        @Test func aPreferenceInAnObservableModelIsTrackedPerKey() throws {
            let model = ReadingModel()
            let fired = Locked(0)
            withObservationTracking {
                _ = model.pagesRead
            } onChange: {
                fired.withLock { $0 += 1 }
            }
            ReadingModel.store[.title] = "another key"
            #expect(fired.withLock { $0 } == 0)
            model.pagesRead = 12
            #expect(fired.withLock { $0 } == 1)
            #expect(ReadingModel.store[.count] == 12)
        }
    }
#endif
