import Glibc

/// The save of a tree held in memory whose edits the tree itself tracks: cost in
/// proportion to the change, not to the package.
///
/// A `FileWrapper` read from a package (or saved as one) knows which nodes were edited
/// since (`editedBelow`, set on every ancestor of an edit) and keeps the manifest's head.
/// Only edited directories are visited: each is listed on disk and compared with its
/// children in memory; untouched subtrees are skipped whole. The comparison becomes a
/// `SavePlan` over the visited entries only, executed by the journaled strategy, whose
/// manifest delta chains to the remembered head.
extension PackageSaver {
    /// A placeholder hash for an old entry whose content must be considered different
    /// (a directory to descend into, a file of another size).
    private static func different(from hash: ContentHash) -> ContentHash {
        ContentHash(high: ~hash.high, low: ~hash.low)
    }

    /// What the walk collects.
    struct EditedTreeWalk {
        var old: [SnapshotEntry] = []
        var new: [SnapshotEntry] = []
        /// By path of `new`: where a written file's bytes come from, and its node.
        var origins: [String: ContentOrigin] = [:]
        var nodes: [String: FileWrapper] = [:]
        /// Edited directories visited, with the generation seen, to clear their marks after.
        var visited: [(node: FileWrapper, generation: UInt64)] = []
        var removedEntries = 0
        var createdEntries = 0
        var filesHashed = 0
        var bytesHashed: Int64 = 0
    }

    /// Saves the edited parts of `root` into the package it was read from, or returns nil
    /// when this path does not apply (another strategy, no remembered head, the manifest
    /// changed on disk, compaction due); the caller then compares whole trees.
    ///
    /// The caller holds the package's exclusive lock and has run recovery.
    /// - Complexity: one listing and one `fstatat` per child of each edited directory, the
    ///   changed files' bytes, and a manifest delta of O(change) records.
    static func saveEditedParts(
        of root: FileWrapper, to packagePath: String, options: SaveOptions, statistics: inout SaveStatistics
    ) throws -> [(node: FileWrapper, relativePath: String, status: FileStatus)]? {
        guard options.strategy == .journaled, let packageState = root.packageState,
            let head = packageState.currentHead(packagePath: packagePath)
        else { return nil }
        let manifest = PackageManifest(head: head)
        guard !manifest.needsCompaction else { return nil }

        var walk = EditedTreeWalk()
        let rootDescriptor = try FileDescriptor.openDirectory(packagePath)
        let rootGeneration = root.state.withLock { $0.generation }
        if root.isEditedBelow {
            try visit(root, relativePath: "", descriptor: rootDescriptor, packagePath: packagePath, walk: &walk)
        }
        walk.visited.append((root, rootGeneration))
        let newRootHash = try root.contentHash

        let old = TreeSnapshot(
            entries: PackageManifest.withDescendantCounts(walk.old.sorted { PathOrder.pathLess($0.path, $1.path) }),
            rootHash: head.rootHash)
        let newEntries = PackageManifest.withDescendantCounts(walk.new.sorted { PathOrder.pathLess($0.path, $1.path) })
        let new = TreeSnapshot(entries: newEntries, rootHash: newRootHash)
        let origins = newEntries.map { walk.origins[$0.path] }
        let plan = SavePlan(old: old, new: new, origins: origins)
        statistics.filesHashed += walk.filesHashed
        statistics.bytesHashed += walk.bytesHashed

        let context = SaveContext(
            packagePath: packagePath, plan: plan, manifest: manifest, options: options,
            rootPermissions: root.state.withLock { $0.effectivePermissions })
        context.entryCountOverride = head.entryCount - walk.removedEntries + walk.createdEntries
        try context.execute(packageExists: true, statistics: &statistics)
        statistics.rootHash = newRootHash
        statistics.entryCount = context.newEntryCount

        // The tree now describes the package: written nodes point at their new files, the
        // edit marks go (unless edited again meanwhile), the head moves on.
        var written: [(node: FileWrapper, relativePath: String, status: FileStatus)] = []
        for (index, status) in context.writtenStatus {
            let entry = newEntries[index]
            guard let node = walk.nodes[entry.path] else { continue }
            let path = PackageLayout.joined(packagePath, entry.path)
            node.state.withLock { state in
                state.diskRecord = DiskRecord(path: path, status: status)
                if state.cachedHash == nil { state.cachedHash = entry.hash }
            }
            written.append((node, entry.path, status))
        }
        for index in plan.creations where newEntries[index].kind == .directory {
            let entry = newEntries[index]
            guard let node = walk.nodes[entry.path] else { continue }
            let path = PackageLayout.joined(packagePath, entry.path)
            let status = try FileSystem.status(path)
            node.state.withLock { $0.diskRecord = DiskRecord(path: path, status: status) }
            written.append((node, entry.path, status))
        }
        for (node, generation) in walk.visited {
            node.state.withLock { state in
                if state.generation == generation {
                    state.editedBelow = false
                    state.directoryEditedSinceRead = false
                }
            }
        }
        if let chain = context.chain {
            var next = head
            next.lastDeltaChecksum = chain.last
            next.lastSequence = chain.sequence
            next.deltaRecordCount += context.deltaRecordsWritten
            next.entryCount = context.newEntryCount
            next.rootHash = newRootHash
            packageState.update(head: next, packagePath: packagePath)
        }
        return written
    }

    /// Compares the edited directory `node` (at `relativePath`, open as `descriptor`) with
    /// what is on disk, appending the entries that take part in the plan.
    private static func visit(
        _ node: FileWrapper, relativePath: String, descriptor: borrowing FileDescriptor, packagePath: String,
        walk: inout EditedTreeWalk
    ) throws {
        let isRoot = relativePath.isEmpty
        var onDisk: [(name: String, status: FileStatus)] = []
        for entry in try DirectoryListing.entries(in: descriptor) {
            if isRoot && PackageReservedNames.isReserved(entry.name) { continue }
            let status = try FileSystem.status(entry.name, relativeTo: descriptor.rawValue)
            if status.kind.isPackageContent { onDisk.append((entry.name, status)) }
        }
        onDisk.sort { PathOrder.nameLess($0.name, $1.name) }
        let inMemory = (node.sortedChildren ?? []).filter { !(isRoot && PackageReservedNames.isReserved($0.name.string)) }

        var diskIndex = 0
        var memoryIndex = 0
        while diskIndex < onDisk.count || memoryIndex < inMemory.count {
            let order: Int
            if diskIndex == onDisk.count {
                order = 1
            } else if memoryIndex == inMemory.count {
                order = -1
            } else {
                order = PathOrder.compareBytes(onDisk[diskIndex].name, inMemory[memoryIndex].name.string, slashIsLowest: false)
            }
            if order < 0 {
                let (name, status) = onDisk[diskIndex]
                try addRemoved(name, status, parent: relativePath, descriptor: descriptor, walk: &walk)
                diskIndex += 1
                continue
            }
            let (name, child) = (inMemory[memoryIndex].name.string, inMemory[memoryIndex].child)
            let path = relativePath.isEmpty ? name : relativePath + "/" + name
            memoryIndex += 1
            if order > 0 {
                try addCreated(child, path: path, walk: &walk)
                continue
            }
            let status = onDisk[diskIndex].status
            diskIndex += 1
            let kind = child.kind
            guard kind == status.kind else {
                try addRemoved(name, status, parent: relativePath, descriptor: descriptor, walk: &walk)
                try addCreated(child, path: path, walk: &walk)
                continue
            }
            let expectedPath = PackageLayout.joined(packagePath, path)
            let (record, permissions, edited, generation) = child.state.withLock {
                ($0.diskRecord, $0.effectivePermissions, $0.editedBelow, $0.generation)
            }
            var before = entry(path: path, status: status, hash: .empty)
            switch kind {
            case .directory:
                let hash = try child.contentHash
                let clean = !edited && record?.path == expectedPath && record?.status.inode == status.inode
                var after = entry(path: path, status: status, hash: hash)
                after.permissions = permissions
                before.hash = clean ? hash : different(from: hash)
                walk.old.append(before)
                walk.new.append(after)
                walk.nodes[path] = child
                if !clean {
                    walk.visited.append((child, generation))
                    let directory = try FileDescriptor.openDirectory(name, relativeTo: descriptor.rawValue, displayPath: expectedPath)
                    try visit(child, relativePath: path, descriptor: directory, packagePath: packagePath, walk: &walk)
                }
            case .symbolicLink:
                let target = try FileSystem.readSymbolicLinkBytes(name, relativeTo: descriptor.rawValue)
                before.hash = ContentHash.of(target)
                before.size = Int64(target.count)
                walk.old.append(before)
                try addCreated(child, path: path, walk: &walk, counted: false)
            default:
                let backed = record?.path == expectedPath && (record?.stillDescribes(status) ?? false)
                let hash = try child.contentHash
                let size = child.regularFileSize
                if backed {
                    before.hash = hash
                } else if status.size != size {
                    before.hash = different(from: hash)
                } else {
                    // Same size, new wrapper: compare with the bytes on disk, so that a file
                    // rewritten with identical content is not written again.
                    let file = try FileDescriptor.open(name, relativeTo: descriptor.rawValue, options: [.noFollow], displayPath: expectedPath)
                    before.hash = try ContentHash.ofFile(file, buffer: ChunkBuffer(), expectedSize: status.size).hash
                    walk.filesHashed += 1
                    walk.bytesHashed += status.size
                }
                walk.old.append(before)
                try addCreated(child, path: path, walk: &walk, counted: false)
            }
        }
    }

    /// An entry with `status`'s kind, permissions and stat data.
    private static func entry(path: String, status: FileStatus, hash: ContentHash) -> SnapshotEntry {
        SnapshotEntry(
            path: path, kind: status.kind, permissions: status.permissions,
            size: status.kind == .directory ? 0 : status.size, hash: hash, modificationTime: status.modificationTime,
            changeTime: status.changeTime, inode: status.inode, device: status.device)
    }

    /// An entry on disk that the tree no longer has (at least not with this kind): the
    /// plan removes it, and its whole subtree is counted.
    private static func addRemoved(
        _ name: String, _ status: FileStatus, parent: String, descriptor: borrowing FileDescriptor,
        walk: inout EditedTreeWalk
    ) throws {
        let path = parent.isEmpty ? name : parent + "/" + name
        walk.old.append(entry(path: path, status: status, hash: .empty))
        var count = 1
        if status.kind == .directory {
            let directory = try FileDescriptor.openDirectory(name, relativeTo: descriptor.rawValue)
            count += try countBelow(directory)
        }
        walk.removedEntries += count
    }

    private static func countBelow(_ directory: borrowing FileDescriptor) throws -> Int {
        var count = 0
        for entry in try DirectoryListing.entries(in: directory) {
            count += 1
            if entry.kind == .directory || entry.kind == .unknown,
                try FileSystem.status(entry.name, relativeTo: directory.rawValue).kind == .directory
            {
                let child = try FileDescriptor.openDirectory(entry.name, relativeTo: directory.rawValue)
                count += try countBelow(child)
            }
        }
        return count
    }

    /// `node` (and, for a directory, everything below it) as new entries, with where each
    /// file's bytes come from. `counted`: whether it adds to the entry count (false when it
    /// replaces an entry of the same kind).
    private static func addCreated(_ node: FileWrapper, path: String, walk: inout EditedTreeWalk, counted: Bool = true)
        throws
    {
        let hash = try node.contentHash
        let (kind, permissions, contents, record, linkTarget, modificationTime, generation) = node.state.withLock {
            ($0.kind, $0.effectivePermissions, $0.contents, $0.diskRecord, $0.linkTarget, $0.modificationTime, $0.generation)
        }
        if counted { walk.createdEntries += 1 }
        var entry = SnapshotEntry(
            path: path, kind: kind, permissions: permissions, size: 0, hash: hash,
            modificationTime: modificationTime ?? FileClock.upperBound(), linkTarget: linkTarget)
        walk.nodes[path] = node
        switch kind {
        case .directory:
            walk.new.append(entry)
            walk.visited.append((node, generation))
            for (name, child) in node.sortedChildren ?? [] {
                try addCreated(child, path: path + "/" + name.string, walk: &walk)
            }
        case .symbolicLink:
            entry.size = Int64(linkTarget?.utf8.count ?? 0)
            walk.new.append(entry)
        default:
            entry.size = node.regularFileSize
            walk.new.append(entry)
            if let contents {
                walk.origins[path] = .bytes(Array(contents))
            } else if let record {
                walk.origins[path] = .file(path: record.path, seen: record.status)
            }
        }
    }
}
