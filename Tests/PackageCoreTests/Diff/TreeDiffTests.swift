import Testing
@testable import PackageCore

/// The differ on snapshots built in memory: git name-status semantics, equal subtrees
/// skipped, renames of unique content.
@Suite("TreeDiff")
struct TreeDiffTests {
    let base = Snapshots.make([
        ("a", .directory), ("a/x.txt", .file("x")), ("a/y.txt", .file("y")),
        ("b", .directory), ("b/deep", .directory), ("b/deep/z.txt", .file("z")),
        ("link", .link("a/x.txt")), ("run.sh", .file("#!/bin/sh")), ("top.txt", .file("top")),
    ])

    func lines(_ old: TreeSnapshot, _ new: TreeSnapshot, renames: Bool = true) -> [String] {
        TreeDiff.changes(from: old, to: new, detectRenames: renames).map(\.nameStatusLine)
    }

    @Test("identical trees: no change")
    func identical() {
        #expect(lines(base, base).isEmpty)
    }

    @Test("modified content, executable bit, link target; added and deleted files and directories")
    func basics() {
        let new = Snapshots.make([
            ("a", .directory), ("a/x.txt", .file("x, edited")), ("a/y.txt", .file("y")),
            ("b", .directory), ("b/deep", .directory), ("b/deep/z.txt", .file("z")), ("b/new", .directory),
            ("link", .link("a/y.txt")), ("run.sh", .file("#!/bin/sh", executable: true)),
        ])
        #expect(lines(base, new) == ["M\ta/x.txt", "A\tb/new", "M\tlink", "M\trun.sh", "D\ttop.txt"])
    }

    @Test("a kind change is T, with a directory's contents as deletions")
    func typeChange() {
        let new = Snapshots.make([
            ("a", .file("a is a file now")), ("b", .directory), ("b/deep", .directory), ("b/deep/z.txt", .file("z")),
            ("link", .link("a/x.txt")), ("run.sh", .file("#!/bin/sh")), ("top.txt", .file("top")),
        ])
        #expect(lines(base, new) == ["T\ta", "D\ta/x.txt", "D\ta/y.txt"])
    }

    @Test("a whole directory that moved is one rename; without renames, deletions and additions")
    func directoryRename() {
        let new = Snapshots.make([
            ("a", .directory), ("a/x.txt", .file("x")), ("a/y.txt", .file("y")),
            ("c", .directory), ("c/deep", .directory), ("c/deep/z.txt", .file("z")),
            ("link", .link("a/x.txt")), ("run.sh", .file("#!/bin/sh")), ("top.txt", .file("top")),
        ])
        #expect(lines(base, new) == ["R\tb\tc"])
        #expect(lines(base, new, renames: false) == ["D\tb", "D\tb/deep", "D\tb/deep/z.txt", "A\tc", "A\tc/deep", "A\tc/deep/z.txt"])
    }

    @Test("an unchanged subtree is skipped whole: its entries are never compared")
    func skipsEqualSubtrees() {
        // The same subtree hash with different (bogus) entries below: if the differ looked
        // inside, it would report them.
        var old = base
        let b = old.entries.firstIndex { $0.path == "b/deep/z.txt" }!
        old.entries[b].hash = ContentHash(high: 1, low: 2)
        #expect(lines(old, base).isEmpty)
    }
}
