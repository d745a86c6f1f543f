/// The journaled strategy: new files under temporary names in `.pkgtool/tmp`, a redo journal
/// committed with one atomic file write, then applied; recovery re-applies it after a crash
/// (Specs/save.md, "journaled").
extension SaveContext {
    func saveJournaled(statistics: inout SaveStatistics) throws {
        let root = try FileDescriptor.openDirectory(packagePath)
        let metadataName = PackageLayout.metadataDirectoryName
        let temporaryName = metadataName + "/" + SaveJournal.temporaryDirectoryName
        if try FileSystem.statusIfExists(metadataName, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(
                metadataName, relativeTo: root.rawValue, displayPath: package.inside(metadataName))
            if durable { try root.sync() }
        }
        if try FileSystem.statusIfExists(temporaryName, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(
                temporaryName, relativeTo: root.rawValue, permissions: 0o700, displayPath: package.inside(temporaryName))
        }
        let temporary = try FileDescriptor.openDirectory(
            temporaryName, relativeTo: root.rawValue, displayPath: package.inside(temporaryName))
        // Large files whose changed chunks can be written in place instead of whole.
        var patches: [Int: ChunkPatch] = [:]
        for index in plan.creations where plan.new.entries[index].kind == .regular {
            if let patch = chunkPatch(for: index, inPlace: true) { patches[index] = patch }
        }
        planProgress(linking: false, patches: patches)
        var patchData: [String] = []

        // Everything written before the commit is ours to remove should the save fail: the
        // space comes back at once, not at the next command.
        var temporaries: [String] = []
        var counter = 0
        func nextTemporary() -> String {
            counter += 1
            let name = "n" + String(counter)
            temporaries.append(name)
            return name
        }
        let journal: SaveJournal
        do {
            let operations = try writeTemporaries(
                into: temporary, nextTemporary: nextTemporary, patches: patches, patchData: &patchData,
                statistics: &statistics)
            // Bound to this directory: a copy of the package cannot replay it (SaveJournal).
            let binding = SaveJournal.Binding(root: try root.status().inode, temporaryDirectory: try temporary.status().inode)
            journal = SaveJournal(binding: binding, operations: operations)
            // The space the patches will write, taken now: a full disk fails the save here,
            // before the commit, never halfway through applying it.
            try reserveSpace(for: journal, in: root)
            try checkCancellation()
        } catch {
            for name in temporaries { try? FileSystem.remove(name, relativeTo: temporary.rawValue) }
            throw error
        }

        // Commit, apply, and retire the journal.
        let journalBytes = journal.encoded()
        do {
            try AtomicFile.write(
                journalBytes, to: package.inside(metadataName + "/" + SaveJournal.fileName),
                durability: options.durability)
        } catch {
            for name in temporaries { try? FileSystem.remove(name, relativeTo: temporary.rawValue) }
            throw error
        }
        statistics.metadataBytesWritten += Int64(journalBytes.count)
        let applyStart = FileClock.lowerBound()
        statistics.entriesRemoved = try journal.apply(root: root, package: package, durability: options.durability)
        let applyEnd = FileClock.upperBound()
        try FileSystem.remove(metadataName + "/" + SaveJournal.fileName, relativeTo: root.rawValue)
        if durable { try FileSystem.syncDirectory(metadataName, relativeTo: root.rawValue) }
        // The patches' data is spent once the journal is gone (best effort: recovery removes
        // what stays).
        for name in patchData { try? FileSystem.remove(name, relativeTo: temporary.rawValue) }
        // Renaming the new files into place moved their ctimes after the delta recorded
        // them: record the window, so the stat cache keeps trusting them. (Best effort: if
        // it fails, they are reread once.)
        if journal.operations.contains(where: {
            switch $0 {
            case .rename, .patch: return true
            default: return false
            }
        }) {
            do {
                try recordRelinkWindow(applyStart...applyEnd, statistics: &statistics)
            } catch {
                statistics.notes.append("could not record the new files' stat data (\(error)); they will be reread once")
            }
        }
    }

    /// Allocates, without changing any file's size, the ranges the journal's patches will
    /// write into the package's files (`fallocate` with `FALLOC_FL_KEEP_SIZE`): the growth
    /// of a large file and any hole it had. Renames and removals need no space. A file
    /// system that cannot allocate ahead (EOPNOTSUPP) is saved without the promise.
    ///
    /// - Complexity: one `openat2` and one `open` per patched file, one `fallocate` per range.
    private func reserveSpace(for journal: SaveJournal, in root: borrowing FileDescriptor) throws {
        for case .patch(let path, _, _, _, _, _, let ranges) in journal.operations {
            let parent = try PackageTreeAccess.openDirectory(RelativePath.parent(of: path), in: root, package: package)
            let file = try FileDescriptor.open(
                RelativePath.lastComponent(of: path), relativeTo: parent.rawValue, access: .writeOnly,
                options: [.noFollow, .nonBlocking], displayPath: package.inside(path))
            for range in ranges {
                do throws(FileSystemError) {
                    guard try file.reserve(range) else { break }
                } catch {
                    var explained = error
                    if error.errno == .noSpace {
                        explained.reason = "the disk has no room for the changes to this file; nothing was changed"
                    }
                    throw explained
                }
            }
        }
    }

    /// Writes every new file, link and manifest record under a temporary name and returns
    /// the journal that puts them in place.
    private func writeTemporaries(
        into temporary: borrowing FileDescriptor, nextTemporary: () -> String, patches: [Int: ChunkPatch],
        patchData: inout [String], statistics: inout SaveStatistics
    ) throws -> [SaveJournal.Operation] {
        let metadataName = PackageLayout.metadataDirectoryName
        var removals: [SaveJournal.Operation] = []
        var directories: [SaveJournal.Operation] = []
        var renames: [SaveJournal.Operation] = []
        var patchOperations: [SaveJournal.Operation] = []
        var permissions: [SaveJournal.Operation] = []
        for index in plan.removals {
            let entry = plan.old.entries[index]
            removals.append(.remove(path: entry.path, kind: entry.kind))
        }
        for index in plan.creations {
            let entry = plan.new.entries[index]
            switch entry.kind {
            case .directory:
                // Owner-writable until its children are in; its own bits come last.
                directories.append(.makeDirectory(path: entry.path, permissions: 0o700))
                permissions.append(.setPermissions(path: entry.path, permissions: entry.permissions))
                statistics.directoriesCreated += 1
            case .symbolicLink:
                let name = nextTemporary()
                writtenStatus[index] = try writer.writeSymbolicLink(
                    target: entry.linkTarget ?? "", named: name, in: temporary.rawValue,
                    displayPath: package.inside(entry.path))
                renames.append(.rename(temporary: name, path: entry.path))
                statistics.symbolicLinksWritten += 1
            default:
                if let patch = patches[index] {
                    // Only the changed chunks, into one data file the journal writes over the
                    // package's file (Specs/save.md, "Chunk patches").
                    let name = nextTemporary()
                    let data = try FileDescriptor.open(
                        name, relativeTo: temporary.rawValue, access: .writeOnly, options: [.create, .exclusive, .noFollow],
                        permissions: 0o600, displayPath: package.inside(entry.path))
                    try forEachChangedPiece(of: index, patch: patch) { _, bytes in try data.write(bytes) }
                    if durable && !writer.defersFileSync { try data.sync() }
                    try data.close()
                    progress.fileWritten()
                    patchOperations.append(
                        .patch(
                            path: entry.path, data: name, inode: patch.oldInode, size: entry.size, permissions: entry.permissions,
                            modificationTime: entry.modificationTime, ranges: patch.comparison.changedRanges))
                    patchData.append(name)
                    writtenStatus[index] = patchedStatus(index, patch: patch)
                    writtenChunks[index] = patch.newChunks
                    statistics.filesPatched += 1
                    statistics.bytesPatched += patch.comparison.changedBytes
                    statistics.bytesWritten += patch.comparison.changedBytes
                    continue
                }
                let name = nextTemporary()
                let written = try writeFile(index, named: name, in: temporary.rawValue)
                writtenStatus[index] = written.status
                if let chunks = written.chunks { writtenChunks[index] = chunks }
                renames.append(.rename(temporary: name, path: entry.path))
                statistics.filesWritten += 1
                statistics.bytesWritten += written.size
            }
        }
        for index in plan.permissionChanges {
            let entry = plan.new.entries[index]
            permissions.append(.setPermissions(path: entry.path, permissions: entry.permissions))
        }
        statistics.permissionsChanged = plan.permissionChanges.count
        // New directories' own bits deepest first, after everything went in.
        permissions.sort { RelativePath.depth(of: $0.path) > RelativePath.depth(of: $1.path) }

        // The manifest: a delta, or a new base when there is none or the deltas grew.
        var metadataOperations: [SaveJournal.Operation] = []
        let identity = rootIdentity
        if let manifest, appendsDelta {
            let record = deltaRecord()
            let delta = manifest.encodedDelta(
                upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
                newEntryCount: newEntryCount, relinkWindow: nil, packageIdentity: identity)
            let name = nextTemporary()
            try writeMetadata(delta.bytes, named: name, in: temporary.rawValue, displayName: metadataName + "/" + delta.name)
            metadataOperations.append(.rename(temporary: name, path: metadataName + "/" + delta.name))
            statistics.metadataBytesWritten += Int64(delta.bytes.count)
            chain = (manifest.baseChecksum, Self.trailingChecksum(delta.bytes), manifest.lastSequence + 1)
            deltaRecordsWritten += record.upserts.count + record.removals.count
        } else {
            let name = nextTemporary()
            let written = try writeMetadata(
                named: name, in: temporary.rawValue, displayName: metadataName + "/" + PackageLayout.indexFileName
            ) { sink in
                try writeBaseRecord(packageIdentity: identity, to: sink)
            }
            metadataOperations.append(.rename(temporary: name, path: metadataName + "/" + PackageLayout.indexFileName))
            // Every delta file goes, those of a damaged manifest included: they describe
            // another base.
            for stale in try existingDeltaFiles() {
                metadataOperations.append(.remove(path: metadataName + "/" + stale, kind: .regular))
            }
            statistics.metadataBytesWritten += Int64(written.byteCount)
            statistics.manifestCompacted = manifest != nil
            chain = (written.checksum, ContentHash(high: 0, low: 0), 0)
        }
        // The sync record a pull commits with its tree (other saves leave the package's).
        if let record = options.syncRecord {
            let path = metadataName + "/" + PackageLayout.syncRecordFileName
            let name = nextTemporary()
            try writeMetadata(record, named: name, in: temporary.rawValue, displayName: path)
            metadataOperations.append(.rename(temporary: name, path: path))
            statistics.metadataBytesWritten += Int64(record.count)
        }
        // The conflicts record a merge commits with its tree. Its folder is made before the
        // commit (an empty folder changes nothing the package holds).
        if let record = options.conflictsRecord {
            try ConflictStore.makeDirectory(packagePath: package.path, durability: options.durability)
            let name = nextTemporary()
            try writeMetadata(record, named: name, in: temporary.rawValue, displayName: PackageLayout.conflictsRecordPath)
            metadataOperations.append(.rename(temporary: name, path: PackageLayout.conflictsRecordPath))
            statistics.metadataBytesWritten += Int64(record.count)
        }
        if try !makeDurableInBulk(temporary), durable { try temporary.sync() }
        return removals + directories + renames + patchOperations + permissions + metadataOperations
    }

    /// The names of the delta files in the package's metadata directory now.
    func existingDeltaFiles() throws -> [String] {
        guard let status = try FileSystem.statusIfExists(package.metadataPath), status.kind == .directory else { return [] }
        let metadata = try FileDescriptor.openDirectory(package.metadataPath)
        return try DirectoryListing.names(in: metadata).filter(PackageLayout.hasDeltaPrefix).sorted(by: PathOrder.nameLess)
    }
}

extension SaveJournal.Operation {
    /// The package path the operation acts on.
    var path: String {
        switch self {
        case .remove(let path, _), .makeDirectory(let path, _), .rename(_, let path), .setPermissions(let path, _),
            .patch(let path, _, _, _, _, _, _):
            return path
        }
    }
}
