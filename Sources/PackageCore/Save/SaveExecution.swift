import Glibc
import Synchronization

/// Carries out a `SavePlan` with one strategy, and records the result in the manifest.
///
/// One per save. Its fields gather what the strategy does (the status of each entry
/// written, where the manifest's chain stands) and `execute` hands them back as a `Result`.
final class SaveContext {
    let package: PackageLocation
    var packagePath: String { package.path }
    let plan: SavePlan
    let manifest: PackageManifest?
    let options: SaveOptions
    /// Permission bits for the package directory when it is created.
    let rootPermissions: UInt32
    /// The number of entries of the new tree (the plan may hold only part of it: a save of
    /// an edited tree visits only what changed).
    let newEntryCount: Int
    let progress: SaveProgressTracker
    private(set) var writer: EntryWriter!
    /// The package-side status of each new entry this save wrote (by index in `plan.new`).
    var writtenStatus: WrittenStatuses
    /// The chunk lists of the large files this save wrote (by index in `plan.new`).
    var writtenChunks: [Int: ChunkList] = [:]
    /// Where the manifest's delta chain stands after this save's own record, so that a
    /// follow-up delta can chain to it.
    var chain: (base: ContentHash, last: ContentHash, sequence: UInt64)?
    /// Unchanged files hard-linked into the new tree (atomic).
    var linkedFiles = 0
    /// Records written to manifest deltas by this save.
    var deltaRecordsWritten = 0
    /// False once cloning failed on this file system: later large files are written whole.
    var reflinksMayWork = true
    /// The old tree came from checking the package, not from the manifest (which did not
    /// vouch for it): a delta would be relative to the wrong tree, so a new base is written.
    var recordsNewBase = false
    /// Whether this save appends a delta to `manifest` (else it writes a new base).
    var appendsDelta: Bool {
        manifest.map { !$0.needsCompaction } ?? false && !recordsNewBase && !changesTooManyForDelta
    }
    /// Whether this save's own delta would hold more records than a chain may (the bound
    /// `needsCompaction` applies to the chain): a save that touches most entries (a package
    /// saved from a new source, whose stamps all change) writes a new base, not a delta
    /// larger than one that every later load would apply beside it.
    var changesTooManyForDelta: Bool {
        let records = plan.creations.count + plan.permissionChanges.count + plan.refreshes.count + plan.removals.count
        return records > PackageManifest.deltaRecordBound(entryCount: newEntryCount)
    }

    /// What a save did: the statistics, the manifest's head afterwards, and the stat data of
    /// every entry written.
    struct Result {
        var statistics: SaveStatistics
        var head: PackageManifest.Head?
        var written: WrittenFiles
    }

    init(
        package: PackageLocation, plan: SavePlan, manifest: PackageManifest?, options: SaveOptions,
        rootPermissions: UInt32, newEntryCount: Int
    ) {
        self.package = package
        self.plan = plan
        self.manifest = manifest
        self.options = options
        self.rootPermissions = rootPermissions
        self.newEntryCount = newEntryCount
        self.writtenStatus = WrittenStatuses(entries: plan.new.entries, expectedWrites: plan.creations.count)
        self.progress = SaveProgressTracker(report: options.progress)
        self.writer = nil
        self.writer = EntryWriter(durability: options.durability, progress: progress) { [unowned self] in
            try self.checkCancellation()
        }
    }

    var durable: Bool { options.durability == .full }

    /// Throws `CancellationError` when the save was cancelled (its task, or
    /// `SaveOptions.cancellation`): checked before each file and after each 1 MiB chunk,
    /// never after the commit.
    func checkCancellation() throws {
        if Task.isCancelled || options.cancellation?.isCancelled == true { throw CancellationError() }
    }

    func execute(packageExists: Bool, statistics: SaveStatistics) throws -> Result {
        var statistics = statistics
        let manifestIsCurrent = manifest != nil && plan.refreshes.isEmpty && manifest?.snapshot.rootHash == plan.new.rootHash
        if packageExists && plan.isEmpty && manifestIsCurrent && options.strategy != .full {
            try commitSyncRecordAlone(statistics: &statistics)
            statistics.unchanged = true
            progress.plan(files: 0, bytes: 0)
            progress.finish()
            return result(statistics)
        }
        try checkCancellation()
        if packageExists && plan.isEmpty, options.strategy != .full, let manifest {
            // Only stat data to record afresh: a new delta file, no new tree.
            try recordMetadataOnly(manifest, statistics: &statistics)
            try commitSyncRecordAlone(statistics: &statistics)
            progress.finish()
            statistics.unchanged = true
            return result(statistics)
        }
        switch options.strategy {
        case .journaled where packageExists:
            try saveJournaled(statistics: &statistics)
        case .journaled, .atomic:
            try saveStaged(copyEverything: false, packageExists: packageExists, statistics: &statistics)
        case .full:
            try saveStaged(copyEverything: true, packageExists: packageExists, statistics: &statistics)
        }
        progress.finish()
        statistics.unchanged = plan.isEmpty
        return result(statistics)
    }

    /// The result of this save, with the statistics given.
    private func result(_ statistics: SaveStatistics) -> Result {
        var statistics = statistics
        statistics.rootHash = plan.new.rootHash
        statistics.entryCount = newEntryCount
        var head = manifest?.head
        if let chain {
            head = PackageManifest.Head(
                baseChecksum: chain.base, lastDeltaChecksum: chain.last, lastSequence: chain.sequence,
                deltaRecordCount: chain.sequence == 0 ? 0 : (manifest?.deltaRecordCount ?? 0) + deltaRecordsWritten,
                entryCount: newEntryCount, rootHash: plan.new.rootHash)
        }
        return Result(
            statistics: statistics, head: head,
            written: WrittenFiles(entries: plan.new.entries, statuses: writtenStatus))
    }

    // MARK: Metadata only

    /// Writes `options.syncRecord`, when there is one, for a save that writes no new tree:
    /// atomically on its own, since the content it describes does not change.
    /// The conflicts record goes first: a crash between the two leaves the conflicts
    /// listed with the old base, and the next merge lists them once again, never loses one.
    private func commitSyncRecordAlone(statistics: inout SaveStatistics) throws {
        if let conflicts = options.conflictsRecord {
            try checkCancellation()
            try ConflictStore.writeRecord(conflicts, packagePath: packagePath, durability: options.durability)
            statistics.metadataBytesWritten += Int64(conflicts.count)
        }
        guard let record = options.syncRecord else { return }
        try checkCancellation()
        let root = try FileDescriptor.openDirectory(packagePath)
        try SyncRecordFile.write(record, in: root, package: package, durability: options.durability)
        statistics.metadataBytesWritten += Int64(record.count)
    }

    /// The package root's inode, which the manifest records (Specs/manifest.md, "Package
    /// identity"); 0 when it cannot be read.
    var rootIdentity: UInt64 { (try? FileSystem.status(packagePath).inode) ?? 0 }

    /// Adds one delta file to the package's manifest. Safe under every strategy: the file is
    /// new (no linked inode is touched) and both the old and the new manifest describe the
    /// same content.
    private func recordMetadataOnly(_ manifest: PackageManifest, statistics: inout SaveStatistics) throws {
        let metadataPath = package.metadataPath
        let identity = rootIdentity
        if !appendsDelta {
            // Streamed into the new base: at a million entries it is 100 MB.
            let written = try PackageManifest.replaceIndex(packagePath: packagePath, durability: options.durability) {
                try writeBaseRecord(packageIdentity: identity, to: $0)
            }
            statistics.metadataBytesWritten += Int64(written.byteCount)
            statistics.manifestCompacted = true
            chain = (written.checksum, ContentHash(high: 0, low: 0), 0)
            return
        }
        let record = deltaRecord()
        let delta = manifest.encodedDelta(
            upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
            newEntryCount: newEntryCount, relinkWindow: nil, packageIdentity: identity)
        // Atomically: a crash must not leave a torn delta, which would discredit the manifest.
        try AtomicFile.write(delta.bytes, to: RelativePath.join(metadataPath, delta.name), durability: options.durability)
        statistics.metadataBytesWritten += Int64(delta.bytes.count)
        chain = (manifest.baseChecksum, Self.trailingChecksum(delta.bytes), manifest.lastSequence + 1)
        deltaRecordsWritten += record.upserts.count + record.removals.count
    }

    /// Appends an empty delta whose only content is a relink window.
    func recordRelinkWindow(_ window: ClosedRange<Int64>, statistics: inout SaveStatistics) throws {
        guard let chain else { return }
        let header = ManifestFormat.DeltaHeader(
            sequence: chain.sequence + 1, baseChecksum: chain.base, previousChecksum: chain.last,
            rootHash: plan.new.rootHash, relinkWindow: window, entryCount: UInt64(newEntryCount),
            packageIdentity: rootIdentity)
        let bytes = ManifestFormat.encodeDelta(header: header, upserts: [], removals: [])
        let path = PackageLayout.joined(
            PackageLayout.metadataDirectory(of: packagePath), PackageManifest.deltaFileName(chain.sequence + 1))
        try AtomicFile.write(bytes, to: path, durability: options.durability)
        statistics.metadataBytesWritten += Int64(bytes.count)
        self.chain = (chain.base, Self.trailingChecksum(bytes), chain.sequence + 1)
    }

    /// The checksum a manifest file ends with.
    static func trailingChecksum(_ bytes: [UInt8]) -> ContentHash {
        bytes.withUnsafeBytes { ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: $0[($0.count - 16)...])) }
    }

    // MARK: Shared pieces

    /// Sets the progress totals: one unit per file to write (and to link, when `linking`),
    /// one per MiB to write — of a patched file, only its changed chunks.
    func planProgress(linking: Bool, patches: [Int: ChunkPatch] = [:]) {
        var files = 0
        var bytes: Int64 = 0
        let unchangedCount = plan.unchangedOld.nonNilCount
        for index in plan.creations where plan.new.entries[index].kind != .directory {
            files += 1
            if plan.new.entries[index].kind == .regular {
                bytes += patches[index]?.comparison.changedBytes ?? plan.new.entries[index].size
            }
        }
        if linking { files += unchangedCount }
        progress.plan(files: files, bytes: bytes)
        writer.defersFileSync = durable && plan.creations.count >= options.bulkSyncThreshold
    }

    /// Before a commit: when the files were written without their own fsync, one syncfs on
    /// the file system of `directory` makes them, and every directory entry made for them,
    /// durable. Returns whether it did (the per-directory fsyncs are then redundant).
    func makeDurableInBulk(_ directory: borrowing FileDescriptor) throws -> Bool {
        guard durable, writer.defersFileSync else { return false }
        try directory.syncFileSystem()
        return true
    }

    /// Writes new entry `index`'s bytes as `name` in `directory`.
    func writeFile(_ index: Int, named name: String, in directory: Int32) throws -> EntryWriter.Written
    {
        let entry = plan.new.entries[index]
        guard let origin = plan.origin(at: index) ?? unchangedOrigin(at: index) else {
            throw SaveRefusal(path: package.inside(entry.path), reason: .missingContent)
        }
        try checkCancellation()
        return try writer.writeFile(
            origin, named: name, in: directory, displayPath: package.inside(entry.path),
            permissions: entry.permissions, modificationTime: entry.modificationTime,
            expected: (entry.hash, entry.size))
    }

    /// The package's own file, for new entry `index` when its content is unchanged at its
    /// path and the source gives it no origin: a source may name only what the package
    /// lacks (a pull's version), and a save that rewrites an unchanged file (`full`, new
    /// permission bits, a hard link the file system refuses) then copies it from the
    /// package as it is, hashing the copy like any file.
    private func unchangedOrigin(at index: Int) -> ContentOrigin? {
        guard let oldIndex = plan.unchangedOld[index], plan.old.entries[oldIndex].kind == .regular else { return nil }
        return .file(path: package.inside(plan.old.entries[oldIndex].path), seen: nil)
    }

    /// Writes a metadata file (manifest, delta) and fsyncs it when durability asks.
    func writeMetadata(_ bytes: [UInt8], named name: String, in directory: Int32, displayName: String) throws {
        try writeMetadata(named: name, in: directory, displayName: displayName) { sink in
            try bytes.withUnsafeBytes { try sink($0) }
        }
    }

    /// Writes a metadata file whose bytes `produce` hands, piece by piece, to the sink it
    /// is given, and fsyncs it when durability asks; returns what `produce` returns.
    func writeMetadata<Result>(
        named name: String, in directory: Int32, displayName: String,
        _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Result
    ) throws -> Result {
        let file = try FileDescriptor.open(
            name, relativeTo: directory, access: .writeOnly, options: [.create, .exclusive, .noFollow],
            displayPath: package.inside(displayName))
        let result = try produce { try file.write($0) }
        if durable { try file.sync() }
        try file.close()
        return result
    }

    /// Hands `sink` the new tree's base manifest file in pieces, each entry as the manifest
    /// records it (package-side stat data, source stamps) made as it is written: a large
    /// tree is never copied to be recorded. Returns the byte count and closing checksum.
    @discardableResult
    func writeBaseRecord(
        relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64,
        to sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> (byteCount: Int, checksum: ContentHash) {
        try PackageManifest.writeIndex(
            entryCount: plan.new.entries.count, rootHash: plan.new.rootHash, relinkWindow: relinkWindow,
            packageIdentity: packageIdentity, entry: recordedEntry(at:), to: sink)
    }

    /// The records a delta on top of the package's manifest needs: every created,
    /// re-permissioned or refreshed entry and every ancestor directory of a change, as the
    /// manifest records them; removals as subtree roots.
    func deltaRecord() -> (upserts: [SnapshotEntry], removals: [String]) {
        var changed = Set(plan.creations)
        changed.formUnion(plan.permissionChanges)
        changed.formUnion(plan.refreshes)
        var ancestors = Set<RelativePath>()  // by bytes: twin folders are two
        func addAncestors(of path: String) {
            var current = RelativePath.parent(of: path)
            while !current.isEmpty, ancestors.insert(RelativePath(trusted: current)).inserted {
                current = RelativePath.parent(of: current)
            }
        }
        for index in changed { addAncestors(of: plan.new.entries[index].path) }
        for index in plan.removals { addAncestors(of: plan.old.entries[index].path) }
        var upserts = changed.sorted().map(recordedEntry(at:))
        for path in ancestors {
            if let index = plan.new.index(of: path.string) { upserts.append(recordedEntry(at: index)) }
        }
        return (upserts, plan.removals.map { plan.old.entries[$0].path })
    }

    /// The new tree's entry at `index` as the manifest records it: the package-side stat
    /// data of what this save wrote, or of the old entry it kept, and the chunk list of its
    /// bytes.
    private func recordedEntry(at index: Int) -> SnapshotEntry {
        var entry = plan.new.entries[index]
        let kind = entry.kind
        if let status = writtenStatus[index] {
            entry.adoptPackageStatus(status)
            // The chunk list of the bytes written (computed while writing them).
            if kind == .regular { entry.chunks = writtenChunks[index] ?? entry.chunks }
        } else if let oldIndex = plan.unchangedOld[index] {
            let old = plan.old.entries[oldIndex]
            // Unchanged bytes: the list recorded for them, when the source had none.
            if entry.chunks == nil { entry.chunks = old.chunks }
            entry.adoptPackageStatus(
                FileStatus(
                    kind: kind, permissions: entry.permissions, size: old.size,
                    modificationTime: old.modificationTime, changeTime: old.changeTime, inode: old.inode,
                    device: old.device))
        } else if kind == .directory, let oldIndex = plan.old.index(of: entry.path),
            plan.old.entries[oldIndex].kind == .directory
        {
            let old = plan.old.entries[oldIndex]
            entry.modificationTime = old.modificationTime
            entry.changeTime = old.changeTime
            entry.inode = old.inode
            entry.device = old.device
        }
        if kind != .regular { entry.source = nil }
        return entry
    }
}

extension SnapshotEntry {
    /// Takes the package-side stat fields (the manifest's stat cache) from `status`.
    mutating func adoptPackageStatus(_ status: FileStatus) {
        modificationTime = status.modificationTime
        changeTime = status.changeTime
        inode = status.inode
        device = status.device
    }
}
