import Glibc

/// The save engine: makes a package's content equal to a new snapshot, writing only what
/// changed, crash-safe, with the chosen strategy (Specs/save.md).
public enum PackageSaver {
    /// Makes the package at `packagePath` hold exactly the tree at `source` (created when
    /// absent), like `rsync -a --delete SOURCE/ PACKAGE/` but crash-safe and atomic as the
    /// strategy promises, then records the new state in the package's manifest.
    ///
    /// Unchanged means equal content hash and size at the same path. Source files whose
    /// stat data match what the manifest recorded at the last save from them are not
    /// reread. The package's state comes from its manifest (kept exact by every save); with
    /// `options.trustManifest` false, the package's own stat data are checked against it
    /// first, so that edits made behind pkgtool's back are seen too.
    ///
    /// - Complexity: a stat of every source entry (and package entry, unless trusted), a
    ///   read of every source file whose stat changed, and writes in proportion to the
    ///   change (`journaled`), to the change plus one link per unchanged file (`atomic`),
    ///   or to the whole package (`full`).
    public static func save(directory source: String, to packagePath: String, options: SaveOptions = SaveOptions())
        throws -> SaveStatistics
    {
        let clock = Stopwatch()
        var statistics = SaveStatistics(strategy: options.strategy)
        let packagePath = PackageLock.trimmingTrailingSlashes(packagePath)
        let sourceStatus = try FileSystem.status(source, followSymlinks: true)
        guard sourceStatus.kind == .directory else {
            throw SaveRefusal("cannot save from '\(source)': it is a \(sourceStatus.kind), not a directory")
        }
        try refuseNonDirectory(packagePath)
        try refuseOverlap(source: source, package: packagePath)
        return try withExclusiveAccess(to: packagePath, durability: options.durability) { recovered in
            statistics.recovered = recovered
            return try saveLocked(
                directory: source, sourcePermissions: sourceStatus.permissions, to: packagePath, options: options,
                statistics: statistics, clock: clock)
        }
    }

    /// `save(directory:to:options:)` once the lock is held and recovery done.
    private static func saveLocked(
        directory source: String, sourcePermissions: UInt32, to packagePath: String, options: SaveOptions,
        statistics: SaveStatistics, clock: Stopwatch
    ) throws -> SaveStatistics {
        var statistics = statistics
        // The package's current state.
        let current = try currentState(of: packagePath, options: options, statistics: &statistics)
        let packageExists = current.exists
        let manifest = current.manifest
        let old = current.snapshot
        let recorded = current.recorded

        // The new state: the source, with the manifest as its stat cache.
        var sourceLookup: TreeScanner.HashLookup?
        if let cache = manifest {
            sourceLookup = cache.sourceHashLookup
        }
        let scanner = TreeScanner(
            workers: options.workers, knownHash: sourceLookup,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        let sourceScan = try scanner.scan(source)
        statistics.filesHashed += sourceScan.filesHashed
        statistics.bytesHashed += sourceScan.bytesHashed
        for skipped in sourceScan.skipped {
            statistics.notes.append("skipped '\(PackageLayout.joined(source, skipped.path))': a \(skipped.kind) is not package content")
        }
        var newEntries = sourceScan.snapshot.entries
        var origins: [ContentOrigin?] = Array(repeating: nil, count: newEntries.count)
        for index in newEntries.indices where newEntries[index].kind == .regular {
            let entry = newEntries[index]
            newEntries[index].source = SourceStamp(
                device: entry.device, inode: entry.inode, modificationTime: entry.modificationTime,
                changeTime: entry.changeTime)
            origins[index] = .file(
                path: PackageLayout.joined(source, entry.path),
                seen: FileStatus(
                    kind: .regular, permissions: entry.permissions, size: entry.size,
                    modificationTime: entry.modificationTime, changeTime: entry.changeTime, inode: entry.inode,
                    device: entry.device))
        }
        let new = TreeSnapshot(entries: newEntries, rootHash: sourceScan.snapshot.rootHash)
        let plan = SavePlan(
            old: old, new: new, origins: origins, recorded: recorded,
            reread: Set(sourceScan.hashedPaths.map(FileName.init)))

        let context = SaveContext(
            packagePath: packagePath, plan: plan, manifest: manifest, options: options,
            rootPermissions: sourcePermissions)
        try context.execute(packageExists: packageExists, statistics: &statistics)
        statistics.rootHash = new.rootHash
        statistics.entryCount = new.entries.count
        statistics.seconds = clock.seconds
        return statistics
    }

    /// Runs `body` holding the package's exclusive lock — unless this task holds it already
    /// (`PackageLockScope`, a coordinated save) — after recovering an interrupted save.
    /// `body` learns whether recovery had anything to do.
    static func withExclusiveAccess<R>(
        to packagePath: String, durability: Durability, _ body: (_ recovered: Bool) throws -> R
    ) throws -> R {
        if PackageLockScope.holdsSharedOnly(packagePath) {
            throw SaveRefusal("cannot save '\(packagePath)' while this task holds its lock for reading")
        }
        func recoverAndRun() throws -> R {
            let exists = try FileSystem.statusIfExists(packagePath) != nil
            var recovered = false
            if exists { recovered = try PackageRecovery.recover(packagePath: packagePath, durability: durability).didAnything }
            return try body(recovered)
        }
        if PackageLockScope.covers(packagePath, exclusive: true) { return try recoverAndRun() }
        let lock = try PackageLock.acquire(for: packagePath, exclusive: true)
        defer { lock.release() }
        return try PackageLockScope.withLock(lock) { try recoverAndRun() }
    }

    /// Refuses a package path that holds something other than a directory.
    static func refuseNonDirectory(_ packagePath: String) throws {
        if let existing = try FileSystem.statusIfExists(packagePath), existing.kind != .directory {
            throw SaveRefusal("cannot save to '\(packagePath)': it is a \(existing.kind), not a package directory")
        }
    }

    /// Refuses a source inside the package or a package inside the source: saving would
    /// copy a tree into itself.
    static func refuseOverlap(source: String, package: String) throws {
        let sourceReal = realPath(source)
        guard let sourceReal else { return }
        var packageReal = realPath(package)
        if packageReal == nil {
            let (parent, name) = AtomicFile.split(package)
            packageReal = realPath(parent).map { PackageLayout.joined($0, name) }
        }
        guard let packageReal else { return }
        if sourceReal == packageReal || sourceReal.hasPrefix(packageReal + "/") || packageReal.hasPrefix(sourceReal + "/") {
            throw SaveRefusal("cannot save '\(source)' to '\(package)': one lies inside the other")
        }
    }

    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension TreeSnapshot {
    /// Copies the source stamps `recorded` holds for the same paths (a merge join: O(n)).
    mutating func adoptSourceStamps(from recorded: TreeSnapshot) {
        var other = 0
        for index in entries.indices {
            while other < recorded.entries.count
                && PathOrder.pathLess(recorded.entries[other].path, entries[index].path)
            {
                other += 1
            }
            guard other < recorded.entries.count else { return }
            if PathOrder.sameBytes(recorded.entries[other].path, entries[index].path) {
                entries[index].source = recorded.entries[other].source
            }
        }
    }
}

/// Wall-clock time of one operation.
struct Stopwatch {
    private let start: timespec
    init() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        start = now
    }
    var seconds: Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec - start.tv_sec) + Double(now.tv_nsec - start.tv_nsec) / 1e9
    }
}

/// Wall-clock readings in the kernel's file-timestamp clock, for relink windows.
enum FileClock {
    /// A time no later than any timestamp the kernel sets from now on (the coarse clock).
    static func lowerBound() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// A time no earlier than any timestamp the kernel has set so far.
    static func upperBound() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
