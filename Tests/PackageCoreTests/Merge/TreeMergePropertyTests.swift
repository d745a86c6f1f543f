import PackageTestSupport
import Testing
@testable import PackageCore

/// The merge on a few hundred random trees with random edits on both sides (seeded, so a
/// failure names the seed that reproduces it).
@Suite("TreeMergeProperties")
struct TreeMergePropertyTests {
    typealias F = MergeFixtures

    /// Names that collide often, twins included.
    static let names = ["a", "b", "c.txt", "d.json", "caf\u{e9}", "cafe\u{301}", ".config"]
    /// Few contents, so that both sides often make the same change.
    static let texts = ["one", "two", "three", ""]
    static let modes: [UInt32] = [0o644, 0o755, 0o600]

    struct Random {
        var bytes: SeededBytes
        mutating func below(_ count: Int) -> Int { Int(bytes.next() % UInt64(count)) }
        mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
        mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
    }

    static func randomTree(_ random: inout Random) -> TreeSnapshot {
        var entries: [SnapshotEntry] = []
        func fill(_ directory: String, depth: Int) {
            for name in names where random.chance(45) {
                let path = RelativePath.join(directory, name)
                let roll = random.below(10)
                if roll < 3, depth < 3 {
                    entries.append(F.directory(path, permissions: random.chance(85) ? 0o755 : 0o700))
                    fill(path, depth: depth + 1)
                } else if roll < 9 {
                    entries.append(F.file(path, random.pick(texts), permissions: random.pick(modes)))
                } else {
                    entries.append(F.link(path, random.pick(names)))
                }
            }
        }
        fill("", depth: 0)
        return TreeSnapshot.assemble(entries)
    }

    /// `tree` after up to five random edits: content, mode, deletion, addition, change of kind.
    static func edited(_ tree: TreeSnapshot, _ random: inout Random) -> TreeSnapshot {
        var entries = tree.entries
        for _ in 0..<random.below(6) {
            let roll = random.below(7)
            if roll >= 5 || entries.isEmpty {
                // An addition in the root or a random directory.
                let directories = [""] + entries.filter { $0.kind == .directory }.map(\.path)
                let path = RelativePath.join(random.pick(directories), random.pick(names))
                guard !entries.contains(where: { PathOrder.sameBytes($0.path, path) }) else { continue }
                if random.chance(30) {
                    entries += [F.directory(path), F.file(path + "/" + random.pick(names), random.pick(texts))]
                } else {
                    entries.append(F.file(path, random.pick(texts), permissions: random.pick(modes)))
                }
                continue
            }
            let index = random.below(entries.count)
            let entry = entries[index]
            switch roll {
            case 0 where entry.kind == .regular:
                entries[index] = F.file(entry.path, random.pick(texts), permissions: entry.permissions)
            case 0, 1:
                entries[index].permissions = entry.kind == .directory ? 0o700 : random.pick(modes)
            case 2, 3:
                entries.removeAll { PathOrder.isSelfOrDescendant($0.path, of: entry.path) }
            default:
                entries.removeAll { PathOrder.isSelfOrDescendant($0.path, of: entry.path) }
                switch entry.kind {
                case .directory: entries.append(F.file(entry.path, random.pick(texts)))
                case .regular where random.chance(50): entries.append(F.link(entry.path, random.pick(names)))
                default: entries += [F.directory(entry.path), F.file(entry.path + "/" + random.pick(names), "in")]
                }
            }
        }
        return TreeSnapshot.assemble(entries)
    }

    /// The entries at and beneath `path` (none when the tree has no such path).
    static func subtree(_ tree: TreeSnapshot, _ path: String) -> ArraySlice<SnapshotEntry> {
        guard let index = tree.index(of: path) else { return [] }
        return tree.entries[index..<(index + tree.entries[index].subtreeSpan)]
    }

    static func same(_ a: ArraySlice<SnapshotEntry>, _ b: ArraySlice<SnapshotEntry>) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { PathOrder.sameBytes($0.path, $1.path) && $0.sameForMerge(as: $1) }
    }

    static func entry(_ tree: TreeSnapshot, _ path: String) -> SnapshotEntry? { tree.index(of: path).map { tree.entries[$0] } }

    /// Whether `merged` carries the change `changed` made to `old` (nil: added), dimension by
    /// dimension: kind, content, permission bits.
    static func carries(_ merged: SnapshotEntry?, change changed: SnapshotEntry, from old: SnapshotEntry?) -> Bool {
        guard let merged else { return false }
        guard let old, old.kind == changed.kind else { return merged.sameForMerge(as: changed) }
        if !old.sameContentForMerge(as: changed), !merged.sameContentForMerge(as: changed) { return false }
        if old.permissions != changed.permissions, merged.permissions != changed.permissions { return false }
        return true
    }

    @Test("no change is lost, the tree is well formed, and merging a side with itself or base gives it back")
    func randomMerges() {
        for seed in UInt64(1)...400 {
            var random = Random(bytes: SeededBytes(seed: seed))
            let base = Self.randomTree(&random)
            let local = Self.edited(base, &random)
            let other = Self.edited(base, &random)
            check(base: base, local: local, other: other, seed: seed)
        }
    }

    func check(base: TreeSnapshot, local: TreeSnapshot, other: TreeSnapshot, seed: UInt64) {
        let note = "seed \(seed)"
        let merge = TreeMerge(base: base, local: local, other: other)
        let tree = merge.tree

        // Well formed: strictly depth-first, every parent a directory of the tree, hashes right.
        #expect(merge.sources.count == tree.entries.count, "\(note)")
        for (previous, next) in zip(tree.entries, tree.entries.dropFirst()) {
            #expect(PathOrder.pathLess(previous.path, next.path), "\(note)")
        }
        for entry in tree.entries {
            let parent = RelativePath.parent(of: entry.path)
            if !parent.isEmpty { #expect(Self.entry(tree, parent)?.kind == .directory, "\(note)") }
        }
        #expect(tree == TreeSnapshot.assemble(tree.entries), "\(note)")

        // merge(base, x, x) == x, merge(base, base, x) == x, merge(base, x, base) == x.
        for x in [local, other] {
            for (mine, theirs) in [(x, x), (base, x), (x, base)] {
                let again = TreeMerge(base: base, local: mine, other: theirs)
                #expect(again.isClean, "\(note)")
                #expect(again.tree == x, "\(note)")
            }
        }

        // Per path: changed on one side only, the merged subtree is that side's; on neither,
        // base's. Sources say base exactly where all three agree. Beneath a conflict over a
        // kind, local's subtree is kept whole and other's recorded whole instead.
        var paths: [String] = []
        for snapshot in [base, local, other] { paths += snapshot.entries.map(\.path) }
        let wholeSubtrees = merge.conflicts.filter { $0.kind == .typeChanged || $0.kind == .addedDifferently }
        for path in paths where !wholeSubtrees.contains(where: { PathOrder.isDescendant(path, of: $0.path.string) }) {
            let old = Self.subtree(base, path)
            let localChanged = !Self.same(old, Self.subtree(local, path))
            let otherChanged = !Self.same(old, Self.subtree(other, path))
            let merged = Self.subtree(tree, path)
            let expected: (TreeSnapshot, MergeSource)?
            switch (localChanged, otherChanged) {
            case (true, false): expected = (local, .local)
            case (false, true): expected = (other, .other)
            case (false, false): expected = (base, .base)
            case (true, true): expected = nil
            }
            guard let (side, source) = expected else { continue }
            #expect(Self.same(merged, Self.subtree(side, path)), "\(note): \(path) changed on one side")
            for entry in merged {
                let unchanged = [base, local, other].allSatisfy { Self.entry($0, entry.path)?.sameForMerge(as: entry) == true }
                let label = merge.source(of: RelativePath(trusted: entry.path))
                #expect(label == (unchanged ? .base : source), "\(note): source of \(entry.path)")
            }
        }

        // Every change local made is in the merged tree (local wins conflicts); every change
        // other made is there too, or in a conflict record.
        for entry in local.entries {
            let old = Self.entry(base, entry.path)
            guard old.map({ !$0.sameForMerge(as: entry) }) ?? true else { continue }
            #expect(Self.carries(Self.entry(tree, entry.path), change: entry, from: old), "\(note): local's \(entry.path)")
        }
        for entry in other.entries {
            let old = Self.entry(base, entry.path)
            guard old.map({ !$0.sameForMerge(as: entry) }) ?? true else { continue }
            if Self.carries(Self.entry(tree, entry.path), change: entry, from: old) { continue }
            let recorded = merge.conflicts.contains { conflict in
                (PathOrder.sameBytes(conflict.path.string, entry.path) && conflict.other == entry)
                    || conflict.otherDescendants.contains(entry)
            }
            #expect(recorded, "\(note): other's \(entry.path) neither merged nor recorded")
        }

        // Each conflict: local's version kept (other's where local deleted what other changed).
        for conflict in merge.conflicts {
            let kept = Self.entry(tree, conflict.path.string)
            switch conflict.kind {
            case .deletedModified:
                #expect(conflict.other.map { kept?.sameForMerge(as: $0) == true } == true, "\(note)")
            case .permissionsDiffer:
                #expect(kept?.permissions == conflict.local?.permissions, "\(note)")
            default:
                #expect(conflict.local.map { kept?.sameForMerge(as: $0) == true } == true, "\(note)")
            }
        }
    }

    @Test("the random edits reach every conflict kind")
    func coverage() {
        var kinds: Set<MergeConflict.Kind> = []
        for seed in UInt64(1)...400 {
            var random = Random(bytes: SeededBytes(seed: seed))
            let base = Self.randomTree(&random)
            let merge = TreeMerge(base: base, local: Self.edited(base, &random), other: Self.edited(base, &random))
            kinds.formUnion(merge.conflicts.map(\.kind))
        }
        #expect(kinds == Set(MergeConflict.Kind.allCases))
    }
}
