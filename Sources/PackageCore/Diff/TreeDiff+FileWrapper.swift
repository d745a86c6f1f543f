extension TreeDiff {
    /// The changes that turn the tree `old` into `new` (two directory wrappers), as
    /// `changes(from:to:)` gives them for snapshots.
    ///
    /// Walks both trees together and never descends where a child is the same wrapper on
    /// both sides or has the same tag and content hash (cached hashes make that O(1)), so
    /// two versions of a document held in memory compare in proportion to what changed.
    /// - Throws: `FileSystemError` when hashing a file read from disk fails (it vanished).
    /// - Complexity: O(c·f) for c changed nodes with f children each, plus hashing whatever
    ///   is not hashed yet.
    public static func changes(from old: FileWrapper, to new: FileWrapper, detectRenames: Bool = true) throws
        -> [TreeChange]
    {
        let oldHash = try old.contentHash
        let newHash = try new.contentHash
        if oldHash == newHash { return [] }
        var before: [SnapshotEntry] = []
        var after: [SnapshotEntry] = []
        try compare(old, new, prefix: "", before: &before, after: &after)
        let oldSnapshot = TreeSnapshot(
            entries: PackageManifest.withDescendantCounts(before.sorted { PathOrder.pathLess($0.path, $1.path) }),
            rootHash: oldHash)
        let newSnapshot = TreeSnapshot(
            entries: PackageManifest.withDescendantCounts(after.sorted { PathOrder.pathLess($0.path, $1.path) }),
            rootHash: newHash)
        return changes(from: oldSnapshot, to: newSnapshot, detectRenames: detectRenames)
    }

    /// Appends the entries of two directories that take part in the comparison: unequal
    /// children (and, below unequal directories, their children), whole subtrees where a
    /// child exists on one side only, and equal children as single entries (skipped).
    private static func compare(
        _ old: FileWrapper, _ new: FileWrapper, prefix: String, before: inout [SnapshotEntry],
        after: inout [SnapshotEntry]
    ) throws {
        let oldChildren = old.sortedChildren ?? []
        let newChildren = new.sortedChildren ?? []
        var i = 0
        var j = 0
        var unusedNodes: [FileWrapper] = []
        while i < oldChildren.count || j < newChildren.count {
            let order: Int
            if i == oldChildren.count {
                order = 1
            } else if j == newChildren.count {
                order = -1
            } else {
                order = PathOrder.compareBytes(oldChildren[i].name.string, newChildren[j].name.string, slashIsLowest: false)
            }
            if order < 0 {
                let (name, child) = oldChildren[i]
                try appendSubtree(child, path: join(prefix, name.string), into: &before, nodes: &unusedNodes)
                i += 1
                continue
            }
            if order > 0 {
                let (name, child) = newChildren[j]
                try appendSubtree(child, path: join(prefix, name.string), into: &after, nodes: &unusedNodes)
                j += 1
                continue
            }
            let path = join(prefix, oldChildren[i].name.string)
            let was = oldChildren[i].child
            let now = newChildren[j].child
            i += 1
            j += 1
            if was === now { continue }
            let wasHash = try was.contentHash
            let nowHash = try now.contentHash
            if was.entryTag == now.entryTag && wasHash == nowHash { continue }
            if was.isDirectory && now.isDirectory {
                before.append(was.snapshotEntry(path: path))
                after.append(now.snapshotEntry(path: path))
                try compare(was, now, prefix: path, before: &before, after: &after)
            } else {
                try appendSubtree(was, path: path, into: &before, nodes: &unusedNodes)
                try appendSubtree(now, path: path, into: &after, nodes: &unusedNodes)
            }
        }
    }

    private static func appendSubtree(
        _ node: FileWrapper, path: String, into entries: inout [SnapshotEntry], nodes: inout [FileWrapper]
    ) throws {
        _ = try node.contentHash
        entries.append(node.snapshotEntry(path: path))
        if node.isDirectory { node.appendEntries(prefix: path, into: &entries, nodes: &nodes) }
    }

    private static func join(_ prefix: String, _ name: String) -> String {
        prefix.isEmpty ? name : prefix + "/" + name
    }
}
