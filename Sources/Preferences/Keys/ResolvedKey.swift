import Foundation

/// The full identity of a stored entry: its resolved namespace (empty for the global namespace) and its name.
///
/// The two strings sit in one object that every copy shares, with the key's bytes as a record
/// holds them when they were made ahead: a write copies its key half a dozen times (into its
/// change, its record, the engine's entries and the store's memory), and a copy of two strings goes
/// through `String`'s value witnesses, where a copy of the object is one retain.
/// The hash stays inline, so that a lookup reads no memory but the key's own.
struct ResolvedKey: Hashable, Sendable, Comparable {
    /// The two strings, and, when made ahead, their bytes as a record holds them, in the same
    /// allocation: a write copies them from memory it reaches through the key anyway, where an
    /// array of its own would be one more cache line to find (with 10,000 keys, mostly a miss).
    private final class Names: ManagedBuffer<Names.Header, UInt8> {
        struct Header {
            let namespace: String
            let name: String
            /// How many bytes follow; `nil` when they were not made ahead.
            let encodedCount: Int?
            /// Whether the key's changes are kept out of the store's history.
            let keepsNoHistory: Bool
        }

        static func make(namespace: String, name: String, encodesAhead: Bool, keepsNoHistory: Bool) -> Names {
            var encoded: [UInt8] = []
            if encodesAhead {
                var writer = ByteWriter(capacity: namespace.utf8.count + name.utf8.count + 4)
                writer.appendLengthPrefixed(namespace)
                writer.appendLengthPrefixed(name)
                encoded = writer.bytes
            }
            let buffer = Names.create(minimumCapacity: encoded.count) { _ in
                Header(
                    namespace: namespace, name: name, encodedCount: encodesAhead ? encoded.count : nil,
                    keepsNoHistory: keepsNoHistory)
            }
            // `create` called on this subclass makes an instance of it.
            let names = unsafeDowncast(buffer, to: Names.self)
            names.withUnsafeMutablePointerToElements { $0.initialize(from: encoded, count: encoded.count) }
            return names
        }
    }

    // `nonisolated(unsafe)` because `ManagedBuffer` is not `Sendable`, and cannot be made so: it
    // is safe because nothing in `names` changes after `make` returns, before any thread but the
    // maker's can see it.
    nonisolated(unsafe) private let names: Names
    /// The name's hash in this process, computed once: a lookup then hashes one integer, not two strings.
    private let nameHash: Int

    /// The key's hash, computed once when the key was made: what ``KeyTable`` finds it by.
    var precomputedHash: Int { nameHash }

    // The header through its pointer: `header`, a `var` of `ManagedBuffer`'s, has every access
    // checked for exclusivity at run time.
    var namespace: String { names.withUnsafeMutablePointerToHeader { $0.pointee.namespace } }
    var name: String { names.withUnsafeMutablePointerToHeader { $0.pointee.name } }

    /// Whether the key's changes are kept out of the store's history.
    ///
    /// True for a key declared ``PreferenceKey/withoutHistory()``, or one a record marks so. Not
    /// part of the key's identity.
    var keepsNoHistory: Bool { names.withUnsafeMutablePointerToHeader { $0.pointee.keepsNoHistory } }

    /// Whether the key's bytes as a record holds them were made ahead.
    var isEncodedAhead: Bool { names.withUnsafeMutablePointerToHeader { $0.pointee.encodedCount != nil } }

    /// Calls `body` with both strings as a record holds them, each length-prefixed, if they were
    /// made ahead; `nil` otherwise.
    @inline(__always)
    func withEncoded<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result? {
        names.withUnsafeMutablePointers { header, bytes in
            header.pointee.encodedCount.map { body(UnsafeRawBufferPointer(start: bytes, count: $0)) }
        }
    }

    /// A key of a namespace and a name.
    ///
    /// - Parameters:
    ///   - namespace: The resolved namespace; empty for the global one.
    ///   - name: The key's name.
    ///   - nameHash: The name's hash, when the caller has it already.
    ///   - encodesAhead: Whether to keep the key's bytes as a record holds them, for a key written
    ///     often: a declared key's, which a write then copies whole rather than encoding its two
    ///     strings again. Not for keys read from a file: each would cost opening it an allocation.
    ///   - keepsNoHistory: Whether the key's changes are kept out of the store's history.
    init(
        namespace: String, name: String, nameHash: Int? = nil, encodesAhead: Bool = false, keepsNoHistory: Bool = false
    ) {
        names = Names.make(
            namespace: namespace, name: name, encodesAhead: encodesAhead, keepsNoHistory: keepsNoHistory)
        self.nameHash = nameHash ?? name.hashValue
    }

    /// The same name in another namespace, its hash kept, its bytes made ahead if this key's are,
    /// and kept out of history if this key is.
    func inNamespace(_ namespace: String) -> ResolvedKey {
        ResolvedKey(
            namespace: namespace, name: name, nameHash: nameHash, encodesAhead: isEncodedAhead,
            keepsNoHistory: keepsNoHistory)
    }

    static func == (lhs: ResolvedKey, rhs: ResolvedKey) -> Bool {
        guard lhs.nameHash == rhs.nameHash else { return false }
        return lhs.names === rhs.names || (lhs.name == rhs.name && lhs.namespace == rhs.namespace)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(nameHash)
    }

    /// By namespace, then name, each compared byte by byte in UTF-8: the order a snapshot is written in.
    static func < (lhs: ResolvedKey, rhs: ResolvedKey) -> Bool {
        let byNamespace = compareUTF8(lhs.namespace.utf8, rhs.namespace.utf8)
        return byNamespace != 0 ? byNamespace < 0 : compareUTF8(lhs.name.utf8, rhs.name.utf8) < 0
    }
}

/// Compares two strings' UTF-8 bytes: negative, zero or positive, as `memcmp` does.
///
/// A compaction sorts every key, so this comparison runs often: `memcmp` over the contiguous
/// bytes every native string has is much cheaper than `String.UTF8View`'s iterator, or than
/// `withUTF8` on a copy. The iterator remains for a string that has no contiguous bytes (one
/// bridged from Objective-C).
private func compareUTF8(_ lhs: String.UTF8View, _ rhs: String.UTF8View) -> Int {
    let order = lhs.withContiguousStorageIfAvailable { left in
        rhs.withContiguousStorageIfAvailable { right in compareBytes(left, right) }
    }
    if let order = order ?? nil {
        return order
    }
    return lhs.elementsEqual(rhs) ? 0 : lhs.lexicographicallyPrecedes(rhs) ? -1 : 1
}

/// Compares two byte sequences as `memcmp` does, a sequence before any longer one it begins:
/// negative, zero or positive.
func compareBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
    let common = min(lhs.count, rhs.count)
    if common > 0, let leftBase = lhs.baseAddress, let rightBase = rhs.baseAddress {
        let order = memcmp(leftBase, rightBase, common)
        if order != 0 { return Int(order) }
    }
    return lhs.count - rhs.count
}
