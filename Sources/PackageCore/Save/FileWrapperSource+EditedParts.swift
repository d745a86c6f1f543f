import FoundationEssentials

/// The changed parts of a tree held in memory that knows its edits: cost in proportion to
/// the change, not to the package.
///
/// A `FileWrapper` read from a package (or saved as one) knows which nodes were edited
/// since (`editedBelow`, set on every ancestor of an edit) and keeps the manifest's head.
/// Only edited directories are visited: each is listed on disk and compared with its
/// children in memory. Directories not edited in memory are still checked with one `lstat`
/// each against what was seen when they were read or saved: one whose entries changed on
/// disk (a file removed behind the tree's back) is visited too, so that the save leaves a
/// package that matches its manifest.
extension FileWrapperSource: EditedPartsSource {
    /// The edited parts of the tree and the package's entries there, when the tree was read
    /// from (or last saved as) this very package and its manifest is still the one it
    /// remembers; nil otherwise, and the engine compares whole trees.
    ///
    /// - Complexity: one `lstat` per directory of the tree; per edited directory, one listing
    ///   and one `stat` per child; reads only new wrappers whose size equals the file's on disk.
    package func changedParts(in context: SaveSourceContext) throws -> PartialSourceTree? {
        let package = context.package
        guard let packageState = root.packageState, let head = packageState.currentHead(packagePath: package.path)
        else { return nil }
        guard !PackageManifest(head: head).needsCompaction else { return nil }

        var walk = EditedTreeWalk(package: package)
        let rootDescriptor = try FileDescriptor.openDirectory(package.path)
        root.markDirectoriesChangedOnDisk(relativeTo: package)
        let rootGeneration = root.state.withLock { $0.generation }
        if root.isEditedBelow {
            try walk.visit(root, relativePath: "", descriptor: rootDescriptor)
        }
        walk.visited.append((root, "", rootGeneration))
        let newRootHash = try root.contentHash

        let current = walk.current.sorted { PathOrder.pathLess($0.path, $1.path) }
        let new = walk.new.sorted { PathOrder.pathLess($0.path, $1.path) }
        session.editedParts = walk
        return PartialSourceTree(
            head: head, current: current, new: new, contents: new.map { walk.contents[RelativePath(trusted: $0.path)] },
            unknownContent: walk.unknownContent, newRootHash: newRootHash,
            newEntryCount: root.descendantCount,
            rootPermissions: root.state.withLock { $0.effectivePermissions }, filesHashed: walk.filesHashed,
            bytesHashed: walk.bytesHashed, notes: walk.notes)
    }

    /// After a save of the edited parts: written nodes point at their new files, visited
    /// directories at their new stat, the edit marks go (unless edited again meanwhile).
    ///
    /// With `updatesNames` (`.withNameUpdating`), every node of the regions visited — the
    /// new, renamed and rewritten children and their folders — also takes the name it was
    /// written under and its modification time and permissions on disk, as after a
    /// whole-tree save; the rest of the tree already carries them.
    func adoptEditedParts(_ walk: EditedTreeWalk, outcome: SaveOutcome, package: PackageLocation) {
        outcome.writtenFiles.forEach { path, status in
            guard let node = walk.nodes[path] else { return }
            node.state.withLock { state in
                state.diskRecord = DiskRecord(path: package.inside(path.string), status: status)
            }
        }
        if updatesNames {
            for (relative, node) in walk.nodes {
                let status = outcome.writtenFiles.status(at: relative) ?? (try? FileSystem.status(package.inside(relative.string)))
                adoptName(of: node, relative: relative.string, status: status, package: package)
            }
        }
        for (node, relative, generation) in walk.visited {
            let path = package.inside(relative)
            let status = try? FileSystem.status(path)
            node.state.withLock { state in
                if let status, status.kind == .directory { state.diskRecord = DiskRecord(path: path, status: status) }
                if state.generation == generation {
                    state.editedBelow = false
                    state.directoryEditedSinceRead = false
                }
            }
            if updatesNames { adoptName(of: node, relative: relative, status: status, package: package) }
        }
    }

    /// `.withNameUpdating` for one node: the name it was written under, and its time and
    /// permissions on disk.
    private func adoptName(of node: FileWrapper, relative: String, status: FileStatus?, package: PackageLocation) {
        node.state.withLock { state in
            state.filename = relative.isEmpty ? package.name : RelativePath.lastComponent(of: relative)
            if let status {
                state.modificationTime = status.modificationTime
                state.permissions = status.permissions
            }
        }
    }
}

/// What the walk of an edited tree collects: the package's entries and the tree's in the
/// regions visited.
struct EditedTreeWalk {
    let package: PackageLocation
    var current: [SnapshotEntry] = []
    var new: [SnapshotEntry] = []
    /// By path of `new` (compared as bytes): where a written file's bytes come from, and its node.
    var contents: [RelativePath: ContentOrigin] = [:]
    var nodes: [RelativePath: FileWrapper] = [:]
    /// Paths of `current` files whose content was not looked at (a size already differs).
    var unknownContent: Set<RelativePath> = []
    /// Directories visited (and new ones), with the generation seen, to clear their marks.
    var visited: [(node: FileWrapper, relativePath: String, generation: UInt64)] = []
    var filesHashed = 0
    var bytesHashed: Int64 = 0
    var notes: [String] = []

    init(package: PackageLocation) { self.package = package }

    /// Compares the edited directory `node` (at `relativePath`, open as `descriptor`) with
    /// what is on disk, one merge of two name-sorted lists, appending the entries that take
    /// part in the plan.
    mutating func visit(_ node: FileWrapper, relativePath: String, descriptor: borrowing FileDescriptor) throws {
        let isRoot = relativePath.isEmpty
        var onDisk: [(name: String, status: FileStatus)] = []
        for entry in try DirectoryListing.entries(in: descriptor) {
            if isRoot && PackageReservedNames.isReserved(entry.name) { continue }
            let status = try FileSystem.status(entry.name, relativeTo: descriptor.rawValue)
            if status.kind.isPackageContent { onDisk.append((entry.name, status)) }
        }
        onDisk = PathOrder.sortedByName(onDisk) { $0.name }
        // Files of this package the tree never loaded and that vanished from disk are gone
        // for good: dropped from the tree rather than saved from nowhere.
        let inMemory = dropVanishedFiles(
            of: node, onDisk: Set(onDisk.map { FileName($0.name) }), relativePath: relativePath, isRoot: isRoot)

        try PathOrder.mergeJoin(
            leftCount: onDisk.count, rightCount: inMemory.count,
            compare: { PathOrder.compareBytes(onDisk[$0].name, inMemory[$1].name.string, slashIsLowest: false) }
        ) { step in
            switch step {
            case .left(let i):
                try addRemoved(onDisk[i].name, onDisk[i].status, parent: relativePath, descriptor: descriptor)
            case .right(let j):
                let path = RelativePath.join(relativePath, inMemory[j].name.string)
                noteVanishedDirectory(inMemory[j].child, path: path)
                try addCreated(inMemory[j].child, path: path)
            case .both(let i, let j):
                try compare(inMemory[j].child, with: onDisk[i], parent: relativePath, descriptor: descriptor)
            }
            return (1, 1)
        }
    }

    /// The children of `node` in name order, without regular files backed by a file of
    /// this package that is no longer on disk and was never loaded (noted).
    private mutating func dropVanishedFiles(
        of node: FileWrapper, onDisk: Set<FileName>, relativePath: String, isRoot: Bool
    ) -> [(name: FileName, child: FileWrapper)] {
        let children = (node.sortedChildren ?? []).filter { !(isRoot && PackageReservedNames.isReserved($0.name.string)) }
        var kept: [(name: FileName, child: FileWrapper)] = []
        kept.reserveCapacity(children.count)
        for (name, child) in children {
            let path = RelativePath.join(relativePath, name.string)
            let (kind, record, loaded) = child.state.withLock { ($0.kind, $0.diskRecord, $0.contents != nil) }
            if kind == .regular, !loaded, let record, PathOrder.sameBytes(record.path, package.inside(path)), !onDisk.contains(name) {
                node.removeFileWrapper(child)
                notes.append("'\(path)' was removed behind the document's back: it is no longer part of the package")
                // Gone from disk and from the tree: the manifest must forget it too.
                current.append(Self.entry(path: path, status: record.status, hash: .empty))
                unknownContent.insert(RelativePath(trusted: path))
                continue
            }
            kept.append((name, child))
        }
        return kept
    }

    /// A folder of this package the tree holds (read or saved here) that is no longer on
    /// disk: removed behind the tree's back. The save writes back what the tree holds of it
    /// (its files never loaded are gone for good: `dropVanishedDescendants`); the manifest
    /// must forget every entry it had beneath it. An entry of another kind at its path in
    /// `current` says so to the plan: a kind change removes the old subtree from the
    /// manifest (the journal's removal of what is not there is a no-op) and creates the
    /// folder afresh.
    private mutating func noteVanishedDirectory(_ node: FileWrapper, path: String) {
        let (kind, record) = node.state.withLock { ($0.kind, $0.diskRecord) }
        guard kind == .directory, let record, PathOrder.sameBytes(record.path, package.inside(path)) else { return }
        var gone = Self.entry(path: path, status: record.status, hash: .empty)
        gone.kind = .regular
        current.append(gone)
        unknownContent.insert(RelativePath(trusted: path))
        notes.append("the folder '\(path)' was removed behind the document's back: what the document holds of it was written back")
    }

    /// Drops, below the directory `node` (at `path`), the regular files backed by a file of
    /// this package at their own path, never loaded, that are no longer on disk (their folder
    /// was removed or replaced): their bytes are gone, so they leave the tree, noted.
    ///
    /// - Complexity: one `lstat` per such file.
    private mutating func dropVanishedDescendants(of node: FileWrapper, path: String) {
        for (name, child) in node.sortedChildren ?? [] {
            let childPath = RelativePath.join(path, name.string)
            let (kind, record, loaded) = child.state.withLock { ($0.kind, $0.diskRecord, $0.contents != nil) }
            if kind == .directory {
                dropVanishedDescendants(of: child, path: childPath)
                continue
            }
            guard kind == .regular, !loaded, let record, PathOrder.sameBytes(record.path, package.inside(childPath))
            else { continue }
            if let now = try? FileSystem.status(record.path), now.kind == .regular { continue }
            node.removeFileWrapper(child)
            notes.append("'\(childPath)' was removed behind the document's back: it is no longer part of the package")
        }
    }

    /// One name on disk and in memory.
    private mutating func compare(
        _ child: FileWrapper, with disk: (name: String, status: FileStatus), parent: String,
        descriptor: borrowing FileDescriptor
    ) throws {
        let (name, status) = disk
        let path = RelativePath.join(parent, name)
        let kind = child.kind
        guard kind == status.kind else {
            try replaceKind(of: child, with: disk, path: path, parent: parent, descriptor: descriptor)
            return
        }
        let expectedPath = package.inside(path)
        let (record, permissions, edited, generation) = child.state.withLock {
            ($0.diskRecord, $0.effectivePermissions, $0.editedBelow, $0.generation)
        }
        var before = Self.entry(path: path, status: status, hash: .empty)
        switch kind {
        case .directory:
            let clean = !edited && (record.map { PathOrder.sameBytes($0.path, expectedPath) } ?? false) && record?.status.inode == status.inode
            if !clean {
                // Visited before its hash is taken: files dropped inside it (removed behind
                // the tree's back) must not be hashed.
                visited.append((child, path, generation))
                let directory = try FileDescriptor.openDirectory(name, relativeTo: descriptor.rawValue, displayPath: expectedPath)
                try visit(child, relativePath: path, descriptor: directory)
            }
            let hash = try child.contentHash
            var after = Self.entry(path: path, status: status, hash: hash)
            after.permissions = permissions
            before.hash = hash
            current.append(before)
            new.append(after)
            nodes[RelativePath(trusted: path)] = child
        case .symbolicLink:
            let target = try FileSystem.readSymbolicLinkBytes(name, relativeTo: descriptor.rawValue)
            before.hash = ContentHash.of(target)
            before.size = Int64(target.count)
            current.append(before)
            try addCreated(child, path: path)
        default:
            try compareFile(child, with: disk, path: path, record: record, before: &before, descriptor: descriptor)
            current.append(before)
            try addCreated(child, path: path)
        }
    }

    /// A name whose kind on disk differs from the tree's: removed and created anew — unless
    /// the tree read that very item and someone else replaced it since, which is refused.
    private mutating func replaceKind(
        of child: FileWrapper, with disk: (name: String, status: FileStatus), path: String, parent: String,
        descriptor: borrowing FileDescriptor
    ) throws {
        let (name, status) = disk
        let kind = child.kind
        if let record = child.state.withLock({ $0.diskRecord }), record.status.kind == kind,
            PathOrder.sameBytes(record.path, package.inside(path))
        {
            // What the tree read here was replaced by another kind of item behind its
            // back: someone else's, not to be overwritten unseen.
            throw SaveRefusal(
                path: package.inside(path),
                reason: .refusedBySource(
                    "'\(path)' in it was a \(kind) when it was read and is a \(status.kind) now: someone else "
                        + "replaced it, and saving here would overwrite it; save elsewhere, or move it away"))
        }
        try addRemoved(name, status, parent: parent, descriptor: descriptor)
        try addCreated(child, path: path)
    }

    /// A regular file on disk and in memory: what the package holds (`before`'s hash) is
    /// known from the file the tree is still backed by, or read from disk when a new
    /// wrapper may hold the same bytes or change only some chunks; otherwise it is unknown
    /// and the file is rewritten.
    private mutating func compareFile(
        _ child: FileWrapper, with disk: (name: String, status: FileStatus), path: String, record: DiskRecord?,
        before: inout SnapshotEntry, descriptor: borrowing FileDescriptor
    ) throws {
        let (name, status) = disk
        let expectedPath = package.inside(path)
        var backed = (record.map { PathOrder.sameBytes($0.path, expectedPath) } ?? false) && (record?.stillDescribes(status) ?? false)
        if (record.map { PathOrder.sameBytes($0.path, expectedPath) } ?? false), !backed, child.contents == nil {
            // Modified behind the tree's back, never loaded: the version on disk stays.
            try child.read(from: URLPath.fileURL(expectedPath))
            notes.append("'\(path)' changed behind the document's back: the version on disk was kept")
            backed = true
        }
        let hash = try child.contentHash
        let size = child.regularFileSize
        let threshold = ChunkingParameters.standard.fileThreshold
        if backed {
            before.hash = hash
        } else if status.size != size && (status.size < threshold || size < threshold) {
            unknownContent.insert(RelativePath(trusted: path))
        } else {
            // A new wrapper: compare with the bytes on disk — of the same size, so that a
            // file rewritten with identical content is not written again; large, so that
            // the engine can write only the chunks that changed (one read of the old file,
            // which costs less than writing it whole).
            let file = try FileDescriptor.open(
                name, relativeTo: descriptor.rawValue, options: [.noFollow], displayPath: expectedPath)
            var chunker = ChunkingHasher()
            let digest = try ContentHash.ofFileWithChunks(
                file, buffer: ChunkBuffer(), expectedSize: status.size, chunker: &chunker)
            before.hash = digest.hash
            before.chunks = digest.chunks
            filesHashed += 1
            bytesHashed += status.size
        }
    }

    /// An entry with `status`'s kind, permissions and stat data.
    private static func entry(path: String, status: FileStatus, hash: ContentHash) -> SnapshotEntry {
        SnapshotEntry(
            path: path, kind: status.kind, permissions: status.permissions,
            size: status.kind == .directory ? 0 : status.size, hash: hash, modificationTime: status.modificationTime,
            changeTime: status.changeTime, inode: status.inode, device: status.device)
    }

    /// An entry on disk that the tree no longer has (at least not with this kind): the plan
    /// removes it, subtree and all.
    private mutating func addRemoved(
        _ name: String, _ status: FileStatus, parent: String, descriptor: borrowing FileDescriptor
    ) throws {
        let path = RelativePath.join(parent, name)
        current.append(Self.entry(path: path, status: status, hash: .empty))
        unknownContent.insert(RelativePath(trusted: path))
    }

    /// `node` (and, for a directory, everything below it) as new entries, with where each
    /// file's bytes come from.
    private mutating func addCreated(_ node: FileWrapper, path: String) throws {
        if node.isDirectory { dropVanishedDescendants(of: node, path: path) }
        let hash = try node.contentHash
        let (kind, permissions, data, record, linkTarget, modificationTime, generation, chunks) = node.state.withLock {
            (
                $0.kind, $0.effectivePermissions, $0.contents, $0.diskRecord, $0.linkTarget, $0.modificationTime,
                $0.generation, $0.cachedChunks
            )
        }
        var entry = SnapshotEntry(
            path: path, kind: kind, permissions: permissions, size: 0, hash: hash,
            modificationTime: modificationTime ?? FileClock.upperBound(), linkTarget: linkTarget)
        nodes[RelativePath(trusted: path)] = node
        switch kind {
        case .directory:
            new.append(entry)
            visited.append((node, path, generation))
            for (name, child) in node.sortedChildren ?? [] {
                try addCreated(child, path: path + "/" + name.string)
            }
        case .symbolicLink:
            entry.size = Int64(linkTarget?.utf8.count ?? 0)
            new.append(entry)
        default:
            entry.size = node.regularFileSize
            entry.chunks = chunks
            new.append(entry)
            if let data {
                contents[RelativePath(trusted: path)] = .stream(DataStream(data))
            } else if let record {
                contents[RelativePath(trusted: path)] = .file(path: record.path, seen: record.status)
            }
        }
    }
}

extension FileWrapper {
    /// Marks as edited every directory below (and at) this one whose entries changed on
    /// disk since it was read or saved (its inode or modification time moved), so that a
    /// save of the edited parts visits it.
    ///
    /// - Complexity: one `lstat` per directory of the tree; no file is looked at.
    func markDirectoriesChangedOnDisk(relativeTo package: PackageLocation) {
        var stack: [(node: FileWrapper, relative: String)] = [(self, "")]
        while let (directory, relative) = stack.popLast() {
            let (record, edited, childDirectories) = directory.state.withLock {
                ($0.diskRecord, $0.directoryEditedSinceRead || $0.editedBelow, $0.childDirectories)
            }
            let path = package.inside(relative)
            // An edited directory is visited anyway.
            if !edited, let record, PathOrder.sameBytes(record.path, path) {
                let now = try? FileSystem.status(path)
                if record.racy || now == nil || now?.inode != record.status.inode
                    || now?.modificationTime != record.status.modificationTime
                {
                    directory.markEdited()
                }
            }
            for (name, child) in childDirectories ?? directory.computeChildDirectories() {
                stack.append((child, RelativePath.join(relative, name)))
            }
        }
    }

    /// This directory's child directories by name, cached until its children change.
    func computeChildDirectories() -> [(name: String, child: FileWrapper)] {
        let children = sortedChildren ?? []
        let directories = children.filter { $0.child.isDirectory }.map { ($0.name.string, $0.child) }
        state.withLock { $0.childDirectories = directories }
        return directories
    }
}

/// File URLs for paths, in one place.
enum URLPath {
    static func fileURL(_ path: String) -> URL { URL(fileURLWithPath: path) }
}
