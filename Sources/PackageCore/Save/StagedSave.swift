import Glibc
import Synchronization

/// The `full` and `atomic` strategies: the whole new tree built in a staging directory
/// beside the package (unchanged files hard-linked unless `copyEverything`), fsynced, then
/// swapped in with one `renameat2(RENAME_EXCHANGE)` (`RENAME_NOREPLACE` for a first save)
/// through `StagedReplacement` (Specs/save.md, "full and atomic").
extension SaveContext {
    func saveStaged(copyEverything: Bool, packageExists: Bool, statistics: inout SaveStatistics) throws {
        var permissions = rootPermissions
        if packageExists { permissions = try FileSystem.status(package.path).permissions }
        let keepsPrevious = options.keepsPrevious && packageExists && !copyEverything
        // The previous version, when one is kept and sound, becomes the staging tree.
        var previous: PreviousTree?
        var replacement: StagedReplacement?
        if keepsPrevious {
            (replacement, previous) = try claimPrevious(statistics: &statistics)
        }
        let staged = try replacement ?? StagedReplacement(replacing: package.path, kind: .directory(permissions: permissions))
        do {
            let staging = try staged.openStagedDirectory()
            // Owner-writable while it is built (a kept tree may carry a read-only root).
            try staging.setPermissions(permissions | 0o700)
            if let previous {
                try updateStagingTree(staging, from: previous, statistics: &statistics)
            } else {
                try buildStagingTree(
                    staging, copyEverything: copyEverything, packageExists: packageExists, statistics: &statistics)
            }
            try staging.setPermissions(permissions)
            if durable { try staging.sync() }
            try checkCancellation()
            let notes = NoteList()
            try staged.commit(durability: options.durability) { notes.append($0) }
            statistics.notes += notes.items
        } catch {
            // Nothing was swapped in: the package is untouched. Remove the partial staging
            // tree now if we can; recovery does it otherwise.
            if !staged.committed { try? staged.discard() }
            throw error
        }
        // Saved. The old tree now sits under the staging name.
        statistics.entriesRemoved = plan.removedEntryCount
        statistics.permissionsChanged = plan.permissionChanges.count
        if keepsPrevious {
            // Kept, for the next save to bring up to date. Should this rename be lost to a
            // crash, recovery removes the old tree as the staging litter it then is.
            do {
                try staged.keepReplaced(as: package.siblings.previous)
            } catch {
                statistics.notes.append("the previous version could not be kept (\(error)); the next save removes it")
            }
            return
        }
        let removalStart = FileClock.lowerBound()
        do {
            try staged.discard(workers: options.workers)
            // Unlinking the old names moved the linked files' ctimes once more: record that
            // window too, so the stat cache keeps trusting them.
            if linkedFiles > 0 { try recordRelinkWindow(removalStart...FileClock.upperBound(), statistics: &statistics) }
        } catch {
            statistics.notes.append("the previous version could not be removed (\(error)); the next save removes it")
        }
    }

    /// Creates every entry of the new tree under `staging`, and its manifest.
    private func buildStagingTree(
        _ staging: borrowing FileDescriptor, copyEverything: Bool, packageExists: Bool,
        statistics: inout SaveStatistics
    ) throws {
        let packageDescriptor = packageExists ? SharedDescriptor(try FileDescriptor.openDirectory(packagePath)) : nil
        let package: Int32? = packageDescriptor?.rawValue
        defer { withExtendedLifetime(packageDescriptor) {} }
        planProgress(linking: !copyEverything)
        let parents = stagingParents(staging)
        var directories: [String] = [""]
        let windowStart = FileClock.lowerBound()
        let changedPermissions = EntryBits(count: plan.new.entries.count, setting: plan.permissionChanges)
        var pendingLinks = EntryIndices()
        for (index, entry) in plan.new.entries.enumerated() {
            switch entry.kind {
            case .directory:
                // Owner-writable until its children are in; its own bits come last.
                let (folder, name) = try parents.locate(entry.path)
                try FileSystem.makeDirectory(
                    name, relativeTo: folder, permissions: 0o700, displayPath: self.package.inside(entry.path))
                directories.append(entry.path)
                statistics.directoriesCreated += 1
            case .symbolicLink:
                let (folder, name) = try parents.locate(entry.path)
                writtenStatus[index] = try writer.writeSymbolicLink(
                    target: entry.linkTarget ?? "", named: name, in: folder, displayPath: self.package.inside(entry.path))
                statistics.symbolicLinksWritten += 1
            default:
                if !copyEverything, package != nil, plan.unchangedOld[index] != nil, !changedPermissions.contains(index) {
                    pendingLinks.append(index)
                    continue
                }
                try writeStagedFile(
                    index, into: parents, standsInForLink: plan.unchangedOld[index] != nil && !copyEverything,
                    statistics: &statistics)
            }
        }
        let outcome = try linkUnchanged(
            pendingLinks, from: package, into: staging, parents: parents, statistics: &statistics)
        let window: ClosedRange<Int64>? = outcome.linked > 0 ? windowStart...FileClock.upperBound() : nil
        try writeStagedManifest(
            staging, package: package, buildsOnPackage: !copyEverything && !outcome.linksImpossible, window: window,
            statistics: &statistics)
        linkedFiles = outcome.linked
        // Directories' own bits, deepest first, now that nothing more goes in.
        for index in plan.new.entries.indices.reversed() where plan.new.entries[index].kind == .directory {
            let entry = plan.new.entries[index]
            let (folder, name) = try parents.locate(entry.path)
            try FileSystem.setPermissions(name, entry.permissions, relativeTo: folder)
        }
        if try !makeDurableInBulk(staging), durable {
            try FileSystem.syncDirectory(PackageLayout.metadataDirectoryName, relativeTo: staging.rawValue)
            // Children before parents: a directory's entry is flushed after its contents.
            for directory in directories.reversed() {
                try FileSystem.syncDirectory(".", relativeTo: try parents.directory(directory))
            }
        }
    }

    /// The folders of the staging tree open as `staging`, for creating entries in them
    /// (beneath it, through no link: `TreeParents`).
    func stagingParents(_ staging: borrowing FileDescriptor) -> TreeParents {
        TreeParents(root: staging.rawValue) { [package] in package.inside($0) }
    }

    /// Writes new entry `index` into the staging tree and counts it: as a copy standing in
    /// for a link (unchanged content), or as a file written.
    func writeStagedFile(
        _ index: Int, into parents: TreeParents, standsInForLink: Bool, statistics: inout SaveStatistics
    ) throws {
        let (folder, name) = try parents.locate(plan.new.entries[index].path)
        // A large file that changed little: a clone of its old version with the changed
        // chunks written into it, where the file system has reflinks.
        if !standsInForLink, reflinksMayWork, let patch = chunkPatch(for: index, inPlace: false) {
            try checkCancellation()
            if let written = try writeClonePatched(index, patch: patch, named: name, in: folder) {
                writtenStatus[index] = written.status
                writtenChunks[index] = patch.newChunks
                statistics.filesCloned += 1
                statistics.bytesPatched += patch.comparison.changedBytes
                statistics.bytesWritten += patch.comparison.changedBytes
                return
            }
            reflinksMayWork = false
        }
        let written = try writeFile(index, named: name, in: folder)
        writtenStatus[index] = written.status
        if let chunks = written.chunks { writtenChunks[index] = chunks }
        if standsInForLink {
            statistics.filesCopiedForLinks += 1
            statistics.bytesCopiedForLinks += written.size
        } else {
            statistics.filesWritten += 1
            statistics.bytesWritten += written.size
        }
    }

    /// Hard-links `pendingLinks` — new entries whose package file is unchanged, the old
    /// entry `plan.unchangedOld` names — from the package into the staging tree; where links
    /// are impossible, copies the files instead and says so in the statistics.
    func linkUnchanged(
        _ pendingLinks: EntryIndices, from package: Int32?, into staging: borrowing FileDescriptor,
        parents: TreeParents, statistics: inout SaveStatistics
    ) throws -> (linked: Int, linksImpossible: Bool) {
        guard let package, !pendingLinks.isEmpty else { return (0, false) }
        let outcome = try Self.link(
            pendingLinks, of: plan, from: package, into: staging.rawValue, workers: options.workers, package: self.package)
        statistics.filesLinked += outcome.linked
        progress.filesWritten(outcome.linked)
        guard let code = outcome.impossibleBecause else { return (outcome.linked, false) }
        statistics.notes.append("hard links are impossible here (\(code.name)): unchanged files were copied instead")
        for index in outcome.notLinked {
            try writeStagedFile(index, into: parents, standsInForLink: true, statistics: &statistics)
        }
        return (outcome.linked, true)
    }

    /// Writes the staging tree's manifest: the package's base and deltas linked plus a new
    /// delta when the new tree builds on the package's files (`buildsOnPackage`) and the
    /// chain is short; a new base otherwise. `window`: when this save's links moved ctimes.
    func writeStagedManifest(
        _ staging: borrowing FileDescriptor, package: Int32?, buildsOnPackage: Bool, window: ClosedRange<Int64>?,
        statistics: inout SaveStatistics
    ) throws {
        let metadataName = PackageLayout.metadataDirectoryName
        try FileSystem.makeDirectory(metadataName, relativeTo: staging.rawValue)
        let metadata = try FileDescriptor.openDirectory(metadataName, relativeTo: staging.rawValue)
        // The staging root becomes the package: the manifest names its inode.
        let identity = (try? staging.status().inode) ?? 0
        if buildsOnPackage, let manifest, let package, appendsDelta {
            for existing in [PackageLayout.indexFileName] + manifest.deltaFileNames
            where !manifest.staleDeltaFiles.contains(existing) {
                try FileSystem.link(
                    metadataName + "/" + existing, to: existing, fromDirectory: package,
                    toDirectory: metadata.rawValue)
            }
            let record = deltaRecord()
            let delta = manifest.encodedDelta(
                upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
                newEntryCount: newEntryCount, relinkWindow: window, packageIdentity: identity)
            try writeMetadata(delta.bytes, named: delta.name, in: metadata.rawValue, displayName: metadataName + "/" + delta.name)
            statistics.metadataBytesWritten += Int64(delta.bytes.count)
            chain = (manifest.baseChecksum, Self.trailingChecksum(delta.bytes), manifest.lastSequence + 1)
            deltaRecordsWritten += record.upserts.count + record.removals.count
        } else {
            let written = try writeMetadata(
                named: PackageLayout.indexFileName, in: metadata.rawValue,
                displayName: metadataName + "/" + PackageLayout.indexFileName
            ) { sink in
                try writeBaseRecord(relinkWindow: window, packageIdentity: identity, to: sink)
            }
            statistics.metadataBytesWritten += Int64(written.byteCount)
            statistics.manifestCompacted = manifest != nil && buildsOnPackage
            chain = (written.checksum, ContentHash(high: 0, low: 0), 0)
        }
        try writeStagedSyncRecord(metadata, package: package, statistics: &statistics)
        try writeStagedConflicts(metadata, package: package, statistics: &statistics)
    }

    /// The new tree's conflicts folder: the package's carried over (hard links), with the
    /// record this save commits (`SaveOptions.conflictsRecord`, a merge) in place of its own.
    private func writeStagedConflicts(
        _ metadata: borrowing FileDescriptor, package: Int32?, statistics: inout SaveStatistics
    ) throws {
        let record = options.conflictsRecord
        if let package {
            try ConflictStore.carry(
                from: package, into: metadata, withoutRecord: record != nil, shownAs: self.package.path)
        } else if record != nil {
            try FileSystem.makeDirectory(PackageLayout.conflictsDirectoryName, relativeTo: metadata.rawValue)
        }
        guard let record else { return }
        let name = PackageLayout.conflictsDirectoryName + "/" + PackageLayout.conflictsRecordFileName
        try writeMetadata(record, named: name, in: metadata.rawValue, displayName: PackageLayout.metadataDirectoryName + "/" + name)
        statistics.metadataBytesWritten += Int64(record.count)
    }

    /// The new tree's sync record: the one this save commits (`SaveOptions.syncRecord`,
    /// a pull), or else the package's own, carried over unchanged. A record that cannot be
    /// one (`SyncRecordFile.Contents.unusable`) is not carried.
    private func writeStagedSyncRecord(
        _ metadata: borrowing FileDescriptor, package: Int32?, statistics: inout SaveStatistics
    ) throws {
        var bytes = options.syncRecord
        if bytes == nil, let package,
            case .bytes(let carried) = SyncRecordFile.read(in: package, shownAs: self.package.metadataPath)
        {
            bytes = carried
        }
        guard let bytes else { return }
        let name = PackageLayout.syncRecordFileName
        try writeMetadata(bytes, named: name, in: metadata.rawValue, displayName: PackageLayout.metadataDirectoryName + "/" + name)
        statistics.metadataBytesWritten += Int64(bytes.count)
    }

    /// Hard-links unchanged files (new entries of `plan` by index, each from the old entry
    /// `plan.unchangedOld` names) into the staging tree on `workers` threads, one pair of
    /// source and target directories per job: links into one directory serialise on its
    /// lock in the kernel, links into different ones do not.
    ///
    /// Where links are impossible (another volume, a file system without them, a file at
    /// its link limit), the files not linked are returned, to be copied.
    private static func link(
        _ links: EntryIndices, of plan: SavePlan, from package: Int32, into staging: Int32, workers: Int,
        package location: PackageLocation
    ) throws
        -> (linked: Int, notLinked: [Int], impossibleBecause: Errno?)
    {
        let (old, new, unchangedOld) = (plan.old.entries, plan.new.entries, plan.unchangedOld)
        /// The package's entry for new entry `index`'s unchanged file.
        @Sendable func source(_ index: Int) -> SnapshotEntry {
            guard let oldIndex = unchangedOld[index] else { preconditionFailure("a link to a file not unchanged") }
            return old[oldIndex]
        }
        @Sendable func from(_ index: Int) -> String { source(index).path }
        let groups = folderPairs(links, from: from, to: { new[$0].path })
        let outcome = Mutex<(linked: Int, notLinked: [Int], impossibleBecause: Errno?)>((0, [], nil))
        let impossible: [Errno] = [.crossDevice, .notPermitted, .notSupported, Errno(rawValue: EMLINK)]
        try WorkQueue<EntryIndices>.run(initial: groups, workers: workers, makeContext: {}) { group, _, _ in
            let fromParent = RelativePath.parent(of: from(group[0]))
            let toParent = RelativePath.parent(of: new[group[0]].path)
            // Beneath the package and through no link: the manifest's paths are not to be
            // trusted to name folders (a link leading out may stand where it says one is).
            let sourceDirectory = try FileDescriptor.openWithoutSymlinks(
                fromParent.isEmpty ? "." : fromParent, relativeTo: package, options: [.directory], beneath: true,
                displayPath: location.inside(fromParent))
            let target = try FileDescriptor.openWithoutSymlinks(
                toParent.isEmpty ? "." : toParent, relativeTo: staging, options: [.directory], beneath: true,
                displayPath: location.inside(toParent))
            var linked = 0
            var notLinked: [Int] = []
            var reason: Errno?
            for index in group {
                do throws(FileSystemError) {
                    try FileSystem.link(
                        String(source(index).name), to: String(new[index].name),
                        fromDirectory: sourceDirectory.rawValue, toDirectory: target.rawValue)
                    linked += 1
                } catch {
                    guard let code = error.errno, impossible.contains(code) else {
                        throw FileSystemError(
                            .link, path: location.inside(from(index)), errno: error.errno,
                            reason: "an unchanged file could not be linked into the new version")
                    }
                    notLinked.append(index)
                    reason = reason ?? code
                }
            }
            outcome.withLock {
                $0.linked += linked
                $0.notLinked += notLinked
                $0.impossibleBecause = $0.impossibleBecause ?? reason
            }
        }
        return outcome.withLock { $0 }
    }

    /// `links` grouped by the pair of folders each is linked between, so that a job links
    /// name to name between two open directories instead of resolving two paths per file.
    /// Keyed by bytes: twin folders (`é`, `e\u{301}`) are two groups.
    private static func folderPairs(
        _ links: EntryIndices, from: (Int) -> String, to: (Int) -> String
    ) -> [EntryIndices] {
        var groups: [RelativePath: EntryIndices] = [:]
        for index in links {
            let key = RelativePath.parent(of: from(index)) + "\u{0}" + RelativePath.parent(of: to(index))
            groups[RelativePath(trusted: key), default: EntryIndices()].append(index)
        }
        return Array(groups.values)
    }
}
