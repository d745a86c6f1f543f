/// The three-way merge of package trees: what two sides that last agreed on `base` become
/// together. Sync (another device's version) and the document host (another writer in this
/// process) both merge through it, so they follow one set of rules (Specs/remote.md,
/// "Merging").
///
/// Pure and I/O-free: it reads three snapshots and says, per path, which entry the merged
/// tree holds and which input holds its bytes. Entries are compared by kind, content hash
/// and size, link target and permission bits — never by modification time or inode — and
/// paths by their UTF-8 bytes.
public struct TreeMerge: Sendable, Equatable {
    /// The merged tree: depth-first in path order, every parent present, directory hashes
    /// recomputed.
    public var tree: TreeSnapshot
    /// For each entry of `tree.entries` (same index), the input that holds its bytes.
    public var sources: [MergeSource]
    /// The conflicts no resolver settled, in path order. The merged tree keeps local's
    /// version at each (other's when local deleted what other changed).
    public var conflicts: [MergeConflict]
    /// The conflicts a resolver settled, in path order.
    public var resolved: [ResolvedConflict]

    /// Whether the two sides merged without an unresolved conflict.
    public var isClean: Bool { conflicts.isEmpty }

    /// Merges `local` and `other`, which both started from `base`.
    ///
    /// Per path: a change on one side only is taken; the same change on both is taken once;
    /// anything else is a conflict (`MergeConflict.Kind`), handed to `resolve` first. Content
    /// and permission bits merge independently: one side's new bytes and the other's
    /// `chmod` both survive. A directory merges by its children; a directory deleted on one
    /// side stays as long as the other side changed or added something inside it.
    ///
    /// - Parameters:
    ///   - base: the state both sides last shared.
    ///   - local: this side's tree; its version wins a conflict.
    ///   - other: the other side's tree; its version of a conflict is recorded, not dropped.
    ///   - resolve: called once per conflict, in path order; nil keeps the default.
    /// - Complexity: O(n) over the three entry lists (plus the merged tree's hashing): one
    ///   merge walk. A subtree whose Merkle hash is equal on the sides compared is walked
    ///   index-aligned, comparing no path and only the permission bits the hash leaves out.
    public init(
        base: TreeSnapshot, local: TreeSnapshot, other: TreeSnapshot,
        resolve: (MergeConflict) -> MergeResolution? = { _ in nil }
    ) {
        let (entries, sources, conflicts, resolved) = withoutActuallyEscaping(resolve) { resolve in
            var walk = MergeWalk(base: base.entries, local: local.entries, other: other.entries, resolve: resolve)
            walk.run()
            return (walk.entries, walk.sources, walk.conflicts, walk.resolved)
        }
        tree = TreeSnapshot.assemble(entries)
        assert(
            zip(tree.entries, entries).allSatisfy { PathOrder.sameBytes($0.path, $1.path) },
            "the merge walk emitted entries out of path order")
        self.sources = sources
        self.conflicts = conflicts
        self.resolved = resolved
    }

    /// The merged entry at `path`, by binary search; nil when the merged tree has none.
    public func entry(at path: RelativePath) -> SnapshotEntry? {
        tree.index(of: path.string).map { tree.entries[$0] }
    }

    /// The input holding the bytes of the merged entry at `path`; nil when there is none.
    public func source(of path: RelativePath) -> MergeSource? {
        tree.index(of: path.string).map { sources[$0] }
    }
}

extension SnapshotEntry {
    /// Whether two entries are the same for a merge: kind, permission bits, and for a file
    /// or link its content hash, size and target. A directory's children are not looked at.
    func sameForMerge(as other: SnapshotEntry) -> Bool {
        permissions == other.permissions && sameContentForMerge(as: other)
    }

    /// `sameForMerge` without the permission bits.
    func sameContentForMerge(as other: SnapshotEntry) -> Bool {
        guard kind == other.kind else { return false }
        if kind == .directory { return true }
        guard hash == other.hash, size == other.size else { return false }
        switch (linkTarget, other.linkTarget) {
        case (nil, nil): return true
        case let (a?, b?): return PathOrder.sameBytes(a, b)
        default: return false
        }
    }
}
