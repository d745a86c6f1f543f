import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("Paths: RelativePath, the merge, PackageLocation, sibling names")
struct PathTests {
    @Test("normalised relative paths only")
    func relativePaths() {
        for good in ["", "a", "a/b", "é/ß", ".hidden", "a/.pkgtool", "..a", "a.."] {
            #expect(RelativePath(validating: good) != nil, "\(good)")
        }
        for bad in ["/a", "a/", "a//b", ".", "..", "a/../b", "./a", "a/.", "a\u{0}b", String(repeating: "x", count: 4096)] {
            #expect(RelativePath(validating: bad) == nil, "\(bad)")
        }
        let path = RelativePath(validating: "a/b/c")!
        #expect(path.parent.string == "a/b" && path.name == "c" && path.parent.parent.parent.isRoot)
        #expect(path.isSelfOrDescendant(of: RelativePath(validating: "a")!))
        #expect(!RelativePath(validating: "ab")!.isSelfOrDescendant(of: RelativePath(validating: "a")!))
        #expect(RelativePath.splitLast("/x") == ("/", "x") && RelativePath.splitLast("x") == ("", "x"))
        #expect(RelativePath.join("a/", "b") == "a/b" && RelativePath.join("", "b") == "b")
    }

    @Test("the merge walks two path-sorted lists in one order and honours subtree skips")
    func merge() {
        let left = ["a", "a/1", "a/2", "b", "d"]
        let right = ["a", "a/1", "c", "d", "d/x"]
        var steps: [String] = []
        PathOrder.mergeJoin(left, right, path: { $0 }) { step in
            switch step {
            case .left(let i): steps.append("-" + left[i])
            case .right(let j): steps.append("+" + right[j])
            case .both(let i, _): steps.append("=" + left[i])
            }
            return (1, 1)
        }
        #expect(steps == ["=a", "=a/1", "-a/2", "-b", "+c", "=d", "+d/x"])
        var skipped: [String] = []
        PathOrder.mergeJoin(left, right, path: { $0 }) { step in
            if case .both(let i, _) = step, left[i] == "a" {
                skipped.append("a")
                return (3, 2)
            }
            if case .both(let i, _) = step { skipped.append(left[i]) }
            return (1, 1)
        }
        #expect(skipped == ["a", "d"])
    }

    @Test("a package's path resolves once: '.', relative, through a symlinked folder, trailing slashes")
    func location() throws {
        let home = try TemporaryDirectory("location")
        try Files.makeDirectory(home.url("real/doc.pkg"))
        try Files.symlink(home.url("link"), to: home.url("real"))
        let canonical = try PackageLocation(home.url("real/doc.pkg"))
        #expect(try PackageLocation(home.url("link/doc.pkg")) == canonical)
        #expect(try PackageLocation(home.url("link/doc.pkg/")) == canonical)
        #expect(try PackageLocation(home.url("real/./../real/doc.pkg")) == canonical)
        #expect(try PackageLocation(home.url("link/new.pkg")).path == home.url("real/new.pkg"))
        #expect(throws: FileSystemError.self) { try PackageLocation(home.url("missing/new.pkg")) }
        #expect(throws: FileSystemError.self) { try PackageLocation("") }
    }

    @Test("sibling names: short whatever the name, distinct for long names sharing a prefix, roles recognised")
    func siblings() {
        let long = String(repeating: "n", count: 250)
        let a = SiblingNames(forName: long + "a")
        let b = SiblingNames(forName: long + "b")
        #expect(a.stem != b.stem)
        #expect(a.newStaging().utf8.count < 100 && a.previous.utf8.count < 100)
        #expect(a.role(of: a.newStaging()) == .staging && a.role(of: a.newAside()) == .aside)
        #expect(a.role(of: b.newStaging()) == nil && a.role(of: a.previous) == nil)
        #expect(SiblingNames(forName: "doc.pkg").role(of: ".doc.pkg.pkgtool-staging-xyz") == .staging)
    }
}
