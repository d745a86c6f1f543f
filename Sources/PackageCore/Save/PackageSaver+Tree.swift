/// The save engine's entry point for trees held in memory (a `FileWrapper`), beside
/// `save(directory:to:options:)` for trees on disk.
extension PackageSaver {
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
        if let existing = try FileSystem.statusIfExists(packagePath), existing.kind != .directory {
            throw SaveRefusal("cannot save to '\(packagePath)': it is a \(existing.kind), not a package directory")
        }
        if PackageLockScope.holdsSharedOnly(packagePath) {
            throw SaveRefusal("cannot save '\(packagePath)' while this task holds its lock for reading")
        }
        let lock = PackageLockScope.covers(packagePath, exclusive: true)
            ? nil : try PackageLock.acquire(for: packagePath, exclusive: true)
        defer { lock?.release() }
        let recovery = try PackageRecovery.recover(packagePath: packagePath, durability: options.durability)
        statistics.recovered = recovery.didAnything

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
