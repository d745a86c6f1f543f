import Testing
@testable import PackageCore

/// The names of conflict copies: beside the original, never a name already in the tree.
@Suite("ConflictCopyName")
struct ConflictCopyNameTests {
    typealias F = MergeFixtures
    let day = CalendarDay(year: 2026, month: 12, day: 6)

    func copy(_ path: RelativePath, host: String = "laptop", in tree: TreeSnapshot = .empty) -> String {
        ConflictCopyName.path(for: path, day: day, host: host, avoiding: tree).string
    }

    @Test("extension kept last; none for dotfiles, trailing dots and long or spaced suffixes")
    func shapes() {
        #expect(copy("docs/report.txt") == "docs/report (conflict 2026-12-06 laptop).txt")
        #expect(copy("README") == "README (conflict 2026-12-06 laptop)")
        #expect(copy(".config") == ".config (conflict 2026-12-06 laptop)")
        #expect(copy("a/.config.json") == "a/.config (conflict 2026-12-06 laptop).json")
        #expect(copy("archive.tar.gz") == "archive.tar (conflict 2026-12-06 laptop).gz")
        #expect(copy("name.") == "name. (conflict 2026-12-06 laptop)")
        #expect(copy("Notes 2.0 draft") == "Notes 2.0 draft (conflict 2026-12-06 laptop)")
        #expect(copy("x.txt", host: "") == "x (conflict 2026-12-06).txt")
        #expect(copy("x.txt", host: "a/b\u{0}c") == "x (conflict 2026-12-06 a-b-c).txt")
    }

    @Test("repeated collisions count up; checks are byte-exact")
    func collisions() {
        let tree = F.tree([
            F.file("r.txt", "r"), F.file("r (conflict 2026-12-06 laptop).txt", "1"),
            F.file("r (conflict 2026-12-06 laptop 2).txt", "2"),
            // The decomposed twin of a candidate is another name: no collision.
            F.file("caf\u{e9} (conflict 2026-12-06 laptop)", "nfc"),
        ])
        #expect(copy("r.txt", in: tree) == "r (conflict 2026-12-06 laptop 3).txt")
        #expect(copy(RelativePath(validating: "cafe\u{301}")!, in: tree) == "cafe\u{301} (conflict 2026-12-06 laptop)")
        #expect(copy(RelativePath(validating: "caf\u{e9}")!, in: tree) == "caf\u{e9} (conflict 2026-12-06 laptop 2)")
        let taken: Set<RelativePath> = ["r (conflict 2026-12-06 laptop 3).txt"]
        #expect(
            ConflictCopyName.path(for: "r.txt", day: day, host: "laptop", avoiding: tree, alsoAvoiding: taken)
                == "r (conflict 2026-12-06 laptop 4).txt")
    }

    @Test("a long name is shortened at a character boundary to fit NAME_MAX")
    func longNames() {
        let long = String(repeating: "\u{e9}", count: 200) + ".txt"
        let name = RelativePath(validating: copy(RelativePath(validating: long)!))!.name
        #expect(name.utf8.count <= ConflictCopyName.maximumNameBytes)
        #expect(PathOrder.hasByteSuffix(name, " (conflict 2026-12-06 laptop).txt"))
        #expect(name.unicodeScalars.allSatisfy { $0 == "\u{e9}" || $0.isASCII })
    }

    @Test("the merge names the copy against its merged tree")
    func fromMerge() {
        let base = F.tree([F.file("m.json", "{}")])
        let local = F.tree([F.file("m.json", "l"), F.file("m (conflict 2026-12-06 laptop).json", "older copy")])
        let merge = TreeMerge(base: base, local: local, other: F.tree([F.file("m.json", "o")]))
        #expect(merge.conflicts.map(\.path) == ["m.json"])
        #expect(merge.conflictCopyPath(for: "m.json", day: day, host: "laptop") == "m (conflict 2026-12-06 laptop 2).json")
    }

    @Test("calendar days from seconds since 1970, in UTC or at an offset")
    func days() {
        #expect(CalendarDay(secondsSince1970: 0).description == "1970-01-01")
        #expect(CalendarDay(secondsSince1970: 1_796_515_200).description == "2026-12-06")
        #expect(CalendarDay(secondsSince1970: 951_782_400).description == "2000-02-29")
        #expect(CalendarDay(secondsSince1970: -1).description == "1969-12-31")
        #expect(CalendarDay(secondsSince1970: 1_796_601_599, offsetSeconds: 3_600).description == "2026-12-07")
    }
}
