import Testing
@testable import PackageCore

/// A tree streamed entry by entry (`MerkleStack`) into a `TreeCollector` is the tree, and
/// into a `StreamedComparison` gives a pruned pair in which `TreeDiff` finds exactly what it
/// finds in the whole trees, whichever side is held.
@Suite("StreamedComparison")
struct StreamedComparisonTests {
    let base = Snapshots.make([
        ("a", .directory), ("a/x.txt", .file("x")), ("a/y.txt", .file("y")),
        ("b", .directory), ("b/deep", .directory), ("b/deep/z.txt", .file("z")), ("empty", .directory),
        ("link", .link("a/x.txt")), ("run.sh", .file("#!/bin/sh")), ("top.txt", .file("top")),
    ])

    /// Hands `tree`'s entries to `sink` as a decoder does: directories without their hash
    /// or count. The root hash the stack computed.
    static func stream(_ tree: TreeSnapshot, into sink: inout some TreeEntrySink) -> ContentHash {
        var merkle = MerkleStack()
        for var entry in tree.entries {
            if entry.kind == .directory {
                entry.hash = ContentHash(high: 0, low: 0)
                entry.descendantCount = 0
            }
            merkle.add(entry, to: &sink)
        }
        return merkle.finish(into: &sink)
    }

    /// What `diff` prints for `old` and `new`, the whole trees compared.
    static func wholeDiff(_ old: TreeSnapshot, _ new: TreeSnapshot, renames: Bool) -> [TreeChange] {
        old.rootHash == new.rootHash ? [] : TreeDiff.changes(from: old, to: new, detectRenames: renames)
    }

    /// The same, with one side held and the other streamed into a `StreamedComparison`.
    static func streamedDiff(_ old: TreeSnapshot, _ new: TreeSnapshot, holdingOld: Bool, renames: Bool) -> [TreeChange] {
        var comparison = StreamedComparison(held: holdingOld ? old.entries : new.entries)
        let streamedRoot = stream(holdingOld ? new : old, into: &comparison)
        #expect(streamedRoot == (holdingOld ? new : old).rootHash)
        let pruned = comparison.pruned(heldRoot: (holdingOld ? old : new).rootHash, streamedRoot: streamedRoot)
        let (prunedOld, prunedNew) = holdingOld ? (pruned.held, pruned.streamed) : (pruned.streamed, pruned.held)
        return wholeDiff(prunedOld, prunedNew, renames: renames)
    }

    func expectSameChanges(_ old: TreeSnapshot, _ new: TreeSnapshot, sourceLocation: SourceLocation = #_sourceLocation) {
        for renames in [true, false] {
            let whole = Self.wholeDiff(old, new, renames: renames)
            for holdingOld in [true, false] {
                let streamed = Self.streamedDiff(old, new, holdingOld: holdingOld, renames: renames)
                #expect(streamed == whole, "holding old: \(holdingOld), renames: \(renames)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test("a streamed tree collects into the very tree, hashes and counts included")
    func collectorRebuildsTheTree() {
        var collector = TreeCollector()
        let root = Self.stream(base, into: &collector)
        #expect(root == base.rootHash)
        #expect(collector.tree(rootHash: root) == base)
        var empty = TreeCollector()
        #expect(Self.stream(.empty, into: &empty) == TreeSnapshot.empty.rootHash)
    }

    @Test("equal trees prune to nothing on either side")
    func equalTreesPruneToNothing() {
        var comparison = StreamedComparison(held: base.entries)
        let root = Self.stream(base, into: &comparison)
        let pruned = comparison.pruned(heldRoot: base.rootHash, streamedRoot: root)
        #expect(pruned.held.entries.isEmpty && pruned.streamed.entries.isEmpty)
        #expect(pruned.held.rootHash == pruned.streamed.rootHash)
        expectSameChanges(base, base)
    }

    @Test("changed, added, removed, kinds changed, renamed: the changes of the whole trees")
    func changesOfTheWholeTrees() {
        let edited = Snapshots.make([
            ("a", .file("a is a file now")), ("b", .directory), ("b/deep", .link("x")), ("c", .directory),
            ("c/x.txt", .file("x")), ("c/y.txt", .file("y")), ("empty", .directory), ("empty/new", .directory),
            ("link", .link("a/y.txt")), ("run.sh", .file("#!/bin/sh", executable: true)), ("z", .file("top")),
        ])
        expectSameChanges(base, edited)
        expectSameChanges(edited, base)
        expectSameChanges(base, .empty)
        expectSameChanges(.empty, base)
    }

    @Test("NFC and NFD twins are different entries, compared as bytes")
    func twins() {
        let nfc = "\u{e9}"
        let nfd = "e\u{301}"
        let old = Snapshots.make([
            (nfd, .directory), (nfd + "/in.txt", .file("in")), (nfc, .file("precomposed")), ("caf" + nfc, .file("1")),
            ("caf" + nfd, .file("2")),
        ])
        let new = Snapshots.make([
            (nfd, .directory), (nfd + "/in.txt", .file("in, edited")), (nfc, .file("precomposed")), ("caf" + nfc, .file("1")),
            ("caf" + nfd, .file("2, edited")),
        ])
        let lines = Self.streamedDiff(old, new, holdingOld: true, renames: true).map(\.nameStatusLine)
        #expect(lines.map { Array($0.utf8) } == ["M\tcaf" + nfd, "M\t" + nfd + "/in.txt"].map { Array($0.utf8) })
        expectSameChanges(old, new)
        expectSameChanges(old, Snapshots.make([(nfc, .directory), (nfc + "/in.txt", .file("in")), (nfd, .file("precomposed"))]))
    }

    @Test("random trees and their random edits: the changes of the whole trees")
    func randomTrees() {
        var random = SeededRandom(seed: 7)
        for _ in 0..<300 {
            let nodes = RandomTree.make(&random)
            let edited = RandomTree.edit(nodes, &random)
            expectSameChanges(Snapshots.make(nodes), Snapshots.make(edited))
        }
    }
}

/// A small deterministic generator (SplitMix64).
struct SeededRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// Trees of a few levels over a handful of names (twins among them) and contents, so that
/// two of them share paths, contents and whole subtrees; and random edits of them.
enum RandomTree {
    static let names = ["a", "b", "\u{e9}", "e\u{301}", "z z"]
    static let contents = ["x", "y", "", "w"]

    static func make(_ random: inout SeededRandom, under parent: String = "", depth: Int = 0) -> [(String, Snapshots.Node)] {
        var nodes: [(String, Snapshots.Node)] = []
        for name in names where random.next(3) > 0 {
            let path = parent.isEmpty ? name : parent + "/" + name
            switch depth < 3 ? random.next(4) : 1 + random.next(3) {
            case 0:
                nodes.append((path, .directory))
                nodes += make(&random, under: path, depth: depth + 1)
            case 1: nodes.append((path, .link(contents[random.next(contents.count)])))
            default: nodes.append((path, .file(contents[random.next(contents.count)], executable: random.next(5) == 0)))
            }
        }
        return nodes
    }

    /// `nodes` after a few edits: contents and modes changed, subtrees removed, moved or
    /// replaced by another kind, files added.
    static func edit(_ nodes: [(String, Snapshots.Node)], _ random: inout SeededRandom) -> [(String, Snapshots.Node)] {
        var nodes = nodes
        for _ in 0..<(1 + random.next(4)) where !nodes.isEmpty {
            let index = random.next(nodes.count)
            let (path, node) = nodes[index]
            let inside = { (other: String) in PathOrder.isDescendant(other, of: path) }
            switch (random.next(5), node) {
            case (0, .file(let text, let executable)): nodes[index].1 = .file(text + "!", executable: !executable)
            case (1, _): nodes.removeAll { PathOrder.sameBytes($0.0, path) || inside($0.0) }
            case (2, .directory):
                let moved = "moved\(random.next(3))"
                guard !nodes.contains(where: { PathOrder.sameBytes($0.0, moved) }) else { continue }
                nodes = nodes.map { other in
                    guard PathOrder.sameBytes(other.0, path) || inside(other.0) else { return other }
                    return (moved + String(other.0.utf8.dropFirst(path.utf8.count))!, other.1)
                }
            case (3, _):
                nodes.removeAll { inside($0.0) }
                nodes[nodes.firstIndex { PathOrder.sameBytes($0.0, path) }!].1 = node.isDirectory ? .file("was a folder") : .directory
            default:
                let parent = nodes.first { $0.1.isDirectory }?.0
                let added = (parent.map { $0 + "/" } ?? "") + "added\(random.next(3))"
                guard !nodes.contains(where: { PathOrder.sameBytes($0.0, added) }) else { continue }
                nodes.append((added, .file(contents[random.next(contents.count)])))
            }
        }
        return nodes
    }
}

extension Snapshots.Node {
    var isDirectory: Bool {
        if case .directory = self { return true }
        return false
    }
}
