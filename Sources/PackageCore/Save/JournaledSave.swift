/// The journaled strategy: new files under temporary names in `.pkgtool/tmp`, a redo journal
/// committed with one atomic file write, then applied; recovery re-applies it after a crash
/// (Specs/save.md, "journaled").
extension SaveContext {
    func saveJournaled(statistics: inout SaveStatistics) throws {
        let root = try FileDescriptor.openDirectory(packagePath)
        let temporary = try openTemporaryDirectory(in: root)
        let patches = inPlacePatches()
        planProgress(linking: false, patches: patches)
        var draft = JournalDraft()
        let journal: SaveJournal
        do {
            journal = try prepareJournal(
                root: root, temporary: temporary, patches: patches, draft: &draft, statistics: &statistics)
        } catch {
            draft.removeTemporaries(in: temporary)
            throw error
        }
        try commit(journal, draft: draft, temporary: temporary, statistics: &statistics)
        let window = try applyCommitted(journal, root: root, statistics: &statistics)
        try retireJournal(root: root)
        // The patches' data is spent once the journal is gone (best effort: recovery removes
        // what stays).
        for name in draft.patchData { try? FileSystem.remove(name, relativeTo: temporary.rawValue) }
        recordRelinkWindowIfMoved(by: journal, window: window, statistics: &statistics)
    }

    /// Opens `.pkgtool/tmp`, making `.pkgtool` (durably: the root's entry for it is synced
    /// before anything is written inside) and `tmp` when they are missing.
    private func openTemporaryDirectory(in root: borrowing FileDescriptor) throws -> FileDescriptor {
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
        return try FileDescriptor.openDirectory(
            temporaryName, relativeTo: root.rawValue, displayPath: package.inside(temporaryName))
    }

    /// Large files whose changed chunks can be written in place instead of whole.
    private func inPlacePatches() -> [Int: ChunkPatch] {
        var patches: [Int: ChunkPatch] = [:]
        for index in plan.creations where plan.new.entries[index].kind == .regular {
            if let patch = chunkPatch(for: index, inPlace: true) { patches[index] = patch }
        }
        return patches
    }

    /// Everything before the commit: the temporaries written, the journal bound to this
    /// package, the space its patches need reserved, cancellation checked a last time. A
    /// throw here leaves the package untouched; the caller removes `draft`'s temporaries.
    private func prepareJournal(
        root: borrowing FileDescriptor, temporary: borrowing FileDescriptor, patches: [Int: ChunkPatch],
        draft: inout JournalDraft, statistics: inout SaveStatistics
    ) throws -> SaveJournal {
        try writeTemporaries(into: temporary, patches: patches, draft: &draft, statistics: &statistics)
        // Bound to this directory: a copy of the package cannot replay it (SaveJournal).
        let binding = SaveJournal.Binding(root: try root.status().inode, temporaryDirectory: try temporary.status().inode)
        let journal = SaveJournal(binding: binding, operations: draft.operations)
        // The space the patches will write, taken now: a full disk fails the save here,
        // before the commit, never halfway through applying it.
        try reserveSpace(for: journal, in: root)
        try checkCancellation()
        return journal
    }

    /// The commit point: the journal appears atomically (temporary file, fsync, rename,
    /// fsync of `.pkgtool`, as `AtomicFile` does). Failing, it removes the temporaries: the
    /// package is as it was.
    private func commit(
        _ journal: SaveJournal, draft: JournalDraft, temporary: borrowing FileDescriptor,
        statistics: inout SaveStatistics
    ) throws {
        let journalBytes = journal.encoded()
        do {
            try AtomicFile.write(
                journalBytes, to: package.inside(PackageLayout.metadataDirectoryName + "/" + SaveJournal.fileName),
                durability: options.durability)
        } catch {
            draft.removeTemporaries(in: temporary)
            throw error
        }
        statistics.metadataBytesWritten += Int64(journalBytes.count)
    }

    /// Applies the committed journal (it fsyncs what it changed) and returns the window in
    /// which its renames and patches moved the files' ctimes.
    private func applyCommitted(
        _ journal: SaveJournal, root: borrowing FileDescriptor, statistics: inout SaveStatistics
    ) throws -> ClosedRange<Int64> {
        let applyStart = FileClock.lowerBound()
        statistics.entriesRemoved = try journal.apply(root: root, package: package, durability: options.durability)
        let applyEnd = FileClock.upperBound()
        return applyStart...applyEnd
    }

    /// The journal is applied: removes it (and fsyncs `.pkgtool`), leaving nothing to
    /// recover.
    private func retireJournal(root: borrowing FileDescriptor) throws {
        let metadataName = PackageLayout.metadataDirectoryName
        try FileSystem.remove(metadataName + "/" + SaveJournal.fileName, relativeTo: root.rawValue)
        if durable { try FileSystem.syncDirectory(metadataName, relativeTo: root.rawValue) }
    }

    /// Renaming the new files into place moved their ctimes after the delta recorded them:
    /// records the window, so the stat cache keeps trusting them. (Best effort: if it fails,
    /// they are reread once.)
    private func recordRelinkWindowIfMoved(
        by journal: SaveJournal, window: ClosedRange<Int64>, statistics: inout SaveStatistics
    ) {
        guard
            journal.operations.contains(where: {
                switch $0 {
                case .rename, .patch: return true
                default: return false
                }
            })
        else { return }
        do {
            try recordRelinkWindow(window, statistics: &statistics)
        } catch {
            statistics.notes.append("could not record the new files' stat data (\(error)); they will be reread once")
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

    /// Writes every new file, link and manifest record under a temporary name in `draft`,
    /// with the journal operations that put them in place, and makes them durable (one
    /// fsync each or `syncfs`, then `.pkgtool/tmp` itself) before the journal may name them.
    private func writeTemporaries(
        into temporary: borrowing FileDescriptor, patches: [Int: ChunkPatch], draft: inout JournalDraft,
        statistics: inout SaveStatistics
    ) throws {
        for index in plan.removals {
            let entry = plan.old.entries[index]
            draft.removals.append(.remove(path: entry.path, kind: entry.kind))
        }
        for index in plan.creations {
            try writeCreation(index, into: temporary, patch: patches[index], draft: &draft, statistics: &statistics)
        }
        for index in plan.permissionChanges {
            let entry = plan.new.entries[index]
            draft.permissions.append(.setPermissions(path: entry.path, permissions: entry.permissions))
        }
        statistics.permissionsChanged = plan.permissionChanges.count
        // New directories' own bits deepest first, after everything went in.
        draft.permissions.sort { RelativePath.depth(of: $0.path) > RelativePath.depth(of: $1.path) }
        try writeManifestRecord(into: temporary, draft: &draft, statistics: &statistics)
        try writeCommittedRecords(into: temporary, draft: &draft, statistics: &statistics)
        if try !makeDurableInBulk(temporary), durable { try temporary.sync() }
    }

    /// New entry `index`: a directory is only a journal operation; a link or file is written
    /// under a temporary name to be renamed into place, or — `patch` — its changed chunks.
    private func writeCreation(
        _ index: Int, into temporary: borrowing FileDescriptor, patch: ChunkPatch?, draft: inout JournalDraft,
        statistics: inout SaveStatistics
    ) throws {
        let entry = plan.new.entries[index]
        switch entry.kind {
        case .directory:
            // Owner-writable until its children are in; its own bits come last.
            draft.directories.append(.makeDirectory(path: entry.path, permissions: 0o700))
            draft.permissions.append(.setPermissions(path: entry.path, permissions: entry.permissions))
            statistics.directoriesCreated += 1
        case .symbolicLink:
            let name = draft.nextTemporary()
            writtenStatus[index] = try writer.writeSymbolicLink(
                target: entry.linkTarget ?? "", named: name, in: temporary.rawValue,
                displayPath: package.inside(entry.path))
            draft.renames.append(.rename(temporary: name, path: entry.path))
            statistics.symbolicLinksWritten += 1
        default:
            if let patch {
                try writePatchData(index, patch: patch, into: temporary, draft: &draft, statistics: &statistics)
                return
            }
            let name = draft.nextTemporary()
            let written = try writeFile(index, named: name, in: temporary.rawValue)
            writtenStatus[index] = written.status
            if let chunks = written.chunks { writtenChunks[index] = chunks }
            draft.renames.append(.rename(temporary: name, path: entry.path))
            statistics.filesWritten += 1
            statistics.bytesWritten += written.size
        }
    }

    /// Only the changed chunks of new entry `index`, into one data file the journal writes
    /// over the package's file (Specs/save.md, "Chunk patches"): the file itself is not
    /// touched before the commit.
    private func writePatchData(
        _ index: Int, patch: ChunkPatch, into temporary: borrowing FileDescriptor, draft: inout JournalDraft,
        statistics: inout SaveStatistics
    ) throws {
        let entry = plan.new.entries[index]
        let name = draft.nextTemporary()
        let data = try FileDescriptor.open(
            name, relativeTo: temporary.rawValue, access: .writeOnly, options: [.create, .exclusive, .noFollow],
            permissions: 0o600, displayPath: package.inside(entry.path))
        try forEachChangedPiece(of: index, patch: patch) { _, bytes in try data.write(bytes) }
        if durable && !writer.defersFileSync { try data.sync() }
        try data.close()
        progress.fileWritten()
        draft.patches.append(
            .patch(
                path: entry.path, data: name, inode: patch.oldInode, size: entry.size, permissions: entry.permissions,
                modificationTime: entry.modificationTime, ranges: patch.comparison.changedRanges))
        draft.patchData.append(name)
        writtenStatus[index] = patchedStatus(index, patch: patch)
        writtenChunks[index] = patch.newChunks
        statistics.filesPatched += 1
        statistics.bytesPatched += patch.comparison.changedBytes
        statistics.bytesWritten += patch.comparison.changedBytes
    }

    /// The manifest: a delta, or a new base when there is none or the deltas grew; renamed
    /// into place by the journal, so that it changes with the tree it describes.
    private func writeManifestRecord(
        into temporary: borrowing FileDescriptor, draft: inout JournalDraft, statistics: inout SaveStatistics
    ) throws {
        let metadataName = PackageLayout.metadataDirectoryName
        let identity = rootIdentity
        if let manifest, appendsDelta {
            let record = deltaRecord()
            let delta = manifest.encodedDelta(
                upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
                newEntryCount: newEntryCount, relinkWindow: nil, packageIdentity: identity)
            let name = draft.nextTemporary()
            try writeMetadata(delta.bytes, named: name, in: temporary.rawValue, displayName: metadataName + "/" + delta.name)
            draft.metadata.append(.rename(temporary: name, path: metadataName + "/" + delta.name))
            statistics.metadataBytesWritten += Int64(delta.bytes.count)
            chain = (manifest.baseChecksum, Self.trailingChecksum(delta.bytes), manifest.lastSequence + 1)
            deltaRecordsWritten += record.upserts.count + record.removals.count
        } else {
            let name = draft.nextTemporary()
            let written = try writeMetadata(
                named: name, in: temporary.rawValue, displayName: metadataName + "/" + PackageLayout.indexFileName
            ) { sink in
                try writeBaseRecord(packageIdentity: identity, to: sink)
            }
            draft.metadata.append(.rename(temporary: name, path: metadataName + "/" + PackageLayout.indexFileName))
            // Every delta file goes, those of a damaged manifest included: they describe
            // another base.
            for stale in try existingDeltaFiles() {
                draft.metadata.append(.remove(path: metadataName + "/" + stale, kind: .regular))
            }
            statistics.metadataBytesWritten += Int64(written.byteCount)
            statistics.manifestCompacted = manifest != nil
            chain = (written.checksum, ContentHash(high: 0, low: 0), 0)
        }
    }

    /// The records a save commits with its tree, so that a crash leaves both old or both
    /// new: the sync record of a pull (other saves leave the package's), the conflicts
    /// record of a merge.
    private func writeCommittedRecords(
        into temporary: borrowing FileDescriptor, draft: inout JournalDraft, statistics: inout SaveStatistics
    ) throws {
        if let record = options.syncRecord {
            let path = PackageLayout.metadataDirectoryName + "/" + PackageLayout.syncRecordFileName
            let name = draft.nextTemporary()
            try writeMetadata(record, named: name, in: temporary.rawValue, displayName: path)
            draft.metadata.append(.rename(temporary: name, path: path))
            statistics.metadataBytesWritten += Int64(record.count)
        }
        // Its folder is made before the commit (an empty folder changes nothing the package
        // holds).
        if let record = options.conflictsRecord {
            try ConflictStore.makeDirectory(packagePath: package.path, durability: options.durability)
            let name = draft.nextTemporary()
            try writeMetadata(record, named: name, in: temporary.rawValue, displayName: PackageLayout.conflictsRecordPath)
            draft.metadata.append(.rename(temporary: name, path: PackageLayout.conflictsRecordPath))
            statistics.metadataBytesWritten += Int64(record.count)
        }
    }

    /// The names of the delta files in the package's metadata directory now.
    func existingDeltaFiles() throws -> [String] {
        guard let status = try FileSystem.statusIfExists(package.metadataPath), status.kind == .directory else { return [] }
        let metadata = try FileDescriptor.openDirectory(package.metadataPath)
        return try DirectoryListing.names(in: metadata).filter(PackageLayout.hasDeltaPrefix).sorted(by: PathOrder.nameLess)
    }
}

/// What a journaled save wrote before its commit, and the operations of its journal, in
/// the order they are applied: removals, new directories, renames, patches, permission bits,
/// then the manifest's own files.
private struct JournalDraft {
    /// Every temporary name given out. Everything written before the commit is ours to
    /// remove should the save fail: the space comes back at once, not at the next command.
    private(set) var temporaries: [String] = []
    /// The patches' data files, spent once the journal is applied.
    var patchData: [String] = []
    var removals: [SaveJournal.Operation] = []
    var directories: [SaveJournal.Operation] = []
    var renames: [SaveJournal.Operation] = []
    var patches: [SaveJournal.Operation] = []
    var permissions: [SaveJournal.Operation] = []
    var metadata: [SaveJournal.Operation] = []

    var operations: [SaveJournal.Operation] { removals + directories + renames + patches + permissions + metadata }

    /// A fresh name in `.pkgtool/tmp`, recorded for removal.
    mutating func nextTemporary() -> String {
        let name = "n" + String(temporaries.count + 1)
        temporaries.append(name)
        return name
    }

    /// Removes every temporary written so far (best effort) after a failure before the commit.
    func removeTemporaries(in temporary: borrowing FileDescriptor) {
        for name in temporaries { try? FileSystem.remove(name, relativeTo: temporary.rawValue) }
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
