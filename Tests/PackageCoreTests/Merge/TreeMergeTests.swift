import Testing
@testable import PackageCore

/// The merge rules, one at a time, on trees built in memory.
@Suite("TreeMerge")
struct TreeMergeTests {
    typealias F = MergeFixtures

    let base = F.tree([
        F.directory("a"), F.file("a/x.txt", "x"), F.file("a/y.txt", "y"),
        F.directory("b"), F.directory("b/deep"), F.file("b/deep/z.txt", "z"),
        F.link("link", "a/x.txt"), F.file("run.sh", "#!/bin/sh"), F.file("top.txt", "top"),
    ])

    @Test("unchanged on both sides: the base tree, every entry from base")
    func unchanged() {
        let merge = TreeMerge(base: base, local: base, other: base)
        #expect(merge.isClean)
        #expect(merge.tree == base)
        #expect(merge.sources.allSatisfy { $0 == .base })
    }

    @Test("disjoint edits merge cleanly, each from the side that made it")
    func disjointEdits() {
        let local = F.putting([F.file("a/x.txt", "x, local")], into: F.removing("top.txt", from: base))
        let other = F.putting(
            [F.file("b/deep/z.txt", "z, other"), F.directory("c"), F.file("c/new.txt", "new")], into: base)
        let merge = TreeMerge(base: base, local: local, other: other)
        #expect(merge.isClean)
        #expect(
            merge.lines == [
                "a base", "a/x.txt local", "a/y.txt base", "b base", "b/deep base", "b/deep/z.txt other",
                "c other", "c/new.txt other", "link base", "run.sh base",
            ])
        #expect(merge["a/x.txt"]?.hash == F.hash("x, local"))
        #expect(merge["b/deep/z.txt"]?.hash == F.hash("z, other"))
        // Directory hashes are recomputed: the tree is what assembling its entries gives.
        #expect(merge.tree == TreeSnapshot.assemble(merge.tree.entries))
    }

    @Test("the same change on both sides is taken once")
    func sameChange() {
        let edited = F.putting([F.file("a/x.txt", "same"), F.file("new.txt", "new")], into: F.removing("b", from: base))
        let merge = TreeMerge(base: base, local: edited, other: edited)
        #expect(merge.isClean)
        #expect(merge.tree == edited)
        #expect(merge.source(of: "a/x.txt") == .local)
        #expect(merge.source(of: "new.txt") == .local)
        #expect(merge.source(of: "a/y.txt") == .base)
        #expect(merge["b"] == nil)
    }

    @Test("both modified one file: a conflict, local kept, other's version recorded")
    func bothModified() {
        let local = F.putting([F.file("a/x.txt", "local")], into: base)
        let other = F.putting([F.file("a/x.txt", "other")], into: base)
        let merge = TreeMerge(base: base, local: local, other: other)
        #expect(merge.conflicts.count == 1)
        let conflict = merge.conflicts[0]
        #expect(conflict.kind == .bothModified)
        #expect(conflict.path == "a/x.txt")
        #expect(conflict.base?.hash == F.hash("x"))
        #expect(conflict.local?.hash == F.hash("local"))
        #expect(conflict.other?.hash == F.hash("other"))
        #expect(merge["a/x.txt"]?.hash == F.hash("local"))
        #expect(merge.source(of: "a/x.txt") == .local)
    }

    @Test("modified against deleted, both ways: the edit is kept; unchanged against deleted: deleted")
    func modifyDelete() {
        let edited = F.putting([F.file("top.txt", "edited")], into: base)
        let deleted = F.removing("top.txt", from: base)

        let localEdits = TreeMerge(base: base, local: edited, other: deleted)
        #expect(localEdits.conflicts.map(\.kind) == [.modifiedDeleted])
        #expect(localEdits["top.txt"]?.hash == F.hash("edited"))
        #expect(localEdits.source(of: "top.txt") == .local)
        #expect(localEdits.conflicts[0].other == nil)

        let otherEdits = TreeMerge(base: base, local: deleted, other: edited)
        #expect(otherEdits.conflicts.map(\.kind) == [.deletedModified])
        #expect(otherEdits["top.txt"]?.hash == F.hash("edited"))
        #expect(otherEdits.source(of: "top.txt") == .other)
        #expect(otherEdits.conflicts[0].local == nil)

        for (local, other) in [(deleted, base), (base, deleted)] {
            let merge = TreeMerge(base: base, local: local, other: other)
            #expect(merge.isClean)
            #expect(merge.tree == deleted)
        }
    }

    @Test("a change of kind on one side is taken when the other left the subtree alone")
    func typeChangeOneSide() {
        // Local: the file top.txt becomes a directory; other: the directory b becomes a link.
        let local = F.putting([F.directory("top.txt"), F.file("top.txt/inner", "i")], into: base)
        let other = F.putting([F.link("b", "a")], into: F.removing("b", from: base))
        let merge = TreeMerge(base: base, local: local, other: other)
        #expect(merge.isClean)
        #expect(merge["b"]?.kind == .symbolicLink)
        #expect(merge["b/deep"] == nil)
        #expect(merge["top.txt"]?.kind == .directory)
        #expect(merge.source(of: "top.txt/inner") == .local)
        #expect(merge.source(of: "b") == .other)
    }

    @Test("a change of kind against another change: a conflict keeping local's subtree")
    func typeChangeConflicts() {
        // Local edits inside b; other makes b a file.
        let localInside = F.putting([F.file("b/deep/z.txt", "z2")], into: base)
        let otherFile = F.putting([F.file("b", "b is a file")], into: F.removing("b", from: base))
        let first = TreeMerge(base: base, local: localInside, other: otherFile)
        #expect(first.conflicts.map(\.kind) == [.typeChanged])
        #expect(first.conflicts[0].path == "b")
        #expect(first.conflicts[0].other?.kind == .regular)
        #expect(first["b/deep/z.txt"]?.hash == F.hash("z2"))

        // Local makes b a file; other edits and adds inside: other's subtree is recorded whole.
        let localFile = otherFile
        let otherInside = F.putting([F.file("b/deep/z.txt", "z3"), F.file("b/added", "+")], into: base)
        let second = TreeMerge(base: base, local: localFile, other: otherInside)
        #expect(second.conflicts.map(\.kind) == [.typeChanged])
        #expect(second["b"]?.kind == .regular)
        #expect(second["b/deep"] == nil)
        #expect(second.conflicts[0].other?.kind == .directory)
        #expect(second.conflicts[0].otherDescendants.map(\.path) == ["b/added", "b/deep", "b/deep/z.txt"])

        // A file made a link on one side and edited on the other.
        let localLink = F.putting([F.link("run.sh", "top.txt")], into: base)
        let otherEdit = F.putting([F.file("run.sh", "#!/bin/bash")], into: base)
        let third = TreeMerge(base: base, local: localLink, other: otherEdit)
        #expect(third.conflicts.map(\.kind) == [.typeChanged])
        #expect(third["run.sh"]?.kind == .symbolicLink)
        #expect(third.conflicts[0].other?.hash == F.hash("#!/bin/bash"))
    }

    @Test("added on both sides: the same content once, different content a conflict")
    func addAdd() {
        let same = F.putting([F.file("new.txt", "n")], into: base)
        #expect(TreeMerge(base: base, local: same, other: same).isClean)

        let local = F.putting([F.file("new.txt", "mine")], into: base)
        let other = F.putting([F.file("new.txt", "theirs")], into: base)
        let merge = TreeMerge(base: base, local: local, other: other)
        #expect(merge.conflicts.map(\.kind) == [.addedDifferently])
        #expect(merge.conflicts[0].base == nil)
        #expect(merge["new.txt"]?.hash == F.hash("mine"))

        // A file against a directory: local's file, other's directory recorded with its contents.
        let otherDirectory = F.putting([F.directory("new.txt"), F.file("new.txt/in", "in")], into: base)
        let kinds = TreeMerge(base: base, local: local, other: otherDirectory)
        #expect(kinds.conflicts.map(\.kind) == [.addedDifferently])
        #expect(kinds.conflicts[0].otherDescendants.map(\.path) == ["new.txt/in"])
        #expect(kinds["new.txt/in"] == nil)

        // Two new directories merge by their children.
        let localTree = F.putting([F.directory("n"), F.file("n/l", "l"), F.file("n/both", "b")], into: base)
        let otherTree = F.putting([F.directory("n"), F.file("n/o", "o"), F.file("n/both", "b")], into: base)
        let directories = TreeMerge(base: base, local: localTree, other: otherTree)
        #expect(directories.isClean)
        #expect(directories.lines.filter { $0.hasPrefix("n") } == ["n local", "n/both local", "n/l local", "n/o other"])
    }

    @Test("a directory deleted on one side, an addition or edit inside on the other: kept, with a conflict")
    func deletedDirectoryWithAddition() {
        let deleted = F.removing("b", from: base)
        let added = F.putting([F.file("b/deep/new.txt", "new")], into: base)

        let merge = TreeMerge(base: base, local: deleted, other: added)
        #expect(merge.conflicts.map(\.kind) == [.deletedModified])
        #expect(merge.conflicts[0].path == "b/deep/new.txt")
        // The parents of what is kept stay; the unchanged file local deleted goes.
        #expect(merge.lines.filter { $0.hasPrefix("b") } == ["b other", "b/deep other", "b/deep/new.txt other"])

        let mirrored = TreeMerge(base: base, local: added, other: deleted)
        #expect(mirrored.conflicts.map(\.kind) == [.modifiedDeleted])
        #expect(mirrored.lines.filter { $0.hasPrefix("b") } == ["b local", "b/deep local", "b/deep/new.txt local"])

        // An edit inside rather than an addition.
        let edited = F.putting([F.file("a/y.txt", "y2")], into: base)
        let editMerge = TreeMerge(base: base, local: F.removing("a", from: base), other: edited)
        #expect(editMerge.conflicts.map(\.path) == ["a/y.txt"])
        #expect(editMerge.lines.filter { $0.hasPrefix("a") } == ["a other", "a/y.txt other"])

        // Nothing changed inside: the directory goes, cleanly.
        let clean = TreeMerge(base: base, local: deleted, other: F.putting([F.file("top.txt", "t2")], into: base))
        #expect(clean.isClean)
        #expect(clean["b"] == nil)
    }

    @Test("permission bits merge apart from content: one side's chmod and the other's edit both survive")
    func permissionsIndependent() {
        let local = F.chmod("run.sh", 0o755, in: base)
        let other = F.putting([F.file("run.sh", "#!/bin/sh\necho hi")], into: base)
        let merge = TreeMerge(base: base, local: local, other: other)
        #expect(merge.isClean)
        #expect(merge["run.sh"]?.permissions == 0o755)
        #expect(merge["run.sh"]?.hash == F.hash("#!/bin/sh\necho hi"))
        #expect(merge["run.sh"]?.tag == .executableFile)
        #expect(merge.source(of: "run.sh") == .other)

        let twoModes = TreeMerge(base: base, local: local, other: F.chmod("run.sh", 0o600, in: base))
        #expect(twoModes.conflicts.map(\.kind) == [.permissionsDiffer])
        #expect(twoModes["run.sh"]?.permissions == 0o755)
        #expect(twoModes.conflicts[0].other?.permissions == 0o600)
    }

    @Test("a mode change the Merkle hash does not see, inside a subtree equal on all sides, still merges")
    func permissionsInsideEqualSubtree() {
        // 0o600 and 0o644 hash alike (only the executable bit is in the tree hash).
        let local = F.chmod("b/deep/z.txt", 0o600, in: base)
        let other = F.chmod("b/deep", 0o700, in: base)
        #expect(local.rootHash == base.rootHash)
        let merge = TreeMerge(base: base, local: local, other: other)
        #expect(merge.isClean)
        #expect(merge["b/deep/z.txt"]?.permissions == 0o600)
        #expect(merge.source(of: "b/deep/z.txt") == .local)
        #expect(merge["b/deep"]?.permissions == 0o700)
        #expect(merge.source(of: "b/deep") == .other)

        // Deleted on one side, a hidden mode change on the other: kept, with a conflict.
        let deleted = TreeMerge(base: base, local: F.removing("b", from: base), other: local)
        #expect(deleted.conflicts.map(\.path) == ["b/deep/z.txt"])
        #expect(deleted["b/deep/z.txt"]?.permissions == 0o600)
    }

    @Test("a subtree with one Merkle hash on all sides is taken without comparing its entries")
    func skipsEqualSubtrees() {
        // Bogus content below an unchanged directory hash: a merge that looked would report it.
        var other = base
        let index = other.index(of: "b/deep/z.txt")!
        other.entries[index].hash = ContentHash(high: 1, low: 2)
        let merge = TreeMerge(base: base, local: base, other: other)
        #expect(merge.isClean)
        #expect(merge["b/deep/z.txt"]?.hash == F.hash("z"))
        #expect(merge.source(of: "b/deep/z.txt") == .base)
    }

    @Test("canonically equivalent twins stay two paths through the merge")
    func twins() {
        let composed = "caf\u{e9}"
        let decomposed = "cafe\u{301}"
        let start = F.putting([F.file(composed, "nfc"), F.directory("d"), F.file("d/" + composed, "in")], into: base)
        let local = F.putting([F.file(composed, "nfc, local")], into: start)
        let other = F.putting([F.file(decomposed, "nfd, other"), F.file("d/" + decomposed, "in, other")], into: start)
        let merge = TreeMerge(base: start, local: local, other: other)
        #expect(merge.isClean)
        #expect(merge.entry(at: RelativePath(validating: composed)!)?.hash == F.hash("nfc, local"))
        #expect(merge.entry(at: RelativePath(validating: decomposed)!)?.hash == F.hash("nfd, other"))
        #expect(merge.entry(at: RelativePath(validating: "d/" + composed)!)?.hash == F.hash("in"))
        #expect(merge.entry(at: RelativePath(validating: "d/" + decomposed)!)?.hash == F.hash("in, other"))
        #expect(merge.tree.entries.count == start.entries.count + 2)

        // One side deletes one twin, the other edits the other twin: no confusion between them.
        let both = F.putting([F.file(decomposed, "nfd")], into: start)
        let deletes = TreeMerge(
            base: both, local: F.removing(composed, from: both), other: F.putting([F.file(decomposed, "nfd2")], into: both))
        #expect(deletes.isClean)
        #expect(deletes.entry(at: RelativePath(validating: composed)!) == nil)
        #expect(deletes.entry(at: RelativePath(validating: decomposed)!)?.hash == F.hash("nfd2"))
    }

    @Test("a resolver settles conflicts: its own bytes, other's version, or local's deletion")
    func resolver() {
        let start = F.putting([F.file("metadata.json", "{}")], into: base)
        let local = F.putting([F.file("metadata.json", "{\"a\":1}")], into: F.removing("top.txt", from: start))
        let other = F.putting(
            [F.file("metadata.json", "{\"b\":2}"), F.file("top.txt", "t2"), F.file("a/x.txt", "x2")],
            into: start)
        let local2 = F.putting([F.file("a/x.txt", "x1")], into: local)
        var seen: [RelativePath] = []
        let combined = F.file("ignored/path", "{\"a\":1,\"b\":2}")
        let merge = TreeMerge(base: start, local: local2, other: other) { conflict in
            seen.append(conflict.path)
            switch conflict.path {
            case "metadata.json": return .use(combined)
            case "top.txt": return .takeLocal
            default: return nil
            }
        }
        #expect(seen == ["a/x.txt", "metadata.json", "top.txt"])
        #expect(merge.conflicts.map(\.path) == ["a/x.txt"])
        #expect(merge.resolved.map(\.conflict.path) == ["metadata.json", "top.txt"])
        #expect(merge["metadata.json"]?.hash == F.hash("{\"a\":1,\"b\":2}"))
        #expect(merge["metadata.json"]?.path == "metadata.json")
        #expect(merge.source(of: "metadata.json") == .resolver)
        #expect(merge["top.txt"] == nil)

        let theirs = TreeMerge(base: start, local: local2, other: other) { _ in .takeOther }
        #expect(theirs.isClean)
        #expect(theirs["a/x.txt"]?.hash == F.hash("x2"))
        #expect(theirs.source(of: "a/x.txt") == .other)
        #expect(theirs["top.txt"]?.hash == F.hash("t2"))

        // A directory is no resolution: the conflict stays, local's version with it.
        let refused = TreeMerge(base: start, local: local2, other: other) { _ in .use(F.directory("x")) }
        #expect(refused.conflicts.count == 3)
        #expect(refused.resolved.isEmpty)
        #expect(refused["a/x.txt"]?.hash == F.hash("x1"))
    }
}
