import Testing

@testable import Preferences

/// The order a snapshot is written in: by namespace, then by name, byte by byte in UTF-8.
@Suite struct StorageKeyOrderTests {
    private static let strings = ["", "a", "ab", "abc", "b", "B", "é", "e\u{301}", "z", "zz", "名前", "🦊", "a\u{0}"]

    @Test func ordersByNamespaceThenNameInUTF8() {
        for leftNamespace in Self.strings {
            for rightNamespace in Self.strings {
                for (leftName, rightName) in [("x", "y"), ("y", "x"), ("a", "ab"), ("é", "e")] {
                    let left = StorageKey(namespace: leftNamespace, name: leftName)
                    let right = StorageKey(namespace: rightNamespace, name: rightName)
                    let expected =
                        leftNamespace.utf8.elementsEqual(rightNamespace.utf8)
                        ? leftName.utf8.lexicographicallyPrecedes(rightName.utf8)
                        : leftNamespace.utf8.lexicographicallyPrecedes(rightNamespace.utf8)
                    #expect((left < right) == expected, "\(left) < \(right)")
                }
            }
        }
    }

    /// Long names are compared past their first bytes, and a name sorts after its prefix.
    @Test func comparesLongNamesToTheEnd() {
        let stem = String(repeating: "k", count: 40)
        let keys = [stem + "b", stem, stem + "a", stem + "ab"].map { StorageKey(namespace: "app", name: $0) }
        #expect(keys.sorted().map(\.name) == [stem, stem + "a", stem + "ab", stem + "b"])
    }

    /// A compaction keeps the last snapshot's order when the keys are the same, and sorts anew when
    /// one came or went, even with as many keys as before: each way, the file is the one sorting
    /// would make.
    @Test func aSnapshotReusesThePreviousOrderOnlyForTheSameKeys() {
        let keys = (0..<50).map { StorageKey(namespace: $0 % 3 == 0 ? "" : "app", name: "key\($0)") }
        var entries = Dictionary(uniqueKeysWithValues: keys.map { ($0, StoredValue.signed(1)) })
        let previous = SnapshotFile.order(of: entries)
        #expect(previous == keys.sorted())
        entries[keys[7]] = .string("changed")
        #expect(SnapshotFile.order(of: entries, reusing: previous) == previous)
        var swapped = entries
        swapped[keys[7]] = nil
        swapped[StorageKey(namespace: "app", name: "another")] = .bool(true)
        var added = entries
        added[StorageKey(namespace: "app", name: "another")] = .bool(true)
        var removed = entries
        removed[keys[0]] = nil
        for changed in [swapped, added, removed, [:]] {
            let order = SnapshotFile.order(of: changed, reusing: previous)
            #expect(order == changed.keys.sorted())
            #expect(
                SnapshotFile.encode(changed, generation: 2, inOrder: order)
                    == SnapshotFile.encode(changed, generation: 2))
        }
    }
}
