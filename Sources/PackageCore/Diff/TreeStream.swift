/// What reads a tree handed over entry by entry, in depth-first path order, instead of
/// whole: a decoder of a stored tree (a remote version's manifest) need not build the
/// tree when its reader keeps only part of it (`StreamedComparison`).
package protocol TreeEntrySink {
    /// The next entry, beneath the directories entered and not yet finished. A directory's
    /// hash and descendant count are not known yet.
    mutating func enter(_ entry: SnapshotEntry)
    /// The innermost directory entered and not yet finished is complete: `hash` is its
    /// Merkle hash.
    mutating func finishDirectory(hash: ContentHash)
    /// About this many entries are coming (what arrived can hold, not what a header claims).
    mutating func reserve(_ likelyCount: Int)
}

extension TreeEntrySink {
    /// Reserves nothing: a sink that keeps little.
    package mutating func reserve(_ likelyCount: Int) {}
}

/// A sink that keeps every entry: the whole tree, directories' hashes and descendant
/// counts filled in as they finish (what `TreeSnapshot.assemble(_:)` makes of the same
/// entries).
package struct TreeCollector: TreeEntrySink {
    package private(set) var entries: [SnapshotEntry] = []
    /// Where each directory entered and not yet finished is in `entries`.
    private var open: [Int] = []

    package init() {}

    package mutating func reserve(_ likelyCount: Int) { entries.reserveCapacity(likelyCount) }

    package mutating func enter(_ entry: SnapshotEntry) {
        if entry.kind == .directory { open.append(entries.count) }
        entries.append(entry)
    }

    package mutating func finishDirectory(hash: ContentHash) {
        let index = open.removeLast()
        entries[index].hash = hash
        entries[index].size = 0
        entries[index].descendantCount = entries.count - index - 1
    }

    /// The tree collected, whose root hash is `rootHash`.
    package consuming func tree(rootHash: ContentHash) -> TreeSnapshot {
        TreeSnapshot(entries: entries, rootHash: rootHash)
    }
}

/// `MerkleWalk` for entries that arrive one at a time: each directory's hash from its
/// children's names, tags and hashes, computed when the entries have left it, and handed
/// to a sink with the entries. What it holds is one open directory per level.
///
/// Entries must make a tree in depth-first order (`TreeShapeCheck`): each one beneath a
/// directory entered before it, or at the top level.
package struct MerkleStack {
    /// A directory entered and not finished: its children's hashes so far.
    private final class Open {
        let path: String
        let name: String
        let tag: EntryTag
        var builder: TreeHashBuilder? = TreeHashBuilder()

        init(path: String, name: String, tag: EntryTag) {
            self.path = path
            self.name = name
            self.tag = tag
        }
    }

    /// The root first, then each directory entered and not finished, outermost first.
    private var open = [Open(path: "", name: "", tag: .directory)]

    package init() {}

    /// Hands `entry` to `sink`, after finishing the directories it is not in.
    package mutating func add(_ entry: SnapshotEntry, to sink: inout some TreeEntrySink) {
        let path = entry.path
        while open.count > 1, !PathOrder.isDescendant(path, of: open[open.count - 1].path) { finishTop(&sink) }
        sink.enter(entry)
        if entry.kind == .directory {
            open.append(Open(path: path, name: String(entry.name), tag: entry.tag))
        } else {
            open[open.count - 1].builder!.add(name: String(entry.name), tag: entry.tag, hash: entry.hash)
        }
    }

    /// Finishes every directory still open: the root hash.
    package mutating func finish(into sink: inout some TreeEntrySink) -> ContentHash {
        while open.count > 1 { finishTop(&sink) }
        return open[0].builder.take()!.finish()
    }

    /// Finishes the innermost open directory and adds it to its parent.
    private mutating func finishTop(_ sink: inout some TreeEntrySink) {
        let top = open.removeLast()
        let hash = top.builder.take()!.finish()
        sink.finishDirectory(hash: hash)
        open[open.count - 1].builder!.add(name: top.name, tag: top.tag, hash: hash)
    }
}
