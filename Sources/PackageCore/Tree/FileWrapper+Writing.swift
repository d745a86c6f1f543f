import FoundationEssentials
import Glibc

extension FileWrapper {
    /// Writes this wrapper (a directory recursively) to `url`, replacing what is there.
    ///
    /// When `originalContentsURL` is `url` itself and a package is there, the write goes
    /// through the incremental save engine (`PackageSaver`, its default strategy): only
    /// files whose content changed are written, unchanged ones stay (Specs/save.md), and
    /// the package's manifest is updated.
    ///
    /// Otherwise the whole tree is built under a temporary name beside `url` and swapped in
    /// with one `renameat2` (RENAME_EXCHANGE when `url` exists, RENAME_NOREPLACE otherwise),
    /// so the write either completely succeeds or leaves `url` as it was; a failure removes
    /// the temporary tree. Files, directories and the parent are fsynced before and after
    /// the swap. Regular files not loaded into memory are copied from disk
    /// (`copy_file_range`), never read into memory. Permissions and known modification
    /// dates are restored.
    ///
    /// With `.withNameUpdating`, names and disk records are updated after success (see
    /// `WritingOptions`), which is what lets the next save reuse the files just written.
    /// - Complexity: incremental: a stat per package entry plus the changed files; full:
    ///   every file written or copied, one fsync per file and directory.
    public func write(to url: URL, options: WritingOptions = [], originalContentsURL: URL?) throws {
        try write(to: url, options: options, originalContentsURL: originalContentsURL, durability: .full)
    }

    /// `write(to:options:originalContentsURL:)` with a durability policy (`.none` skips
    /// every fsync, for benchmarks and tests that say so), returning what was written.
    @discardableResult
    public func write(
        to url: URL, options: WritingOptions = [], originalContentsURL: URL?, durability: Durability
    ) throws -> SaveStatistics {
        let path = try FileWrapper.filePath(of: url, for: .create)
        let originalPath = try originalContentsURL.map { url throws(FileSystemError) in
            try FileWrapper.filePath(of: url, for: .open)
        }
        let nameUpdating = options.contains(.withNameUpdating)
        let (written, statistics) = try FileWrapper.writeTree(
            self, to: path, originalContentsPath: originalPath, durability: durability, collectWritten: nameUpdating)
        if nameUpdating {
            adoptWrittenNames(rootName: AtomicFile.split(path).name, finalPath: path, written: written)
        }
        return statistics
    }

    // MARK: The write path

    /// One node written by `writeTree`: where, relative to the destination, and its stat.
    struct WrittenNode {
        var node: FileWrapper
        /// "" for the root.
        var relativePath: String
        var status: FileStatus
    }

    /// The single function through which a wrapper tree reaches the disk: incrementally
    /// through the save engine when the destination is the package the original contents
    /// came from, else a full write into a staging name beside `path` and an atomic swap.
    ///
    /// Returns the nodes written (with their final stat, when `collectWritten`) for
    /// `.withNameUpdating`, and the save's statistics.
    static func writeTree(
        _ root: FileWrapper, to path: String, originalContentsPath: String?, durability: Durability,
        collectWritten: Bool
    ) throws -> (written: [WrittenNode], statistics: SaveStatistics) {
        if root.isDirectory, let originalContentsPath,
            PackageLockScope.key(originalContentsPath) == PackageLockScope.key(path),
            try FileSystem.statusIfExists(path)?.kind == .directory
        {
            return try saveIncrementally(root, to: path, durability: durability, collectWritten: collectWritten)
        }
        let written = try writeFully(root, to: path, durability: durability)
        var statistics = SaveStatistics(strategy: .full)
        for item in written {
            switch item.status.kind {
            case .regular:
                statistics.filesWritten += 1
                statistics.bytesWritten += item.status.size
            case .directory: statistics.directoriesCreated += 1
            case .symbolicLink: statistics.symbolicLinksWritten += 1
            default: break
            }
        }
        statistics.entryCount = max(0, written.count - 1)
        return (written, statistics)
    }

    /// Saves a directory wrapper over the package it describes with the save engine
    /// (`PackageSaver.save(_:to:options:)`): only what changed is written.
    static func saveIncrementally(
        _ root: FileWrapper, to path: String, durability: Durability, collectWritten: Bool
    ) throws -> (written: [WrittenNode], statistics: SaveStatistics) {
        let (statistics, written) = try PackageSaver.saveTree(root, to: path, options: SaveOptions(durability: durability))
        return (collectWritten ? written : [], statistics)
    }

    /// Every node of the tree with its path relative to this root, depth-first (the
    /// snapshot's order), for the engine's full comparison.
    func nodesWithPaths() throws -> (snapshot: TreeSnapshot, nodes: [FileWrapper]) {
        try snapshotWithNodes()
    }

    /// The plain full write: the tree built under a staging name beside `path`, then swapped in.
    ///
    /// - Complexity: every byte of every file; one fsync per node with `.full` durability.
    static func writeFully(_ root: FileWrapper, to path: String, durability: Durability) throws -> [WrittenNode] {
        let (parentPath, name) = AtomicFile.split(path)
        let parent = try FileDescriptor.openDirectory(parentPath)
        let stagingName = "." + name + AtomicFile.temporaryMarker + AtomicFile.randomSuffix()
        let stagingPath = parentPath == "/" ? "/" + stagingName : parentPath + "/" + stagingName
        var written: [WrittenNode] = []
        var committed = false
        do {
            let buffer = ChunkBuffer()
            try root.writeNode(
                at: stagingPath, relativePath: "", durability: durability, buffer: buffer, written: &written)
            if try FileSystem.statusIfExists(path) == nil {
                try FileSystem.renameNoReplace(stagingPath, to: path)
                committed = true
                if durability == .full { try parent.sync() }
            } else {
                try FileSystem.exchange(stagingPath, with: path)
                committed = true
                if durability == .full { try parent.sync() }
                // The staging name now holds the previous version. Failing to remove it does
                // not undo a successful write; it stays recognisable by its temporary marker.
                try? FileSystem.removeTree(stagingPath)
            }
        } catch {
            // Before the swap the staging tree is ours to remove; after it, it is the previous
            // version, kept because the new one could not be made durable.
            if !committed { try? FileSystem.removeTree(stagingPath) }
            throw error
        }
        return written
    }

    /// Writes this node (and its children) at `path`, which must not exist.
    private func writeNode(
        at path: String, relativePath: String, durability: Durability, buffer: ChunkBuffer,
        written: inout [WrittenNode]
    ) throws {
        let node = state.withLock { $0 }
        switch node.kind {
        case .regular:
            let file = try FileDescriptor.open(
                path, access: .writeOnly, options: [.create, .exclusive, .noFollow], permissions: 0o600)
            if let contents = node.contents {
                try contents.withUnsafeBytes { bytes in try file.write(bytes) }
            } else if let record = node.diskRecord {
                let source = try FileWrapper.openVerified(record)
                let outcome = try FileCopy.copy(
                    from: source, to: file, buffer: buffer, hashing: false, expectedSize: record.status.size)
                guard outcome.bytes == record.status.size else {
                    throw FileSystemError(
                        .read, path: record.path,
                        reason: "it changed after the package was opened (\(record.status.size) bytes expected, \(outcome.bytes) copied)")
                }
            }
            try file.setPermissions(node.effectivePermissions)
            if let modificationTime = node.modificationTime { try file.setModificationTime(modificationTime) }
            if durability == .full { try file.sync() }
            written.append(WrittenNode(node: self, relativePath: relativePath, status: try file.status()))
            try file.close()
        case .symbolicLink:
            try FileSystem.makeSymbolicLink(path, target: node.linkTarget ?? "")
            written.append(WrittenNode(node: self, relativePath: relativePath, status: try FileSystem.status(path)))
        default:
            // Owner-writable until the children are in, whatever the final mode.
            try FileSystem.makeDirectory(path, permissions: 0o700)
            let children = node.children.sorted { PathOrder.nameLess($0.key.string, $1.key.string) }
            for (name, child) in children {
                let childRelative = relativePath.isEmpty ? name.string : relativePath + "/" + name.string
                try child.writeNode(
                    at: path + "/" + name.string, relativePath: childRelative, durability: durability, buffer: buffer,
                    written: &written)
            }
            try FileSystem.setPermissions(path, node.effectivePermissions)
            if let modificationTime = node.modificationTime { try FileSystem.setModificationTime(path, modificationTime) }
            if durability == .full { try FileSystem.syncDirectory(path) }
            written.append(WrittenNode(node: self, relativePath: relativePath, status: try FileSystem.status(path)))
        }
    }

    /// `.withNameUpdating`: every written node takes the name it was written under and
    /// records its new file, so that the wrapper now describes the written package.
    func adoptWrittenNames(rootName: String, finalPath: String, written: [WrittenNode]) {
        filename = rootName
        for item in written {
            var name: String?
            if let slash = item.relativePath.utf8.lastIndex(of: UInt8(ascii: "/")) {
                name = String(item.relativePath[item.relativePath.index(after: slash)...])
            } else if !item.relativePath.isEmpty {
                name = item.relativePath
            }
            let path = item.relativePath.isEmpty ? finalPath : finalPath + "/" + item.relativePath
            item.node.state.withLock { node in
                if let name { node.filename = name }
                node.diskRecord = DiskRecord(path: path, status: item.status)
                node.modificationTime = item.status.modificationTime
                node.permissions = item.status.permissions
                node.directoryEditedSinceRead = false
            }
        }
    }
}
