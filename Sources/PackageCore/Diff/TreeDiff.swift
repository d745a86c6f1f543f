/// Compares two snapshots of a tree.
///
/// Both are walked together in depth-first path order; a directory whose hash is equal on
/// both sides is skipped without descending (its descendant count says how far), so two
/// hashed trees compare in time proportional to what changed, not to their size.
public enum TreeDiff {
    /// The changes that turn `old` into `new`, sorted by path.
    ///
    /// Additions and deletions are listed entry by entry (directories included, so empty
    /// directories show), except where a whole subtree or file moved: identical content
    /// deleted once and added once becomes one rename. A path whose kind changed is
    /// reported as `T`, with the contents of a directory on either side as deletions or
    /// additions.
    ///
    /// - Complexity: O(c·d) for c changed entries at depth d, plus O(k log k) to sort k changes.
    public static func changes(from old: TreeSnapshot, to new: TreeSnapshot, detectRenames: Bool = true)
        -> [TreeChange]
    {
        var walk = Walk(old: old.entries, new: new.entries)
        walk.run()
        var changes = walk.changes
        var deletedRoots = walk.deletedRoots
        var addedRoots = walk.addedRoots
        if detectRenames {
            changes += pairUniqueContent(&deletedRoots, &addedRoots, old: old.entries, new: new.entries)
        }
        var deleted = expand(deletedRoots, old.entries)
        var added = expand(addedRoots, new.entries)
        if detectRenames {
            // Single files and links that moved out of subtrees that did not move as a whole.
            var deletedLeaves = deleted.filter { old.entries[$0].kind != .directory }
            var addedLeaves = added.filter { new.entries[$0].kind != .directory }
            let moved = pairUniqueContent(&deletedLeaves, &addedLeaves, old: old.entries, new: new.entries)
            if !moved.isEmpty {
                changes += moved
                let movedOld = Set(moved.compactMap { old.index(ofPath: $0.oldPath) })
                let movedNew = Set(moved.compactMap { new.index(ofPath: $0.path) })
                deleted.removeAll { movedOld.contains($0) }
                added.removeAll { movedNew.contains($0) }
            }
        }
        for index in deleted {
            changes.append(TreeChange(status: .deleted, path: old.entries[index].path, oldEntry: old.entries[index]))
        }
        for index in added {
            changes.append(TreeChange(status: .added, path: new.entries[index].path, newEntry: new.entries[index]))
        }
        return changes.sorted { PathOrder.pathLess($0.path, $1.path) }
    }

    /// Every entry of the subtrees rooted at `roots`.
    private static func expand(_ roots: [Int], _ entries: [SnapshotEntry]) -> [Int] {
        roots.flatMap { root in Array(root..<(root + entries[root].subtreeSpan)) }
    }

    /// The merge walk: modifications and type changes directly; deleted and added
    /// subtrees as their roots, for rename matching.
    private struct Walk {
        let old: [SnapshotEntry]
        let new: [SnapshotEntry]
        var changes: [TreeChange] = []
        var deletedRoots: [Int] = []
        var addedRoots: [Int] = []

        init(old: [SnapshotEntry], new: [SnapshotEntry]) {
            self.old = old
            self.new = new
        }

        /// One merge of the two path-sorted lists (`PathOrder.mergeJoin`, the save plan's
        /// walk too), skipping equal subtrees whole.
        mutating func run() {
            let old = self.old
            let new = self.new
            var changes: [TreeChange] = []
            var deletedRoots: [Int] = []
            var addedRoots: [Int] = []
            PathOrder.mergeJoin(old, new) { step in
                switch step {
                case .left(let i):
                    deletedRoots.append(i)
                    return (old[i].subtreeSpan, 0)
                case .right(let j):
                    addedRoots.append(j)
                    return (0, new[j].subtreeSpan)
                case .both(let i, let j):
                    let before = old[i]
                    let after = new[j]
                    if before.kind != after.kind {
                        changes.append(TreeChange(status: .typeChanged, path: after.path, oldEntry: before, newEntry: after))
                        // The contents of a directory that became (or replaced) something else.
                        if before.kind == .directory { Self.appendChildren(of: i, in: old, to: &deletedRoots) }
                        if after.kind == .directory { Self.appendChildren(of: j, in: new, to: &addedRoots) }
                        return (before.subtreeSpan, after.subtreeSpan)
                    }
                    if before.kind == .directory {
                        // Equal hashes: equal subtrees, skipped without descending.
                        return before.hash == after.hash ? (before.subtreeSpan, after.subtreeSpan) : (1, 1)
                    }
                    if before.hash != after.hash || before.tag != after.tag {
                        changes.append(TreeChange(status: .modified, path: after.path, oldEntry: before, newEntry: after))
                    }
                    return (1, 1)
                }
            }
            self.changes = changes
            self.deletedRoots = deletedRoots
            self.addedRoots = addedRoots
        }

        /// Appends each child subtree of `directory` as a root.
        private static func appendChildren(of directory: Int, in entries: [SnapshotEntry], to roots: inout [Int]) {
            var child = directory + 1
            let end = directory + entries[directory].subtreeSpan
            while child < end {
                roots.append(child)
                child += entries[child].subtreeSpan
            }
        }
    }

    /// Pairs entries of `deleted` and `added` with identical content (same tag and hash)
    /// that occurs exactly once on each side, removes them from both lists, and returns
    /// them as renames. Empty files and empty directories carry no content to follow and
    /// are never paired (git skips empty files the same way).
    private static func pairUniqueContent(
        _ deleted: inout [Int], _ added: inout [Int], old: [SnapshotEntry], new: [SnapshotEntry]
    ) -> [TreeChange] {
        guard !deleted.isEmpty, !added.isEmpty else { return [] }
        struct Key: Hashable {
            var tag: EntryTag
            var hash: ContentHash
        }
        func unique(_ indices: [Int], _ entries: [SnapshotEntry]) -> [Key: Int] {
            var seen: [Key: Int] = [:]
            var duplicated: Set<Key> = []
            for index in indices where !entries[index].isEmptyContent {
                let key = Key(tag: entries[index].tag, hash: entries[index].hash)
                if seen.updateValue(index, forKey: key) != nil { duplicated.insert(key) }
            }
            for key in duplicated { seen.removeValue(forKey: key) }
            return seen
        }
        let newByKey = unique(added, new)
        var renames: [TreeChange] = []
        var pairedOld: Set<Int> = []
        var pairedNew: Set<Int> = []
        for (key, oldIndex) in unique(deleted, old) {
            guard let newIndex = newByKey[key] else { continue }
            pairedOld.insert(oldIndex)
            pairedNew.insert(newIndex)
            renames.append(
                TreeChange(
                    status: .renamed, path: new[newIndex].path, oldPath: old[oldIndex].path,
                    oldEntry: old[oldIndex], newEntry: new[newIndex]))
        }
        deleted.removeAll { pairedOld.contains($0) }
        added.removeAll { pairedNew.contains($0) }
        return renames
    }
}

extension SnapshotEntry {
    /// An empty file or an empty directory.
    var isEmptyContent: Bool {
        switch kind {
        case .regular: return size == 0
        case .directory: return descendantCount == 0
        default: return false
        }
    }

    /// This entry and everything beneath it: how far to step to reach its next sibling.
    @inlinable
    public var subtreeSpan: Int { kind == .directory ? descendantCount + 1 : 1 }
}
