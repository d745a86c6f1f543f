import Testing

@testable import PackageCore

/// `EntryPath`: a path stored as a shared folder and a name is the same path, in every
/// comparison and hash, as the same bytes kept whole; canonically equivalent twins stay two.
@Suite struct EntryPathTests {
    /// Paths in depth-first order, with NFC/NFD twins and names around "/" in byte order.
    private let paths = [
        "a", "a/b", "a/b/c.txt", "a/b/long-name-beyond-fifteen-bytes.json", "a/b-c", "a.txt",
        "caf\u{E9}", "caf\u{E9}/x", "cafe\u{301}", "cafe\u{301}/x", "z",
    ]

    private func interned(_ paths: [String]) -> [EntryPath] {
        var folders = FolderInterner()
        return paths.map { folders.path($0) }
    }

    @Test func sharedAndWholeFormsAreOnePath() {
        for (shared, text) in zip(interned(paths), paths) {
            let whole = EntryPath(whole: text)
            #expect(PathOrder.sameBytes(shared.string, text))
            #expect(shared == whole)
            #expect(shared.hashValue == whole.hashValue)
            #expect(EntryPath.compare(shared, whole) == 0)
            #expect(shared.compare(to: text) == 0)
            #expect(PathOrder.sameBytes(String(shared.name), String(whole.name)))
            #expect(shared.depth == whole.depth)
        }
    }

    @Test func orderIsPathOrderByBytes() {
        let stored = interned(paths)
        for i in paths.indices {
            for j in paths.indices {
                let expected = PathOrder.compareBytes(paths[i], paths[j], slashIsLowest: true)
                #expect(EntryPath.compare(stored[i], stored[j]) == expected, "\(paths[i]) vs \(paths[j])")
                #expect(EntryPath.compare(stored[i], EntryPath(whole: paths[j])) == expected)
            }
        }
    }

    @Test func canonicalTwinsStayTwo() {
        let stored = interned(["caf\u{E9}/x", "cafe\u{301}/x"])
        #expect(stored[0] != stored[1])
        #expect(Set(stored).count == 2)
        #expect(stored[0].folder !== stored[1].folder)
    }

    @Test func siblingsShareOneFolder() {
        let stored = interned(["a", "a/b", "a/b/c", "a/b/d", "a/e", "a/b2/c", "a/f"])
        #expect(stored[2].folder === stored[3].folder)
        #expect(stored[1].folder === stored[4].folder)
        #expect(stored[4].folder === stored[6].folder)
        #expect(stored[0].folder == nil)
        #expect(stored[5].folder !== stored[2].folder)
    }

    @Test func snapshotEntriesCompareAsStored() {
        let stored = interned(paths)
        let entries = stored.map { path in
            SnapshotEntry(storedPath: path, kind: .regular, permissions: 0o644, size: 0, hash: .empty)
        }
        let whole = paths.map { SnapshotEntry(path: $0, kind: .regular, permissions: 0o644, size: 0, hash: .empty) }
        #expect(entries == whole)
        for (entry, text) in zip(entries, paths) {
            #expect(entry.hasPath(text))
            #expect(PathOrder.sameBytes(entry.path, text))
        }
    }
}
