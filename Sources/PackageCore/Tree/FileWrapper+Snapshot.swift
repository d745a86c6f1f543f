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
        let (kind, path) = state.withLock { ($0.kind, $0.displayPath) }
        guard kind == .directory else {
            throw FileSystemError(.read, path: path, reason: "a snapshot needs a directory wrapper, this is a \(kind)")
        }
        let rootHash = try contentHash
        var entries: [SnapshotEntry] = []
        appendEntries(prefix: "", into: &entries)
        return TreeSnapshot(entries: entries, rootHash: rootHash)
    }

    /// Appends this directory's children, depth-first in byte order. Hashes must be cached.
    private func appendEntries(prefix: String, into entries: inout [SnapshotEntry]) {
        for (name, child) in sortedChildren ?? [] {
            let path = prefix.isEmpty ? name.string : prefix + "/" + name.string
            let position = entries.count
            entries.append(child.snapshotEntry(path: path))
            if entries[position].kind == .directory {
                child.appendEntries(prefix: path, into: &entries)
                entries[position].descendantCount = entries.count - position - 1
            }
        }
    }

    /// This node's entry, its descendant count left to the caller.
    private func snapshotEntry(path: String) -> SnapshotEntry {
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
            return SnapshotEntry(
                path: path, kind: node.kind, permissions: node.effectivePermissions, size: size,
                hash: node.cachedHash ?? .empty, modificationTime: node.modificationTime ?? 0,
                changeTime: status?.changeTime ?? 0, inode: status?.inode ?? 0, device: status?.device ?? 0,
                linkTarget: node.linkTarget)
        }
    }
}
