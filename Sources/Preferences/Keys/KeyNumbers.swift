/// A number for each namespace and name a key is declared with, the same in every store of the
/// process: a store keeps its slots in an array by these numbers, and finds a key's without hashing
/// it (see `StoreState.unretainedSlot(for:number:)`).
///
/// A name gets its number the first time a key of it is made, under a lock, and keeps it for the
/// life of the process: two keys of the same name, or a key and its copy with a summary, share it.
/// Numbers count from 1; zero is no number.
enum KeyNumbers {
    /// How many names are numbered.
    ///
    /// A key made past it has no number, and stores find its slot by hashing it. The numbers are
    /// kept for the life of the process, about 40–70 bytes a name (more for names of more than 15
    /// bytes): an app that makes keys of ever new names stops growing the table at about 20 MB, and
    /// grows no store's array.
    static let limit: UInt32 = 1 << 18

    private struct Name: Hashable {
        let namespace: String
        let name: String
    }

    private static let numbers = Locked<[Name: UInt32]>([:])

    /// The number of a resolved namespace and a name, given it if it has none; zero once `limit`
    /// names have one.
    static func number(namespace: String, name: String, limit: UInt32 = limit) -> UInt32 {
        numbers.withLock { numbers in
            let key = Name(namespace: namespace, name: name)
            if let number = numbers[key] {
                return number
            }
            guard numbers.count < limit else { return 0 }
            let number = UInt32(numbers.count + 1)
            numbers[key] = number
            return number
        }
    }
}
