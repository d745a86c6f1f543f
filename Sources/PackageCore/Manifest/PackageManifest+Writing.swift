extension PackageManifest {
    /// The manifest of a freshly recorded tree (no deltas yet), as a save or `pkgtool
    /// manifest` would leave it, with `recordedAt` set to `time` (its chain fields match
    /// `encodedIndex(snapshot, packageIdentity:)`).
    package init(recording snapshot: TreeSnapshot, at time: Int64 = .max, packageIdentity: UInt64 = 0) {
        self.snapshot = snapshot
        self.baseRecordedAt = time
        self.deltaRecordedAt = [:]
        self.relinkWindows = []
        // What loading the written file would find: the checksum that ends it.
        self.baseChecksum = ManifestFormat.writeIndex(snapshot, packageIdentity: packageIdentity) { _ in }.checksum
        self.lastDeltaChecksum = ContentHash(high: 0, low: 0)
        self.lastSequence = 0
        self.deltaRecordCount = 0
        self.staleDeltaFiles = []
        self.entryCount = snapshot.entries.count
        self.basePackageIdentity = packageIdentity
    }

    /// The base file's bytes for `snapshot`. `relinkWindow`: when the save writing it
    /// hard-linked unchanged files, the interval their status-change times moved into.
    /// `packageIdentity`: the inode of the package root it is written for (0: unknown).
    package static func encodedIndex(
        _ snapshot: TreeSnapshot, relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64 = 0
    ) -> [UInt8] {
        ManifestFormat.encodeIndex(snapshot, relinkWindow: relinkWindow, packageIdentity: packageIdentity)
    }

    /// The same bytes, handed to `sink` in pieces of about 1 MiB; returns their count and
    /// the checksum that ends them.
    @discardableResult
    package static func writeIndex(
        _ snapshot: TreeSnapshot, relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64 = 0,
        to sink: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> (byteCount: Int, checksum: ContentHash) {
        try ManifestFormat.writeIndex(snapshot, relinkWindow: relinkWindow, packageIdentity: packageIdentity, to: sink)
    }

    /// The same for a tree of `entryCount` entries that `entry` hands one at a time, in
    /// depth-first order: a save records its new tree without a second copy of it.
    @discardableResult
    package static func writeIndex(
        entryCount: Int, rootHash: ContentHash, relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64 = 0,
        entry: (Int) -> SnapshotEntry, to sink: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> (byteCount: Int, checksum: ContentHash) {
        try ManifestFormat.writeIndex(
            entryCount: entryCount, rootHash: rootHash, relinkWindow: relinkWindow, packageIdentity: packageIdentity,
            entry: entry, to: sink)
    }

    /// The name and bytes of the delta file that records, on top of this manifest, the
    /// entries a save wrote (`upserts`, ancestors included) and removed (`removals`, whole
    /// subtrees), and the tree's new root hash and entry count.
    ///
    /// - Complexity: O(k log k) in the number of records; independent of the package size.
    package func encodedDelta(
        upserts: [SnapshotEntry], removals: [String], newRootHash: ContentHash, newEntryCount: Int,
        relinkWindow: ClosedRange<Int64>?, packageIdentity: UInt64 = 0
    ) -> (name: String, bytes: [UInt8]) {
        let sequence = lastSequence + 1
        let header = ManifestFormat.DeltaHeader(
            sequence: sequence, baseChecksum: baseChecksum, previousChecksum: lastDeltaChecksum,
            rootHash: newRootHash, relinkWindow: relinkWindow ?? 0...0, entryCount: UInt64(newEntryCount),
            packageIdentity: packageIdentity)
        let bytes = ManifestFormat.encodeDelta(header: header, upserts: upserts, removals: removals)
        return (Self.deltaFileName(sequence), bytes)
    }

    /// `delta.000001` and so on: zero-padded so that names sort in sequence order.
    package static func deltaFileName(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return PackageLayout.deltaFilePrefix + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// The names of the delta files this manifest was built from, and stale ones.
    package var deltaFileNames: [String] {
        (0..<lastSequence).map { Self.deltaFileName($0 + 1) } + staleDeltaFiles
    }

    /// Whether the deltas have grown enough that the next save should rewrite the base:
    /// more than an eighth of the entries (at least 1,024 records), or 1,000 delta files
    /// (each is a file to open when loading), so that compaction's O(n) write is amortised
    /// over many O(change) saves.
    package var needsCompaction: Bool {
        deltaRecordCount > Self.deltaRecordBound(entryCount: entryCount) || lastSequence >= 1_000
    }

    /// The most delta records a manifest of `entryCount` entries carries before a new base
    /// is written instead: an eighth of its entries (at least 1,024).
    package static func deltaRecordBound(entryCount: Int) -> Int { max(1024, entryCount / 8) }

    /// Writes `snapshot` as the package's new base manifest and removes every delta file:
    /// what `pkgtool manifest` does. The base is replaced atomically; a crash before the
    /// deltas are removed leaves deltas of the old base, which loading ignores.
    ///
    /// - Complexity: one atomic file write of O(n) bytes, one unlink per delta file.
    package static func writeIndex(
        _ snapshot: TreeSnapshot, packagePath: String, durability: Durability, packageIdentity: UInt64 = 0
    ) throws {
        try replaceIndex(packagePath: packagePath, durability: durability) { sink in
            try writeIndex(snapshot, packageIdentity: packageIdentity, to: sink)
        }
    }

    /// Replaces the package's base with the bytes `produce` hands its sink a piece at a time
    /// (a new file renamed over the old: never a torn base, never the whole base in memory),
    /// then removes every delta file: each bears the delta prefix, stale ones too, so no
    /// manifest is read to know which. Returns what `produce` returns.
    @discardableResult
    package static func replaceIndex<Result>(
        packagePath: String, durability: Durability, _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Result
    ) throws -> Result {
        let metadataPath = PackageLayout.metadataDirectory(of: packagePath)
        if try FileSystem.statusIfExists(metadataPath) == nil {
            try FileSystem.makeDirectory(metadataPath, permissions: 0o755)
            if durability == .full { try FileSystem.syncDirectory(packagePath) }
        }
        var result: Result?
        try AtomicFile.write(to: PackageLayout.joined(metadataPath, PackageLayout.indexFileName), durability: durability) {
            file in
            result = try produce { try file.write($0) }
        }
        let metadata = try FileDescriptor.openDirectory(metadataPath)
        var removedAny = false
        for name in try DirectoryListing.names(in: metadata) where PackageLayout.hasDeltaPrefix(name) {
            try FileSystem.remove(name, relativeTo: metadata.rawValue)
            removedAny = true
        }
        if removedAny && durability == .full { try metadata.sync() }
        return result!
    }
}

/// A package scanned with its manifest's stat cache: files whose stat data match the
/// manifest are not read.
public struct PackageScan: Sendable {
    /// The scan: the snapshot, what was skipped, what had to be read.
    public var result: TreeScanner.Result
    /// The manifest that was used, when there was a trustworthy one.
    public var manifest: PackageManifest?
    /// Why an existing manifest was not used (damaged, future version…), when so.
    public var manifestProblem: ManifestError?
    /// Whether a manifest was used as the stat cache (also when it was let go, `keepingManifest`).
    package var usedManifest = false
    /// Where the chain of the manifest used stood (also when it was let go): what a caller
    /// that wants only the tree needs to tell whether the manifest describes the package
    /// as scanned (its root hash) and to find it still so later.
    package var recordedHead: PackageManifest.Head?

    /// The package's tree as scanned, `.pkgtool` left out.
    public var snapshot: TreeSnapshot { result.snapshot }

    /// Scans the package at `path`, leaving out its `.pkgtool` directory and taking hashes
    /// from its manifest where the stat data prove them current.
    ///
    /// - Parameters:
    ///   - path: the package's directory.
    ///   - useManifest: whether hashes may come from the package's manifest.
    ///   - workers: threads hashing files.
    ///   - exclusions: entries left out besides `.pkgtool` (what a push leaves out).
    /// - Complexity: one stat per entry; one streamed read per file not proven unchanged.
    public static func scan(
        _ path: String, useManifest: Bool = true, workers: Int = ProcessInfoCores.active,
        excluding exclusions: PathExclusions = .none
    ) throws -> PackageScan {
        try scan(path, useManifest: useManifest, workers: workers, excluding: exclusions, keepingManifest: true)
    }

    /// `scan(_:useManifest:workers:excluding:)`; without `keepingManifest`, the manifest is
    /// used as the stat cache and let go before the scan assembles its result (`manifest`
    /// is then nil), and what the package still holds as recorded is not built again
    /// (`TreeScanner.reusesRecordedEntries`: the tree of an unchanged package is the
    /// manifest's own): for callers that want only the tree, whose peak it would otherwise
    /// double at a million entries. Without `recordingHashedPaths`, `result.hashedPaths`
    /// stays empty (a package whose stat cache vouches for nothing, after a copy, would
    /// otherwise hold a path string per file). A manifest that names another folder (its
    /// package identity is not this root's inode: a copy) is read for `recordedHead` only.
    package static func scan(
        _ path: String, useManifest: Bool = true, workers: Int = ProcessInfoCores.active,
        excluding exclusions: PathExclusions = .none, keepingManifest: Bool, recordingHashedPaths: Bool = true
    ) throws -> PackageScan {
        var manifest: PackageManifest?
        var problem: ManifestError?
        if useManifest {
            do {
                manifest = try PackageManifest.load(packagePath: path)
            } catch let error as ManifestError {
                problem = error
            }
        }
        let usedManifest = manifest != nil
        let recordedHead = manifest?.head
        guard keepingManifest else {
            // A manifest written for another folder (a copy of the package: its files have
            // other inodes) vouches for no file and describes no folder as the scan finds
            // it: held through the scan, it would only double its peak.
            if let identity = manifest?.packageIdentity, identity != 0,
                let root = try? FileSystem.status(path, followSymlinks: true), root.inode != identity
            {
                manifest = nil
            }
            // The scanner is a temporary handed over whole: once it lets its lookups go,
            // nothing holds the manifest.
            var scanner = scanner(
                statCache: manifest.take(), workers: workers, excluding: exclusions, recordingHashedPaths: recordingHashedPaths)
            // The manifest goes with the scanner: an unchanged package's tree is its entries.
            scanner.reusesRecordedEntries = true
            let result = try (consume scanner).scanReleasingLookups(path)
            return PackageScan(
                result: result, manifest: nil, manifestProblem: problem, usedManifest: usedManifest, recordedHead: recordedHead)
        }
        let result = try scanner(
            statCache: manifest, workers: workers, excluding: exclusions, recordingHashedPaths: recordingHashedPaths
        ).scan(path)
        return PackageScan(
            result: result, manifest: manifest, manifestProblem: problem, usedManifest: usedManifest, recordedHead: recordedHead)
    }

    /// A scanner of a package leaving out its `.pkgtool`, taking hashes and chunk hints
    /// from `statCache` where the stat data prove them current.
    private static func scanner(
        statCache manifest: PackageManifest?, workers: Int, excluding exclusions: PathExclusions, recordingHashedPaths: Bool
    ) -> TreeScanner
    {
        var scanner = TreeScanner(
            workers: workers, knownHash: manifest?.hashLookup,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        scanner.previousChunks = manifest?.chunkHints
        scanner.recordedContent = manifest?.recordedContentLookup
        scanner.exclusions = exclusions
        scanner.recordsHashedPaths = recordingHashedPaths
        return scanner
    }
}
