extension FileWrapper {
    /// The tree below this directory wrapper as a `TreeSnapshot`: every entry in depth-first
    /// byte order with its kind, permissions, size and content hash, directories with their
    /// Merkle hashes and descendant counts, links with their targets (`linkTarget`).
    ///
    /// Stat fields (modification, change time, inode, device) are those seen when the entry
    /// was read from disk, and 0 for entries made in memory or directories edited since.
    /// For a tree read from disk and not changed, the snapshot equals `TreeScanner`'s.
    /// - Throws: `FileSystemError` when this is not a directory, or a file read from disk
    ///   vanished or changed since the package was opened.
    /// - Complexity: hashes what `contentHash` has not hashed yet, then O(n log n) in the
    ///   number of entries (sorting each directory's names).
    public func snapshot() throws -> TreeSnapshot {
        try snapshotWithNodes().snapshot
    }

    /// The snapshot, and the wrapper of each of its entries (same order): what the save
    /// engine needs to find each changed file's bytes.
    func snapshotWithNodes() throws -> (snapshot: TreeSnapshot, nodes: [FileWrapper]) {
        let (kind, path) = state.withLock { ($0.kind, $0.displayPath) }
        guard kind == .directory else {
            throw FileSystemError(.read, path: path, reason: "a snapshot needs a directory wrapper, this is a \(kind)")
        }
        let rootHash = try contentHash
        var entries: [SnapshotEntry] = []
        var nodes: [FileWrapper] = []
        appendEntries(prefix: "", into: &entries, nodes: &nodes)
        return (TreeSnapshot(entries: entries, rootHash: rootHash), nodes)
    }

    /// Appends this directory's children, depth-first in byte order. Hashes must be cached.
    func appendEntries(prefix: String, into entries: inout [SnapshotEntry], nodes: inout [FileWrapper]) {
        for (name, child) in sortedChildren ?? [] {
            let path = prefix.isEmpty ? name.string : prefix + "/" + name.string
            let position = entries.count
            entries.append(child.snapshotEntry(path: path))
            nodes.append(child)
            if entries[position].kind == .directory {
                child.appendEntries(prefix: path, into: &entries, nodes: &nodes)
                entries[position].descendantCount = entries.count - position - 1
            }
        }
    }

    /// This node's entry, its descendant count left to the caller.
    func snapshotEntry(path: String) -> SnapshotEntry {
        state.withLock { node in
            let size: Int64
            switch node.kind {
            case .directory: size = 0
            case .symbolicLink: size = node.diskRecord?.status.size ?? Int64(node.linkTarget?.utf8.count ?? 0)
            default: size = node.regularFileSize
            }
            // Stat data only while it still describes the node: a directory edited in
            // memory is not the directory that was read.
            let status = (node.kind == .directory && node.directoryEditedSinceRead) ? nil : node.diskRecord?.status
            var entry = SnapshotEntry(
                path: path, kind: node.kind, permissions: node.effectivePermissions, size: size,
                hash: node.cachedHash ?? .empty, modificationTime: node.modificationTime ?? 0,
                changeTime: status?.changeTime ?? 0, inode: status?.inode ?? 0, device: status?.device ?? 0,
                linkTarget: node.linkTarget)
            entry.chunks = node.cachedChunks
            return entry
        }
    }
}
