/// The save engine's entry point for trees held in memory (a `FileWrapper`), beside
/// `save(directory:to:options:)` for trees on disk.
extension PackageSaver {
    /// Makes the package at `packagePath` hold exactly the tree `root`, writing only what
    /// changed, and records the new state in the package's manifest.
    ///
    /// A tree read from this package (`FileWrapper(url:)`) or saved to it before knows what
    /// was edited since: with the journaled strategy (the default) only edited directories
    /// are visited and only changed files written, so a save costs in proportion to the
    /// change, however large the package. Otherwise (another strategy, a tree from
    /// elsewhere, a manifest rewritten behind the tree's back, compaction due) the whole
    /// tree is compared with the package. Afterwards the tree describes the package: the
    /// files written become the files its nodes are backed by.
    ///
    /// Takes the package's exclusive lock unless the current task holds it
    /// (`PackageLockScope`), and recovers an interrupted save first.
    /// - Complexity: edited tree, journaled: one listing and `fstatat` per child of each
    ///   edited directory plus the changed bytes; otherwise as `save(directory:to:options:)`.
    public static func save(_ root: FileWrapper, to packagePath: String, options: SaveOptions = SaveOptions()) throws
        -> SaveStatistics
    {
        try saveTree(root, to: packagePath, options: options).statistics
    }

    /// `save(_:to:options:)`, also returning the nodes written with their new stat data.
    static func saveTree(_ root: FileWrapper, to packagePath: String, options: SaveOptions) throws -> (
        statistics: SaveStatistics, written: [FileWrapper.WrittenNode]
    ) {
        guard root.isDirectory else {
            throw SaveRefusal("cannot save '\(packagePath)': a package is a directory, the tree is a \(root.kind)")
        }
        let packagePath = PackageLock.trimmingTrailingSlashes(packagePath)
        try refuseNonDirectory(packagePath)
        return try withExclusiveAccess(to: packagePath, durability: options.durability) { recovered in
            try saveTreeLocked(root, to: packagePath, options: options, recovered: recovered)
        }
    }

    private static func saveTreeLocked(_ root: FileWrapper, to packagePath: String, options: SaveOptions, recovered: Bool)
        throws -> (statistics: SaveStatistics, written: [FileWrapper.WrittenNode])
    {
        let clock = Stopwatch()
        var statistics = SaveStatistics(strategy: options.strategy)
        statistics.recovered = recovered
        if try FileSystem.statusIfExists(packagePath) != nil {
            if let written = try saveEditedParts(of: root, to: packagePath, options: options, statistics: &statistics) {
                statistics.seconds = clock.seconds
                return (statistics, written.map { FileWrapper.WrittenNode(node: $0.node, relativePath: $0.relativePath, status: $0.status) })
            }
        }
        // The whole tree against the whole package.
        let (snapshot, nodes) = try root.nodesWithPaths()
        var entries = snapshot.entries
        var origins = [ContentOrigin?](repeating: nil, count: entries.count)
        let now = FileClock.upperBound()
        for index in entries.indices {
            let (contents, record, knownTime) = nodes[index].state.withLock {
                ($0.contents, $0.diskRecord, $0.modificationTime)
            }
            // A file made in memory has no date: it gets the time of this save.
            if knownTime == nil { entries[index].modificationTime = now }
            guard entries[index].kind == .regular else { continue }
            if let contents {
                origins[index] = .bytes(Array(contents))
            } else if let record {
                origins[index] = .file(path: record.path, seen: record.status)
            }
        }
        var saved = try save(
            snapshot: TreeSnapshot(entries: entries, rootHash: snapshot.rootHash), origins: origins,
            rootPermissions: root.state.withLock { $0.effectivePermissions }, to: packagePath, options: options)
        // The tree now describes the package: every node backed by its file, no edit marks,
        // and the manifest's head remembered for the next save.
        var written = [FileWrapper.WrittenNode(node: root, relativePath: "", status: try FileSystem.status(packagePath))]
        written.reserveCapacity(entries.count + 1)
        for index in entries.indices {
            let status = try FileSystem.status(PackageLayout.joined(packagePath, entries[index].path))
            written.append(FileWrapper.WrittenNode(node: nodes[index], relativePath: entries[index].path, status: status))
        }
        for item in written {
            let path = PackageLayout.joined(packagePath, item.relativePath)
            item.node.state.withLock { node in
                node.diskRecord = DiskRecord(path: item.relativePath.isEmpty ? packagePath : path, status: item.status)
                node.directoryEditedSinceRead = false
                node.editedBelow = false
            }
        }
        if let manifest = try? PackageManifest.load(packagePath: packagePath),
            let identity = try? TreePackageState.Identity.current(packagePath: packagePath, head: manifest.head)
        {
            root.packageState = TreePackageState(packagePath: packagePath, head: manifest.head, identity: identity)
        }
        saved.seconds = clock.seconds
        return (saved, written)
    }

    /// Makes the package at `packagePath` hold exactly `new`, whose regular files' bytes come
    /// from `origins` (parallel to `new.entries`; needed only for files that changed), then
    /// records the new state in the manifest. Unchanged means equal content hash and size at
    /// the same path, as for directories.
    ///
    /// Takes the package's exclusive lock unless the current task already holds it
    /// (`PackageLockScope`), as a document host coordinating the save does.
    /// - Complexity: a stat of every package entry (unless `options.trustManifest`), then
    ///   writes in proportion to the change under the chosen strategy.
    static func save(
        snapshot new: TreeSnapshot, origins: [ContentOrigin?], rootPermissions: UInt32, to packagePath: String,
        options: SaveOptions
    ) throws -> SaveStatistics {
        let clock = Stopwatch()
        var statistics = SaveStatistics(strategy: options.strategy)
        let packagePath = PackageLock.trimmingTrailingSlashes(packagePath)
        try refuseNonDirectory(packagePath)
        return try withExclusiveAccess(to: packagePath, durability: options.durability) { recovered in
            statistics.recovered = statistics.recovered || recovered
            return try saveLocked(
                snapshot: new, origins: origins, rootPermissions: rootPermissions, to: packagePath, options: options,
                statistics: statistics, clock: clock)
        }
    }

    private static func saveLocked(
        snapshot new: TreeSnapshot, origins: [ContentOrigin?], rootPermissions: UInt32, to packagePath: String,
        options: SaveOptions, statistics: SaveStatistics, clock: Stopwatch
    ) throws -> SaveStatistics {
        var statistics = statistics
        let current = try currentState(of: packagePath, options: options, statistics: &statistics)
        let plan = SavePlan(old: current.snapshot, new: new, origins: origins, recorded: current.recorded)
        let context = SaveContext(
            packagePath: packagePath, plan: plan, manifest: current.manifest, options: options,
            rootPermissions: rootPermissions)
        try context.execute(packageExists: current.exists, statistics: &statistics)
        statistics.rootHash = new.rootHash
        statistics.entryCount = new.entries.count
        statistics.seconds = clock.seconds
        return statistics
    }

    /// What the package holds now: from its manifest when trusted, else a scan that takes
    /// unchanged files' hashes from the manifest's stat cache.
    static func currentState(
        of packagePath: String, options: SaveOptions, statistics: inout SaveStatistics
    ) throws -> (exists: Bool, manifest: PackageManifest?, snapshot: TreeSnapshot, recorded: PackageManifest?) {
        guard try FileSystem.statusIfExists(packagePath) != nil else { return (false, nil, .empty, nil) }
        var manifest: PackageManifest?
        do {
            manifest = try PackageManifest.load(packagePath: packagePath)
        } catch let problem as ManifestError {
            statistics.notes.append("\(problem); rebuilt it by hashing the package")
        }
        if manifest == nil { statistics.manifestRebuilt = true }
        if options.trustManifest, let manifest { return (true, manifest, manifest.snapshot, nil) }
        let scanner = TreeScanner(
            workers: options.workers, knownHash: manifest?.hashLookup,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        let scan = try scanner.scan(packagePath)
        var snapshot = scan.snapshot
        if let manifest { snapshot.adoptSourceStamps(from: manifest.snapshot) }
        statistics.filesHashed += scan.filesHashed
        statistics.bytesHashed += scan.bytesHashed
        return (true, manifest, snapshot, manifest)
    }
}
