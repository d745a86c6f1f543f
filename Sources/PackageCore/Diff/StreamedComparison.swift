/// Compares a tree held whole with one that arrives entry by entry (a remote version's
/// manifest as it is decoded), keeping of the streamed tree only what differs: a diff then
/// holds one tree, not two.
///
/// The result is the two trees pruned to where they differ: an entry is left out of both
/// when the other tree has one at the same path (the same bytes) of the same kind and
/// content — a file or link of the same hash and tag, a directory of the same Merkle hash.
/// What remains on each side is closed under parents (a parent of an entry that differs
/// differs too), keeps its real hashes, and has its descendant counts recounted, so
/// `TreeDiff` finds in the pruned pair exactly what it finds in the whole trees: the walk
/// only skips what was left out, and renames pair the same deleted and added subtrees,
/// which are kept whole.
///
/// - Complexity: O(n + m) path comparisons; beyond the held tree it keeps one bit per held
///   entry and the streamed entries that differ.
package struct StreamedComparison: TreeEntrySink {
    private let held: [SnapshotEntry]
    /// The next held entry not yet reached by the stream.
    private var cursor = 0
    /// Held entries equal to their streamed counterpart, one bit each.
    private var same: [UInt64]
    /// The streamed entries that differ, in order.
    private var kept: [SnapshotEntry] = []
    /// Each streamed directory entered and not finished: its place in `kept`, and the
    /// held directory at its path, if any.
    private var open: [(kept: Int, held: Int?)] = []

    /// Whether entries of the same content whose permission bits differ differ (a save
    /// applies them; a tree's hashes see only the executable bit).
    private let comparesPermissions: Bool

    /// A comparison of `held` with the tree to be streamed into it; with
    /// `comparingPermissions`, entries whose permission bits differ differ too.
    package init(held: [SnapshotEntry], comparingPermissions: Bool = false) {
        self.held = held
        comparesPermissions = comparingPermissions
        same = [UInt64](repeating: 0, count: (held.count + 63) / 64)
    }

    /// Whether the held entry at `index` has the permission bits a streamed one has, as far
    /// as this comparison looks.
    private func samePermissions(_ index: Int, _ permissions: UInt32) -> Bool {
        !comparesPermissions || held[index].permissions == permissions
    }

    package mutating func enter(_ entry: SnapshotEntry) {
        // Held entries before this path have no counterpart: they stay.
        var match: Int?
        while cursor < held.count {
            let order = SnapshotEntry.comparePaths(held[cursor], entry)
            if order > 0 { break }
            cursor += 1
            if order == 0 {
                match = cursor - 1
                break
            }
        }
        if entry.kind == .directory {
            // Equal or not is known when it finishes, from its Merkle hash.
            open.append((kept.count, match.flatMap { held[$0].kind == .directory ? $0 : nil }))
            kept.append(entry)
        } else if let match, held[match].kind == entry.kind, held[match].hash == entry.hash, held[match].tag == entry.tag,
            samePermissions(match, entry.permissions)
        {
            markSame(match)
        } else {
            kept.append(entry)
        }
    }

    package mutating func finishDirectory(hash: ContentHash) {
        let (index, match) = open.removeLast()
        // Equal hashes: equal subtrees, whose entries were all left out already.
        if let match, held[match].hash == hash, kept.count == index + 1, samePermissions(match, kept[index].permissions) {
            kept.removeLast()
            markSame(match)
            return
        }
        kept[index].hash = hash
        kept[index].size = 0
        kept[index].descendantCount = kept.count - index - 1
    }

    /// The two trees pruned to where they differ, once the streamed one has ended: its
    /// root hash is `streamedRoot` (the held tree's is `heldRoot`).
    package consuming func pruned(heldRoot: ContentHash, streamedRoot: ContentHash)
        -> (held: TreeSnapshot, streamed: TreeSnapshot)
    {
        let streamed = TreeSnapshot(entries: kept, rootHash: streamedRoot)
        return (TreeSnapshot(entries: prunedHeld(), rootHash: heldRoot), streamed)
    }

    /// The held entries not marked the same, with directories' descendant counts recounted.
    private func prunedHeld() -> [SnapshotEntry] {
        var entries: [SnapshotEntry] = []
        // Directories kept and not closed: their place in `entries`, and where their
        // subtree ends in `held`.
        var open: [(index: Int, end: Int)] = []
        for index in held.indices where same[index >> 6] & (1 << UInt64(index & 63)) == 0 {
            while let top = open.last, top.end <= index {
                entries[top.index].descendantCount = entries.count - top.index - 1
                open.removeLast()
            }
            if held[index].kind == .directory { open.append((entries.count, index + held[index].subtreeSpan)) }
            entries.append(held[index])
        }
        for top in open.reversed() { entries[top.index].descendantCount = entries.count - top.index - 1 }
        return entries
    }

    private mutating func markSame(_ index: Int) { same[index >> 6] |= 1 << UInt64(index & 63) }
}
