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
}
