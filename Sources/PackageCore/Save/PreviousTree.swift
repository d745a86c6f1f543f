/// The previous version an atomic save keeps beside the package (`SaveOptions.keepsPrevious`),
/// and how the next atomic save turns it into the new tree in proportion to the change.
///
/// After an atomic save swaps its staging tree in, the replaced tree holds the previous
/// version, complete with its manifest, and shares every file that did not change with the
/// package (hard links). Removing it costs one unlink per entry, and building the next
/// staging tree one link per unchanged file: for a package of 20,000 files and one edit,
/// 40,000 directory operations. Kept instead as `.NAME.<hash>.pkgtool-previous`, it only needs the
/// entries that differ from the new snapshot replaced — what changed in this save and in
/// the one before — to become the next staging tree.
///
/// The previous tree is claimed by renaming it to a staging name before it is touched: a
/// crash during the update leaves ordinary staging litter, which recovery removes, and the
/// package itself is untouched until the exchange, as for any atomic save.
struct PreviousTree {
    /// What the previous tree holds, from its own manifest.
    let snapshot: TreeSnapshot
}

extension SaveContext {
    /// Claims the kept previous version as the staging tree (renamed to a staging name
    /// first) and returns it with what it holds; nil when there is none or it cannot be
    /// trusted (its manifest unsound, a journal inside, or the package's manifest itself not
    /// trusted), in which case it is removed and the staging tree is built afresh.
    func claimPrevious(statistics: inout SaveStatistics) throws -> (StagedReplacement?, PreviousTree?) {
        var previousName = package.siblings.previous
        var status = try FileSystem.statusIfExists(package.sibling(previousName))
        // (The older scheme's name may be too long for the file system: then there is none.)
        if status == nil, let legacy = (try? FileSystem.statusIfExists(package.sibling(package.siblings.legacyPrevious))) ?? nil {
            previousName = package.siblings.legacyPrevious
            status = legacy
        }
        guard let status else { return (nil, nil) }
        let previousPath = package.sibling(previousName)
        var usable: PackageManifest?
        if status.kind == .directory, options.trustManifest {
            let journal = RelativePath.join(RelativePath.join(previousPath, PackageLayout.metadataDirectoryName), SaveJournal.fileName)
            if try FileSystem.statusIfExists(journal) == nil {
                usable = try? PackageManifest.load(packagePath: previousPath)
                // It must be the manifest of this very tree (it was the package), not one
                // copied into place.
                if let manifest = usable, manifest.packageIdentity != status.inode { usable = nil }
            }
        }
        guard let manifest = usable else {
            try FileSystem.removeTree(previousPath, workers: options.workers)
            statistics.notes.append("the kept previous version could not be trusted: it was removed and rebuilt")
            return (nil, nil)
        }
        let staged = try StagedReplacement(replacing: package.path, claiming: previousName)
        return (staged, PreviousTree(snapshot: manifest.snapshot))
    }

    /// Turns the claimed previous tree (now at `staging`) into the new tree: removes what
    /// the new snapshot does not hold, replaces every file that differs from it — hard-linked
    /// from the package when the package's file is unchanged, written fresh otherwise — and
    /// writes the manifest. Files are never changed in place, and never re-permissioned:
    /// the previous tree shares their inodes with the package.
    ///
    /// - Complexity: work in proportion to the entries where the previous tree, the package
    ///   and the new snapshot differ, plus an O(n) comparison in memory.
    func updateStagingTree(_ staging: borrowing FileDescriptor, from previous: PreviousTree, statistics: inout SaveStatistics)
        throws
    {
        let packageDescriptor = SharedDescriptor(try FileDescriptor.openDirectory(packagePath))
        let packageRoot = packageDescriptor.rawValue
        defer { withExtendedLifetime(packageDescriptor) {} }
        var update = PreviousTreeUpdate(
            from: SavePlan(
                old: previous.snapshot, new: plan.new, origins: plan.origins, contentDirectory: plan.contentDirectory,
                contentLookup: plan.contentLookup),
            package: plan)
        let windowStart = FileClock.lowerBound()
        let parents = stagingParents(staging)
        update.openedUp = openUpReadOnlyDirectories(of: previous, parents: parents)
        try removeEntriesGone(from: previous, update: &update, parents: parents)
        for (index, entry) in plan.new.entries.enumerated() {
            try bringUpToDate(index, entry, update: &update, parents: parents, statistics: &statistics)
        }
        let toWrite = update.toWrite
        var units: Int64 = 0
        for index in toWrite { units += plan.new.entries[index].size }
        progress.plan(files: toWrite.count + update.pendingLinks.count, bytes: units)
        for index in toWrite {
            try writeStagedFile(
                index, into: parents,
                standsInForLink: plan.unchangedOld[index] != nil && !update.modeChangedInPackage.contains(index),
                statistics: &statistics)
        }
        let outcome = try linkUnchanged(
            update.pendingLinks, from: packageRoot, into: staging, parents: parents, statistics: &statistics)
        let window: ClosedRange<Int64>? = windowStart...FileClock.upperBound()
        // The previous tree's manifest described the version before; the new one builds on
        // the package's.
        try FileSystem.removeTree(PackageLayout.metadataDirectoryName, relativeTo: staging.rawValue)
        try writeStagedManifest(
            staging, package: packageRoot, buildsOnPackage: !outcome.linksImpossible, window: window, statistics: &statistics)
        statistics.reusedPrevious = true
        try setFinalDirectoryBits(of: update.created + update.openedUp, parents: parents)
        if try !makeDurableInBulk(staging), durable {
            try syncChangedDirectories(of: staging, update: update, parents: parents)
        }
    }

    /// Directories of the kept tree its owner may not write (a read-only folder): opened up
    /// while it is brought up to date, so that their entries can change; every directory
    /// gets its final bits at the end. Returns their paths.
    private func openUpReadOnlyDirectories(of previous: PreviousTree, parents: TreeParents) -> [String] {
        var openedUp: [String] = []
        for entry in previous.snapshot.entries where entry.kind == .directory && entry.permissions & 0o300 != 0o300 {
            guard let (folder, name) = try? parents.locate(entry.path) else { continue }
            if (try? FileSystem.setPermissions(name, entry.permissions | 0o700, relativeTo: folder)) != nil {
                openedUp.append(entry.path)
            }
        }
        return openedUp
    }

    /// Removes the previous tree's subtrees the new snapshot does not hold (deleted, or of
    /// another kind now).
    private func removeEntriesGone(
        from previous: PreviousTree, update: inout PreviousTreeUpdate, parents: TreeParents
    ) throws {
        for index in update.fromPrevious.removals {
            let path = previous.snapshot.entries[index].path
            let (folder, name) = try parents.locate(path)
            try FileSystem.removeTree(name, relativeTo: folder, displayPath: package.inside(path))
            parents.forget(path)
            update.touched.insert(RelativePath(trusted: RelativePath.parent(of: path)))
        }
    }

    /// New entry `index`: a directory is created or re-permissioned; a link that differs is
    /// replaced at once; a file that differs from the new snapshot, or whose package
    /// counterpart differs, is unlinked and queued to be linked from the package or written
    /// fresh. Nothing is changed in place: its inode is shared with the package.
    private func bringUpToDate(
        _ index: Int, _ entry: SnapshotEntry, update: inout PreviousTreeUpdate, parents: TreeParents,
        statistics: inout SaveStatistics
    ) throws {
        switch entry.kind {
        case .directory:
            if update.createdSincePrevious.contains(index) {
                let (folder, name) = try parents.locate(entry.path)
                try FileSystem.makeDirectory(
                    name, relativeTo: folder, permissions: 0o700, displayPath: package.inside(entry.path))
                update.touched.insert(RelativePath(trusted: RelativePath.parent(of: entry.path)))
                update.created.append(entry.path)
                statistics.directoriesCreated += 1
            } else if update.modeChangedSincePrevious.contains(index) {
                // Directories belong to one tree only: changing their bits is safe.
                update.openedUp.append(entry.path)
            }
        case .symbolicLink:
            guard update.fromPrevious.unchangedOld[index] == nil else { return }
            let (folder, name) = try parents.locate(entry.path)
            try removeIfPresent(name, in: folder, path: entry.path)
            writtenStatus[index] = try writer.writeSymbolicLink(
                target: entry.linkTarget ?? "", named: name, in: folder, displayPath: package.inside(entry.path))
            update.touched.insert(RelativePath(trusted: RelativePath.parent(of: entry.path)))
            statistics.symbolicLinksWritten += 1
        default:
            let sameAsPrevious =
                update.fromPrevious.unchangedOld[index] != nil && !update.modeChangedSincePrevious.contains(index)
            // The package's file is this one (a link to it is pending with `plan.unchangedOld`).
            let packageHasIt = plan.unchangedOld[index] != nil && !update.modeChangedInPackage.contains(index)
            // Kept only when it is also the package's file: the manifest then describes it.
            if sameAsPrevious && packageHasIt { return }
            let (folder, name) = try parents.locate(entry.path)
            try removeIfPresent(name, in: folder, path: entry.path)
            update.touched.insert(RelativePath(trusted: RelativePath.parent(of: entry.path)))
            if packageHasIt {
                update.pendingLinks.append(index)
            } else {
                update.toWrite.append(index)
            }
        }
    }

    /// Final bits of the directories created or opened up, deepest first (a read-only
    /// folder gets its children before it closes).
    private func setFinalDirectoryBits(of paths: [String], parents: TreeParents) throws {
        // (Keyed by bytes: twin folders `é` and `e\u{301}` keep their own bits.)
        let newDirectories = Dictionary(
            plan.new.entries.lazy.filter { $0.kind == .directory }.map { (RelativePath(trusted: $0.path), $0.permissions) },
            uniquingKeysWith: { first, _ in first })
        let finishing = Set(paths.map { RelativePath(trusted: $0) })
        for path in finishing.sorted(by: { RelativePath.depth(of: $0.string) > RelativePath.depth(of: $1.string) }) {
            guard let bits = newDirectories[path] else { continue }
            let (folder, name) = try parents.locate(path.string)
            try FileSystem.setPermissions(name, bits, relativeTo: folder)
        }
    }

    /// With `--fsync full` and files fsynced one by one: fsyncs `.pkgtool` and every
    /// directory whose entries changed, children before parents, before the exchange
    /// publishes them.
    private func syncChangedDirectories(
        of staging: borrowing FileDescriptor, update: PreviousTreeUpdate, parents: TreeParents
    ) throws {
        try FileSystem.syncDirectory(PackageLayout.metadataDirectoryName, relativeTo: staging.rawValue)
        // Children before parents; new directories are among them.
        let directories = update.touched.union(update.created.map { RelativePath(trusted: $0) })
            .sorted { $0.string.utf8.count > $1.string.utf8.count }
        for directory in directories {
            try FileSystem.syncDirectory(".", relativeTo: try parents.directory(directory.string))
        }
    }

    /// Unlinks `name` in `directory` when something is there (a file or symbolic link of
    /// the previous version about to be replaced); `path` is its path in the package.
    private func removeIfPresent(_ name: String, in directory: Int32, path: String) throws {
        do throws(FileSystemError) {
            try FileSystem.remove(name, relativeTo: directory, displayPath: PackageLayout.joined(packagePath, path))
        } catch {
            if !error.isNotFound { throw error }
        }
    }
}

/// What bringing a kept previous tree up to date compares, and what its steps found.
private struct PreviousTreeUpdate {
    /// From the previous tree to the new snapshot.
    let fromPrevious: SavePlan
    let createdSincePrevious: EntryBits
    let modeChangedSincePrevious: EntryBits
    let modeChangedInPackage: EntryBits
    /// Directories whose entries change, to be fsynced; the root among them.
    var touched: Set<RelativePath> = [.root]
    /// Directories created in the kept tree.
    var created: [String] = []
    /// Directories whose bits are set at the end: opened up, or changed since.
    var openedUp: [String] = []
    /// Files to hard-link from the package (its file, `plan.unchangedOld`, is unchanged).
    var pendingLinks = EntryIndices()
    /// Files to write fresh.
    var toWrite = EntryIndices()

    init(from fromPrevious: SavePlan, package plan: SavePlan) {
        self.fromPrevious = fromPrevious
        let count = plan.new.entries.count
        createdSincePrevious = EntryBits(count: count, setting: fromPrevious.creations)
        modeChangedSincePrevious = EntryBits(count: count, setting: fromPrevious.permissionChanges)
        modeChangedInPackage = EntryBits(count: count, setting: plan.permissionChanges)
    }
}
