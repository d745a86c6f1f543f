/// The one depth-first walk that turns a tree's entries into its Merkle hashes: each
/// directory's hash from its children's names, tags and hashes, up to the root.
///
/// `TreeSnapshot.assemble(_:)` uses it to fill in directories; a decoder of untrusted
/// entries uses it to check a stated root hash without first building a snapshot (a
/// second copy of every entry).
package enum MerkleWalk {
    /// What the walk reads of one entry.
    package struct Item {
        package var path: String
        package var kind: FileKind
        package var tag: EntryTag
        /// A file's content hash, a link's target hash (a directory's is ignored).
        package var hash: ContentHash

        package init(path: String, kind: FileKind, tag: EntryTag, hash: ContentHash) {
            self.path = path
            self.kind = kind
            self.tag = tag
            self.hash = hash
        }
    }

    /// The root hash of `count` entries in depth-first path order, read through `item`;
    /// `finished` learns each directory's index, hash and number of descendants.
    ///
    /// An entry whose folder is not in the list (a malformed tree: a link or a file where
    /// its path needs a folder) is no child of this one: it adds nothing to the hash, and
    /// never traps. Decoders refuse such trees; this keeps a bug harmless.
    /// - Complexity: O(n) hashing, recursion as deep as the tree.
    package static func rootHash(
        count: Int, item: (Int) -> Item, finished: (_ index: Int, _ hash: ContentHash, _ descendants: Int) -> Void
    ) -> ContentHash {
        var position = 0
        return directoryHash(count: count, from: &position, prefix: "", item: item, finished: finished)
    }

    private static func directoryHash(
        count: Int, from position: inout Int, prefix: String, item: (Int) -> Item,
        finished: (Int, ContentHash, Int) -> Void
    ) -> ContentHash {
        var builder = TreeHashBuilder()
        while position < count {
            let index = position
            let entry = item(index)
            guard prefix.isEmpty || PathOrder.hasBytePrefix(entry.path, prefix) else { break }
            position += 1
            var hash = entry.hash
            if entry.kind == .directory {
                hash = directoryHash(count: count, from: &position, prefix: entry.path + "/", item: item, finished: finished)
                finished(index, hash, position - index - 1)
            }
            let name = lastComponent(of: entry.path)
            guard entry.path.utf8.count == prefix.utf8.count + name.utf8.count else { continue }
            builder.add(name: String(name), tag: entry.tag, hash: hash)
        }
        return builder.finish()
    }

    private static func lastComponent(of path: String) -> Substring {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path[...] }
        return path[path.index(after: slash)...]
    }
}
