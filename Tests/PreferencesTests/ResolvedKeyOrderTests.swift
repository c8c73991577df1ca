import Testing

@testable import Preferences

/// The order a snapshot is written in: by namespace, then by name, byte by byte in UTF-8.
@Suite struct ResolvedKeyOrderTests {
    private static let strings = ["", "a", "ab", "abc", "b", "B", "é", "e\u{301}", "z", "zz", "名前", "🦊", "a\u{0}"]

    @Test func ordersByNamespaceThenNameInUTF8() {
        for leftNamespace in Self.strings {
            for rightNamespace in Self.strings {
                for (leftName, rightName) in [("x", "y"), ("y", "x"), ("a", "ab"), ("é", "e")] {
                    let left = ResolvedKey(namespace: leftNamespace, name: leftName)
                    let right = ResolvedKey(namespace: rightNamespace, name: rightName)
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
        let keys = [stem + "b", stem, stem + "a", stem + "ab"].map { ResolvedKey(namespace: "app", name: $0) }
        #expect(keys.sorted().map(\.name) == [stem, stem + "a", stem + "ab", stem + "b"])
    }

    /// Entries keep the order of their last snapshot for the next, and sort anew when a key came or
    /// went, even with as many keys as before: each way, the file is the one sorting would make.
    @Test func aSnapshotReusesThePreviousOrderOnlyForTheSameKeys() {
        let keys = (0..<50).map { ResolvedKey(namespace: $0 % 3 == 0 ? "" : "app", name: "key\($0)") }
        let initial = Dictionary(uniqueKeysWithValues: keys.map { ($0, StoredValue.signed(1)) })
        // Numbered entries, as the engine's are: a removal leaves its key's number behind.
        var entries = StoredEntries(initial)
        #expect(SnapshotFile.encode(&entries, generation: 2) == SnapshotFile.encode(initial, generation: 2))
        entries[keys[7]] = .string("changed")
        var swapped = entries
        swapped[keys[7]] = nil
        swapped[ResolvedKey(namespace: "app", name: "another")] = .bool(true)
        var added = entries
        added[ResolvedKey(namespace: "app", name: "another")] = .bool(true)
        var removed = entries
        removed[keys[0]] = nil
        var removedAndBack = removed
        _ = SnapshotFile.encode(&removedAndBack, generation: 2)
        removedAndBack[keys[0]] = .signed(2)
        var emptied = entries
        for key in keys {
            emptied[key] = nil
        }
        for var changed in [entries, swapped, added, removed, removedAndBack, emptied] {
            let expected = SnapshotFile.encode(changed.all, generation: 2)
            #expect(SnapshotFile.encode(&changed, generation: 2) == expected)
            // Again, with the order the first made.
            #expect(SnapshotFile.encode(&changed, generation: 2) == expected)
        }
    }
}
