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

extension FileWrapper {
    /// The snapshot of this tree as the local side of a three-way merge (`TreeMerge`) with
    /// the package at `packagePath`, which it was read from (or last saved as) in the state
    /// `base`, and which another writer may have changed since.
    ///
    /// A regular file of that package the tree still refers to, never loaded and not hashed
    /// yet, whose file no longer matches what was read (another writer changed or removed
    /// it), cannot be hashed; the tree never looked at it, so it is taken as `base` holds it
    /// at its path — unchanged on this side — and its hash is cached as that. (A save then
    /// rereads or drops it, as for any file changed behind the tree's back.) Every other
    /// node is hashed as `snapshot()` does.
    ///
    /// - Parameters:
    ///   - packagePath: the package the tree was read from or last saved as.
    ///   - base: the package's tree as the tree last knew it.
    /// - Throws: `FileSystemError` when a file cannot be hashed and `base` has no file at its path.
    /// - Complexity: one `stat` per file not hashed yet, then `snapshot()`'s.
    package func mergeSnapshot(packagePath: String, base: TreeSnapshot) throws -> TreeSnapshot {
        var pending: [PendingFile] = []
        collectUnhashedFilesOnDisk(into: &pending)
        let prefix = packagePath + "/"
        for file in pending {
            if let now = try? FileSystem.status(file.record.path), file.record.stillDescribes(now) { continue }
            guard PathOrder.hasBytePrefix(file.record.path, prefix),
                let index = base.index(of: PathOrder.droppingBytes(prefix.utf8.count, from: file.record.path)),
                base.entries[index].kind == .regular, base.entries[index].size == file.record.status.size
            else { continue }
            let hash = base.entries[index].hash
            file.node.state.withLock { node in
                if node.generation == file.generation && node.diskRecord == file.record && node.cachedHash == nil {
                    node.cachedHash = hash
                }
            }
            // (No directory above it has a cached hash: it needs this file's.)
        }
        return try snapshot()
    }
}
