import Glibc

/// The save engine: makes a package's content equal to a new tree, writing only what
/// changed, crash-safe, with the chosen strategy (Specs/save.md).
public enum PackageSaver {
    /// Makes the package at `packagePath` hold exactly the tree `source` describes (creating
    /// the package when absent), then records the new state in its manifest. The one way
    /// pkgtool changes a package: the CLI's `save`, `FileWrapper.write(to:…)`, the document
    /// layer and pulls from a remote all come through here.
    ///
    /// In order: the package's path is resolved once (`PackageLocation`); an exclusive
    /// `PackageScope` takes its lock (unless this task holds it already: a coordinated save)
    /// and recovers an interrupted save; the package's current state is read from its
    /// manifest when it describes the package (`OpenPackage.readManifest()`), else by
    /// checking the package; the source describes the new
    /// tree — only its changed parts when it knows them; the two are compared entry by entry
    /// (unchanged means equal kind, executable bit, size and content hash at the same path);
    /// the strategy writes the difference and commits; the manifest records the result.
    ///
    /// - Parameters:
    ///   - source: what the new tree is (`DirectorySource`, `FileWrapperSource`, your own).
    ///   - packagePath: the package, created when absent (its parent folder must exist).
    ///   - options: strategy, durability, cancellation…; the defaults suit most saves.
    ///   - progress: coarse progress (one unit per file written or linked, one per MiB), on
    ///     top of `options.progress`.
    /// - Returns: what was done, counted by the engine.
    /// - Throws: `FileSystemError` for I/O trouble, `SaveRefusal` when the input is refused
    ///   (a source file changed while it was saved, a name the package cannot hold),
    ///   `CancellationError` when cancelled before the commit; in every case the package
    ///   keeps its last good version.
    /// - Complexity: as the source's description (a stat of every source entry for a
    ///   directory; the edited parts for a tree read from this package), then writes in
    ///   proportion to the change (`journaled`), to the change plus one link per unchanged
    ///   file (`atomic`), or to the whole package (`full`).
    @discardableResult
    public static func save(
        _ source: some SaveSource, to packagePath: String, options: SaveOptions = SaveOptions(),
        progress: consuming Subprogress? = nil
    ) throws -> SaveOutcome {
        var options = options
        var bridge: SaveProgressBridge?
        if let progress = progress.take() {
            let made = SaveProgressBridge(progress)
            bridge = made
            options.progress = SaveProgressBridge.chained(options.progress, made.report)
        }
        defer { bridge?.finish() }
        let package = try PackageLocation(packagePath)
        return try save(source, at: package, options: options)
    }

    /// `save(_:to:options:progress:)` once the path is resolved.
    static func save(_ source: some SaveSource, at package: PackageLocation, options: SaveOptions) throws -> SaveOutcome {
        let clock = Stopwatch()
        if options.keepsPrevious && options.strategy != .atomic {
            throw SaveRefusal(
                path: "\(package)",
                reason: .conflictingOptions("keeping the previous version applies to the atomic strategy, not \(options.strategy)"))
        }
        try refuseNonDirectory(package)
        try source.validate(for: package)
        var isCancelled: (@Sendable () -> Bool)?
        if let cancellation = options.cancellation { isCancelled = { cancellation.isCancelled } }
        return try HashingCancellation.binding(isCancelled) {
            try saveLocked(source, at: package, options: options, clock: clock)
        }
    }

    /// `save` once the input was checked: under the lock, after recovery.
    private static func saveLocked(
        _ source: some SaveSource, at package: PackageLocation, options: SaveOptions, clock: Stopwatch
    ) throws -> SaveOutcome {
        return try PackageScope.withPackage(at: package, access: .exclusive, durability: options.durability) { opened in
            let recovery = opened.recovery
            let packageExists = try FileSystem.statusIfExists(package.path) != nil
            // Recovery (now or earlier) found the package may hold what its manifest does
            // not say: check before trusting it.
            let markedForCheck = packageExists && opened.isMarkedForCheck
            var options = options
            if markedForCheck { options.trustManifest = false }
            var context = SaveSourceContext(package: package, packageExists: packageExists, options: options)
            var statistics = SaveStatistics(strategy: options.strategy)
            statistics.recovered = recovery.didAnything
            statistics.notes += recovery.warnings
            let executed: SaveContext.Result
            if packageExists, options.strategy == .journaled, options.trustManifest,
                let parts = try (source as? any EditedPartsSource)?.changedParts(in: context)
            {
                executed = try saveEditedParts(parts, at: package, options: options, statistics: &statistics)
            } else {
                executed = try saveWholeTree(
                    source, opened: opened, at: package, exists: packageExists, options: options, context: &context,
                    statistics: &statistics)
            }
            var outcome = SaveOutcome(statistics: executed.statistics, head: executed.head, writtenFiles: executed.written)
            if markedForCheck {
                // Checked and saved: the manifest describes the package again.
                try? FileSystem.remove(package.metadataPath + "/" + PackageRecovery.checkMarkerName)
                outcome.statistics.notes.append("checked the package against its manifest before trusting it (an earlier save was interrupted or refused)")
            }
            outcome.statistics.seconds = clock.seconds
            source.didSave(outcome, in: context)
            return outcome
        }
    }

    /// The edited parts of a tree that knows its edits (`EditedPartsSource`), planned
    /// against the manifest head they build on and saved journaled: only what changed is
    /// compared.
    private static func saveEditedParts(
        _ parts: PartialSourceTree, at package: PackageLocation, options: SaveOptions, statistics: inout SaveStatistics
    ) throws -> SaveContext.Result {
        try requireCurrentRoot(parts.head.rootHash, of: package, options: options)
        statistics.filesHashed = parts.filesHashed
        statistics.bytesHashed = parts.bytesHashed
        statistics.notes += parts.notes
        let plan = SavePlan(
            old: TreeSnapshot(entries: PackageManifest.withDescendantCounts(parts.current), rootHash: parts.head.rootHash),
            new: TreeSnapshot(entries: PackageManifest.withDescendantCounts(parts.new), rootHash: parts.newRootHash),
            origins: parts.contents, unknownOldContent: parts.unknownContent)
        let saving = SaveContext(
            package: package, plan: plan, manifest: PackageManifest(head: parts.head), options: options,
            rootPermissions: parts.rootPermissions, newEntryCount: parts.newEntryCount)
        return try saving.execute(packageExists: true, statistics: statistics)
    }

    /// The whole new tree, compared with the package's current state (its manifest, or a
    /// check of the package when the manifest cannot be trusted).
    private static func saveWholeTree(
        _ source: some SaveSource, opened: OpenPackage, at package: PackageLocation, exists packageExists: Bool,
        options: SaveOptions, context: inout SaveSourceContext, statistics: inout SaveStatistics
    ) throws -> SaveContext.Result {
        let current = try currentState(of: opened, exists: packageExists, options: options, statistics: &statistics)
        try requireCurrentRoot(current.snapshot.rootHash, of: package, options: options)
        context.manifest = current.stamps
        let tree = try source.wholeTree(in: context).assembled(in: context)
        statistics.filesHashed += tree.filesHashed
        statistics.bytesHashed += tree.bytesHashed
        statistics.notes += tree.notes
        let plan = SavePlan(
            old: current.snapshot, new: tree.snapshot, origins: tree.contents, contentDirectory: tree.contentDirectory,
            contentLookup: tree.contentLookup,
            vouched: current.vouched, racyStamps: tree.rereadsRacySourceStamps ? current.stamps : nil)
        let saving = SaveContext(
            package: package, plan: plan, manifest: current.manifest, options: options,
            rootPermissions: tree.rootPermissions, newEntryCount: tree.snapshot.entries.count)
        saving.recordsNewBase = current.vouched != nil
        return try saving.execute(packageExists: packageExists, statistics: statistics)
    }

    /// Refuses the save when the package does not hold `SaveOptions.requiredCurrentRoot`.
    static func requireCurrentRoot(_ root: ContentHash, of package: PackageLocation, options: SaveOptions) throws {
        guard let required = options.requiredCurrentRoot, required != root else { return }
        throw SaveRefusal(path: "\(package)", reason: .sourceChanged("it no longer holds what was examined before the save"))
    }

    /// Refuses a package path that holds something other than a directory.
    static func refuseNonDirectory(_ package: PackageLocation) throws {
        if let existing = try FileSystem.statusIfExists(package.path), existing.kind != .directory {
            throw SaveRefusal(path: "\(package)", reason: .destinationNotADirectory(existing.kind))
        }
    }

    /// What the package holds now: from its manifest when it describes the package
    /// (`OpenPackage.readManifest()`), else a check of the package that takes unchanged
    /// files' hashes from the manifest's stat cache (`CheckedPackage`).
    static func currentState(
        of package: OpenPackage, exists: Bool, options: SaveOptions, statistics: inout SaveStatistics
    ) throws -> CurrentState {
        guard exists else { return CurrentState(snapshot: .empty) }
        var reading = try package.readManifest()
        if let problem = reading.problem {
            statistics.notes.append("\(problem); rebuilt it by hashing the package")
        }
        // Taken out of the reading: the manifest's entries have one owner, and a check
        // drops them once its own tree stands in for them.
        guard let manifest = reading.manifest else {
            statistics.manifestRebuilt = true
            return CurrentState(snapshot: try check(package.path, against: nil, options: options, statistics: &statistics))
        }
        reading.manifest = nil
        if options.trustManifest {
            // Trusted as the package's state only when it names this very folder: one copied
            // or received with the package (another inode), or written before manifests
            // recorded it (0), is checked against the package first, as --check-package does.
            if reading.describesPackage { return CurrentState(manifest: manifest) }
            if manifest.packageIdentity != 0 {
                statistics.notes.append(
                    "the manifest was written for another folder (copied or received with the package): checked the package against it")
            }
        }
        let checked = try check(package.path, against: manifest, options: options, statistics: &statistics)
        return CurrentState(CheckedPackage(checked: consume checked, manifest: consume manifest))
    }

    /// The package's tree, every file hashed but those the manifest's stat cache vouches for.
    private static func check(
        _ packagePath: String, against manifest: PackageManifest?, options: SaveOptions, statistics: inout SaveStatistics
    ) throws -> TreeSnapshot {
        var scanner = TreeScanner(
            workers: options.workers, knownHash: manifest?.hashLookup,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        scanner.recordedContent = manifest?.recordedContentLookup
        // Only the count of files read is reported: a copied package's check reads every
        // file, and their paths would be a million strings.
        scanner.recordsHashedPaths = false
        let scan = try scanner.scan(packagePath)
        statistics.filesHashed += scan.filesHashed
        statistics.bytesHashed += scan.bytesHashed
        return scan.snapshot
    }

    /// What a save compares its new tree with, and how it records the result.
    struct CurrentState {
        /// The package's tree.
        var snapshot: TreeSnapshot
        /// The stamps a source's scan and the plan consult (`SaveSourceContext.manifest`).
        var stamps: PackageManifest?
        /// The manifest the save extends: all of it when trusted, its head after a check
        /// (whose save writes a new base).
        var manifest: PackageManifest?
        /// After a check: which files the stat cache vouched for (`CheckedPackage.vouched`).
        var vouched: EntryBits?

        /// A package without a usable manifest (or none at all), as found.
        init(snapshot: TreeSnapshot) {
            self.snapshot = snapshot
        }

        /// A package its manifest describes.
        init(manifest: PackageManifest) {
            snapshot = manifest.snapshot
            stamps = manifest
            self.manifest = manifest
        }

        /// A package checked against its manifest.
        init(_ checked: CheckedPackage) {
            snapshot = checked.snapshot
            stamps = checked.stamps
            manifest = PackageManifest(head: checked.recordedHead)
            vouched = checked.vouched
        }
    }
}

/// Wall-clock readings in the kernel's file-timestamp clock, for relink windows.
enum FileClock {
    /// A time no later than any timestamp the kernel sets from now on (the coarse clock).
    static func lowerBound() -> Int64 { SystemClock.coarseRealtimeNanoseconds }

    /// A time no earlier than any timestamp the kernel has set so far.
    static func upperBound() -> Int64 { SystemClock.realtimeNanoseconds }
}
