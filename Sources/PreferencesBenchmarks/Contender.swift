import Foundation
import Preferences

/// Something that keeps preferences, measured on the same workloads as the others.
protocol Contender: AnyObject {
    var name: String { get }
    /// Whether this is a store of this package, compared with the baselines.
    var isPreferences: Bool { get }

    func write(_ value: Int, at index: Int) throws
    func readInt(at index: Int) -> Int
    func write(_ value: String, stringAt index: Int) throws
    func readString(at index: Int) -> String
    func write(_ value: BenchmarkPet, codableAt index: Int) throws
    func readCodable(at index: Int) -> BenchmarkPet
    func write(_ value: BenchmarkTheme, enumAt index: Int) throws
    func readEnum(at index: Int) -> BenchmarkTheme
    /// Adds one to the Int at `index`, as one read-modify-write.
    func increment(at index: Int) throws
    /// Writes `values` to the Ints at indices `0..<values.count`, as one batch if the contender has batches.
    func writeBatch(_ values: [Int]) throws
}

extension Contender {
    var isPreferences: Bool { false }
}

/// A Codable value of about 200 bytes when encoded as JSON.
struct BenchmarkPet: Codable, Sendable, Equatable {
    var name: String
    var species: String
    var birthday: Date
    var tags: [String]
    var weight: Double
    var notes: String

    static func sample(_ number: Int) -> BenchmarkPet {
        BenchmarkPet(
            name: "Pet number \(number)",
            species: "dog",
            birthday: Date(timeIntervalSince1970: 1_500_000_000 + Double(number)),
            tags: ["good", "loud", "fluffy", "fast"],
            weight: 21.5,
            notes: "Likes walks in the park and sleeping in the sun after lunch."
        )
    }
}

enum BenchmarkTheme: String, Codable, Sendable, CaseIterable {
    case system, light, dark
}

/// A string of about 60 bytes.
func benchmarkString(_ number: Int) -> String {
    "A preference value of about sixty bytes, number \(number)."
}
