import PackageCore
import Synchronization

/// What a pull did.
public struct PullResult: Sendable {
    /// The version DEST now holds.
    public var version: VersionSummary
    /// True when DEST held that version's content already (nothing was written).
    public var unchanged = false
    /// Distinct file contents assembled in the staging area.
    public var contentsAssembled = 0
    /// Blobs fetched from the remote.
    public var blobsDownloaded = 0
    /// Bytes of the GETs that fetched them (the gaps between neighbouring blobs included).
    public var bytesDownloaded: Int64 = 0
    /// Blobs taken from DEST's own files instead (the unchanged pieces of a changed file).
    public var blobsFromDestination = 0
    /// Whole contents copied from another path of DEST (moved or duplicated files).
    public var contentsCopiedFromDestination = 0
    /// Blobs an interrupted pull had already written and checked.
    public var blobsResumed = 0
    /// HTTP requests sent, retries included.
    public var requests = 0
    /// Requests that were attempts after a failure.
    public var retries = 0
    /// What the save engine did.
    public var save: SaveStatistics?
    /// Things a person should know (DEST's recovery, the engine's notes).
    public var notes: [String] = []
    /// Wall-clock duration of the pull.
    public var seconds: Double = 0
}

/// What a pull would do (`PackageRemote.planPull`, `pkgtool pull --dry-run`), found by the
/// reads and refusals of a real pull, with nothing written.
public struct PullPlan: Sendable {
    /// The version DEST would hold.
    public var version: VersionSummary
    /// Whether DEST exists (else the pull would create it).
    public var destinationExists: Bool
    /// True when DEST holds that version's tree already.
    public var unchanged = false
    /// How DEST would change: what `diff DEST s3://…` lists (renames detected).
    public var changes: [TreeChange] = []
    /// Blobs the pull would fetch from the remote.
    public var blobsToDownload = 0
    /// Their bytes (less what an interrupted pull already fetched, which it takes up).
    public var bytesToDownload: Int64 = 0
    /// Things a person should know (DEST's recovery).
    public var notes: [String] = []
    /// HTTP requests the plan took (reads only).
    public var requests = 0

    init(version: VersionSummary, destinationExists: Bool, notes: [String]) {
        self.version = version
        self.destinationExists = destinationExists
        self.notes = notes
    }
}

/// `pull`: brings DEST to a version (Specs/remote.md, "Pull").
enum PullOperation {
    /// Blobs of one pack closer than this are fetched by one GET, gap included.
    static let mergeGap: Int64 = 256 << 10
    /// The largest single GET.
    static let maximumRange: Int64 = 32 << 20

    static func run(
        destination: String, store: RemoteStore, options: RemoteOptions, version reference: String?, force: Bool,
        durability: Durability, progress: ProgressManager?
    ) throws -> PullResult {
        let clock = Stopwatch()
        let destination = PushOperation.trimmed(destination)
        let connection = store.connection()
        let (head, target) = try version(reference, store: store, connection: connection)
        var result = PullResult(version: target)

        // DEST as it is: its tree, and whether it holds changes never pushed.
        var dest = try readDestination(destination, store: store, options: options)
        result.notes = dest.warnings
        let newState = SyncState(location: store.location, endpoint: store.explicitEndpoint, version: target)
        if let current = dest.current {
            try refuse(
                current, target: target, sync: dest.sync, latest: reference == nil ? head.record : nil, force: force,
                destination: destination, store: store, connection: connection)
            if current.rootHash == target.rootHash {
                try recordUnchanged(
                    newState, root: target.rootHash, sync: dest.sync, destination: destination, options: options,
                    durability: durability)
                result.unchanged = true
                return finished(result, store: store, clock: clock)
            }
        }
        // What the save replaces is DEST as read here: a save made since is not discarded.
        let currentRoot = dest.current?.rootHash ?? TreeSnapshot.empty.rootHash

        // The version's files DEST lacks and where DEST differs from it (all a save into
        // it must look at), in one decode; DEST's tree goes with the gathering.
        let (wanted, parts) = try decodeVersion(
            target, current: dest.current, manifest: dest.manifestState, store: store, connection: connection,
            options: options)
        dest.current = nil
        let staging = try PullStaging(destination: destination)
        defer { staging.unlock() }
        let contents = try gatherContents(
            consume wanted, destination: destination, staging: staging, store: store, options: options,
            progress: progress, result: &result)
        let source = try versionSource(
            target, parts: parts, contents: contents, rootPermissions: dest.rootPermissions, store: store,
            connection: connection)
        let statistics = try save(
            source, destination: destination, target: target, record: newState, currentRoot: currentRoot,
            manifestVouches: dest.manifestVouches, store: store, options: options, durability: durability)
        result.notes += statistics.notes
        staging.remove()
        progress?.complete(count: 2)
        result.save = statistics
        return finished(result, store: store, clock: clock)
    }

    /// `result` with the requests the pull took and its duration.
    private static func finished(_ result: PullResult, store: RemoteStore, clock: Stopwatch) -> PullResult {
        var result = result
        result.requests = store.counters.requests
        result.retries = store.counters.retries
        result.seconds = clock.seconds
        return result
    }

    /// Version `target` as the save engine's source: the parts where DEST differs from it,
    /// when they were compared (the whole tree then built only if DEST's manifest moved
    /// meanwhile), else its whole tree, decoded again from the cached manifest.
    static func versionSource(
        _ target: VersionSummary, parts: RemoteVersionSource.ChangedParts?, contents: PulledContents,
        rootPermissions: UInt32, store: RemoteStore, connection: S3Connection
    ) throws -> RemoteVersionSource {
        // The transfers' buffers and the gathering's tables were freed on other threads:
        // their pages go back before the version's tree is built.
        ProcessEnvironment.releaseFreeMemory()
        guard let parts else {
            let tree = try store.tree(target.id, connection)
            return RemoteVersionSource(tree: tree, contents: contents, rootPermissions: rootPermissions)
        }
        return RemoteVersionSource(
            parts: parts, loadTree: { try store.tree(target.id, connection) }, contents: contents,
            rootPermissions: rootPermissions)
    }

    /// A DEST that holds the version already: nothing to write but its sync record, when
    /// the record does not say so already; replaced only while DEST still holds that tree.
    static func recordUnchanged(
        _ newState: SyncState, root: ContentHash, sync: PackageSyncStatus, destination: String, options: RemoteOptions,
        durability: Durability
    ) throws {
        guard sync.own != newState else { return }
        guard
            try SyncRecordFile.replace(
                with: newState.encoded(), packagePath: destination, ifRootHash: root,
                workers: options.workers, durability: durability)
        else {
            throw RemoteError(.localChange, "'\(destination)' changed while it was being pulled; pull again")
        }
    }

    /// Saves the version into DEST with one commit of the engine, its sync record `record`
    /// in the same commit, and checks that DEST now hashes to the version's root.
    static func save(
        _ source: RemoteVersionSource, destination: String, target: VersionSummary, record: SyncState,
        currentRoot: ContentHash, manifestVouches: Bool, store: RemoteStore, options: RemoteOptions,
        durability: Durability
    ) throws -> SaveStatistics {
        // A manifest that does not describe DEST as scanned (a file edited behind pkgtool's
        // back) is not trusted: the engine then checks DEST itself. The version's sync record
        // is committed with its tree: a crash leaves DEST old with its old record, or new
        // with this one.
        var saveOptions = SaveOptions(
            durability: durability, workers: options.workers, trustManifest: manifestVouches,
            cancellation: store.cancellation.saveCancellation)
        saveOptions.syncRecord = record.encoded()
        // What was checked above is what the save replaces: a save made since (under the
        // lock the pull's own save then takes) is not discarded.
        saveOptions.requiredCurrentRoot = currentRoot
        let outcome: SaveOutcome
        do {
            // The save's own byte counts stay out of the pull's figures (they would add its
            // bytes to the download's total): its share is one unit, done when it is.
            outcome = try PackageSaver.save(source, to: destination, options: saveOptions)
        } catch is CancellationError {
            throw RemoteError(.cancelled, "cancelled: '\(destination)' was not changed")
        } catch let refusal as SaveRefusal where refusal.isTransient {
            throw RemoteError(.localChange, "'\(destination)' changed while it was being pulled; it was left as it is: pull again")
        }
        let statistics = outcome.statistics
        guard statistics.rootHash == target.rootHash else {
            throw RemoteError(
                .verificationFailed,
                "'\(destination)' was saved but hashes to \(statistics.rootHash), not to version \(target.shortID)'s root \(target.rootHash)")
        }
        return statistics
    }

    /// DEST as a pull finds it: its tree (nil when absent), its root's permissions, whether
    /// its manifest describes it as scanned, its sync state, and the notes of reading it.
    struct Destination {
        var current: TreeSnapshot?
        var rootPermissions: UInt32 = 0o755
        var manifestVouches = false
        var sync = PackageSyncStatus(own: nil, contents: .absent, base: nil)
        var warnings: [String] = []
        /// DEST's manifest as read with the tree, when it describes DEST as scanned: a pull
        /// then saves only where DEST and the version differ, while it is still the same.
        var manifestState: TreePackageState?
    }

    /// Scans DEST (when it exists) and reads its sync state under its lock; refuses a DEST
    /// that is not a directory. Writes nothing (but the recovery of a save a crash left).
    static func readDestination(_ destination: String, store: RemoteStore, options: RemoteOptions) throws -> Destination {
        var found = Destination()
        guard let status = try FileSystem.statusIfExists(destination) else { return found }
        let followed = status.kind == .symbolicLink ? try FileSystem.status(destination, followSymlinks: true) : status
        guard followed.kind == .directory else {
            throw RemoteError(.localFailure, "cannot pull into '\(destination)': it is a \(followed.kind), not a package directory")
        }
        var sync = found.sync
        var warnings: [String] = []
        var manifestState: TreePackageState?
        let scan = try PackageScope.withPackage(at: destination, access: .shared, warn: { warnings.append($0) }) { _ in
            // The record and the tree under the same lock: one save's commit wrote both.
            sync = PackageSyncStatus.read(packagePath: destination, store: store) { warnings.append($0) }
            // The tree alone: DEST's manifest is let go as the scan ends, and a DEST as
            // recorded is its manifest's own tree, not a second built beside it.
            let scan = try PackageScan.scan(
                destination, workers: options.workers, keepingManifest: false, recordingHashedPaths: false)
            if let head = scan.recordedHead, head.rootHash == scan.snapshot.rootHash {
                manifestState = TreePackageState.taken(packagePath: destination, head: head)
            }
            return scan
        }
        found.current = scan.snapshot
        found.rootPermissions = followed.permissions
        // The engine may trust DEST's manifest only when the scan just found DEST as it says.
        found.manifestVouches = scan.recordedHead?.rootHash == scan.snapshot.rootHash
        found.manifestState = found.manifestVouches ? manifestState : nil
        found.sync = sync
        found.warnings = warnings
        return found
    }

    /// The refusals of a pull into an existing DEST: a latest version (`latest`, nil when a
    /// version was named) that would take DEST back in time, and unless `force`, changes
    /// DEST holds that the pull would discard.
    static func refuse(
        _ current: TreeSnapshot, target: VersionSummary, sync: PackageSyncStatus, latest: HeadRecord?, force: Bool,
        destination: String, store: RemoteStore, connection: S3Connection
    ) throws(RemoteError) {
        // The latest version must not take DEST back in time (`--version` may, on purpose).
        if let latest, let base = sync.base {
            try refuseRollback(base, head: latest, destination: destination, store: store, connection: connection)
        }
        if !force, current.rootHash != target.rootHash {
            try refuseDiscarding(current, sync: sync, destination: destination, store: store)
        }
    }

    /// The version a pull (or its plan) brings DEST to — `reference`'s, else the head's —
    /// with the head record.
    static func version(_ reference: String?, store: RemoteStore, connection: S3Connection) throws -> (
        head: (record: HeadRecord, etag: String), target: VersionSummary
    ) {
        let head = try store.requireHead(connection)
        let target =
            try reference.map { try LogOperation.resolve($0, store: store, connection: connection, head: head.record) }
            ?? head.record.head
        return (head, target)
    }

    /// The manifest of `target`, checked against the summary the head record gives it.
    static func manifest(of target: VersionSummary, store: RemoteStore, connection: S3Connection) throws -> VersionManifest {
        let manifest = try store.manifest(target.id, connection)
        try requireSummary(manifest.summary(id: target.id), of: target, store: store)
        return manifest
    }

    /// Version `target` decoded once for a pull, from its manifest (fetched into the cache,
    /// checked as `manifest(of:)` checks it): the files DEST (scanned as `current`) lacks at
    /// their paths, handed over one at a time (never an array of the version's entries);
    /// and, for a DEST its manifest describes (`manifest`), DEST's tree and the version's
    /// pruned to where they differ, permission bits included, the version streamed against
    /// DEST's tree, never held whole beside it.
    static func decodeVersion(
        _ target: VersionSummary, current: TreeSnapshot?, manifest: TreePackageState?, store: RemoteStore,
        connection: S3Connection, options: RemoteOptions
    ) throws -> (wanted: WantedFiles, parts: RemoteVersionSource.ChangedParts?) {
        let index = store.blobIndex
        var (summary, decoded) = try store.streamTree(
            target.id, connection,
            into: {
                VersionDecoding(
                    wanted: WantedFiles(
                        current: current, wholeFileLimit: options.chunking.wholeFileLimit, place: { index.place($0) }),
                    comparison: manifest == nil
                        ? nil : current.map { StreamedComparison(held: $0.entries, comparingPermissions: true) })
            },
            files: { decoded, entry, blobs in decoded.wanted.add(entry, blobs: blobs) })
        try requireSummary(summary, of: target, store: store)
        decoded.wanted.finish()
        var parts: RemoteVersionSource.ChangedParts?
        if let comparison = decoded.comparison.take(), let current, let manifest {
            let (held, streamed) = comparison.pruned(heldRoot: current.rootHash, streamedRoot: summary.rootHash)
            parts = RemoteVersionSource.ChangedParts(
                manifest: manifest, current: held.entries, new: streamed.entries, newRootHash: summary.rootHash,
                newEntryCount: summary.entryCount)
        }
        return (decoded.wanted, parts)
    }

    /// What one decode of a version gathers for a pull (`decodeVersion`).
    struct VersionDecoding: TreeEntrySink {
        var wanted: WantedFiles
        var comparison: StreamedComparison?

        mutating func enter(_ entry: SnapshotEntry) { comparison?.enter(entry) }
        mutating func finishDirectory(hash: ContentHash) { comparison?.finishDirectory(hash: hash) }
        mutating func reserve(_ likelyCount: Int) { wanted.reserve(likelyCount) }
    }

    /// Refuses a version whose manifest states another summary than the head record's.
    private static func requireSummary(_ stated: VersionSummary, of target: VersionSummary, store: RemoteStore)
        throws(RemoteError)
    {
        guard stated == target else {
            throw RemoteError(
                .verificationFailed,
                "the HEAD of \(store.location) disagrees with version \(target.shortID)'s manifest: the store holds damaged data")
        }
    }

    /// What a pull would do, with every read and refusal of a real one and nothing written:
    /// no staging area, no save, no sync record.
    static func plan(
        destination: String, store: RemoteStore, options: RemoteOptions, version reference: String?, force: Bool
    ) throws -> PullPlan {
        let destination = PushOperation.trimmed(destination)
        let connection = store.connection()
        let (head, target) = try version(reference, store: store, connection: connection)
        let manifest = try manifest(of: target, store: store, connection: connection)
        let dest = try readDestination(destination, store: store, options: options)
        if let current = dest.current {
            try refuse(
                current, target: target, sync: dest.sync, latest: reference == nil ? head.record : nil, force: force,
                destination: destination, store: store, connection: connection)
        }
        var plan = PullPlan(version: target, destinationExists: dest.current != nil, notes: dest.warnings)
        let current = dest.current ?? TreeSnapshot.empty
        plan.unchanged = dest.current != nil && current.rootHash == target.rootHash
        if !plan.unchanged {
            plan.changes = TreeDiff.changes(from: current, to: manifest.snapshot(), detectRenames: true)
            (plan.blobsToDownload, plan.bytesToDownload) = try download(
                manifest.entries, destination: destination, current: dest.current, options: options)
        }
        plan.requests = store.counters.requests
        return plan
    }

    /// The blobs of `wanted` a pull would fetch, and their bytes: those of contents DEST
    /// lacks (at any path), less the pieces a changed large file keeps from DEST's copy.
    /// - Complexity: one read of each large DEST file a wanted file of its path replaces.
    static func download(
        _ wanted: [RemoteEntry], destination: String, current: TreeSnapshot?, options: RemoteOptions
    ) throws -> (blobs: Int, bytes: Int64) {
        var localContents = Set<FileKey>()
        var currentByPath: [RelativePath: SnapshotEntry] = [:]  // names are bytes
        for entry in current?.entries ?? [] where entry.kind == .regular {
            localContents.insert(FileKey(entry.hash, entry.size))
            currentByPath[RelativePath(trusted: entry.path)] = entry
        }
        var missing: [RemoteEntry] = []
        var pieceSources: [SnapshotEntry] = []
        for entry in wanted where entry.kind == .regular && entry.size > 0 {
            guard !localContents.contains(FileKey(entry.contentHash, entry.size)) else { continue }
            missing.append(entry)
            if let old = currentByPath[RelativePath(trusted: entry.path)],
                old.size > options.chunking.wholeFileLimit, entry.size > options.chunking.wholeFileLimit
            {
                pieceSources.append(old)
            }
        }
        let buffer = ChunkBuffer(size: max(ChunkBuffer.defaultSize, Int(options.chunking.maximumPiece)))
        let localPieces = try indexLocalPieces(pieceSources, destination: destination, options: options, buffer: buffer)
        var blobs: [SHA256Digest: Int64] = [:]
        for entry in missing {
            for blob in entry.blobs where localPieces[blob.digest]?.length != Int(blob.length) {
                blobs[blob.digest] = Int64(blob.length)
            }
        }
        return (blobs.count, blobs.values.reduce(0, +))
    }

    /// Gathers the contents of `wanted` that DEST (scanned as `current`) lacks at their
    /// paths, each once (steps 4 and 5 of *Pull*): copied from another path of DEST,
    /// streamed from DEST's unchanged pieces and fetched blobs, or fetched into `staging`
    /// and assembled there, every blob checked against its SHA-256 and every content
    /// against its XXH3. Contents in `wholeOnly` are always whole files (an origin that is
    /// a path, never a stream): a sync keeps them as conflict versions.
    /// - Returns: where each content is now, and the chunk lists of large ones.
    /// - Complexity: the missing bytes in ranged GETs, `--transfers` at a time.
    static func gatherContents(
        _ wanted: [RemoteEntry], wholeOnly: Set<FileKey> = [], destination: String, current: TreeSnapshot?,
        staging: PullStaging, store: RemoteStore, options: RemoteOptions, progress: ProgressManager?,
        result: inout PullResult
    ) throws -> PulledContents {
        try gatherContents(
            WantedFiles(wanted, current: current, wholeOnly: wholeOnly, wholeFileLimit: options.chunking.wholeFileLimit),
            destination: destination,
            staging: staging, store: store, options: options, progress: progress, result: &result)
    }

    /// `gatherContents` of the files a pull wants (DEST's tree and the whole-only contents
    /// are `wanted`'s). Memory: the wanted files' records and blobs, and a few dozen bytes
    /// a blob to fetch.
    static func gatherContents(
        _ wanted: consuming WantedFiles, destination: String, staging: PullStaging, store: RemoteStore,
        options: RemoteOptions, progress: ProgressManager?, result: inout PullResult
    ) throws -> PulledContents {
        var gathering = try ContentGathering(
            wanted, destination: destination, staging: staging, options: options, progress: progress)
        try gathering.chooseOrigins(result: &result)
        let ranges = try gathering.planFetches(result: &result)
        // The rest from the store, in ranges of packs, in parallel.
        var readied = 0
        if !ranges.isEmpty {
            readied = try download(
                ranges, of: gathering.wanted, staging: staging, store: store, progress: progress, result: &result)
        }
        return try gathering.finish(readied: readied, result: &result)
    }

    /// Fetches `ranges` of packs (their needs point into `wanted`) into the staging area,
    /// `--transfers` at a time. Returns how many ready files (contents of one blob) the
    /// transfers wrote and checked.
    static func download(
        _ ranges: [PackRange], of wanted: WantedFiles, staging: PullStaging, store: RemoteStore,
        progress: ProgressManager?, result: inout PullResult
    ) throws -> Int {
        let workers = store.workers(store.configuration.transport.concurrency)
        let downloaded = Mutex((blobs: 0, bytes: Int64(0), readied: 0))
        for range in ranges {
            let location = store.location
            workers.submit { connection in
                let sink = PackRangeSink(range: range, wanted: wanted, staging: staging, location: location) { length in
                    downloaded.withLock { $0.blobs += 1 }
                    progress?.withProperties {
                        $0.completedByteCount += UInt64(length)
                        $0.completedCount += BlobUploader.units(length) - 1
                    }
                }
                let response = try connection.get(
                    bucket: location.bucket, key: RemoteLayout.pack(range.pack, location), range: range.start..<range.end,
                    into: sink)
                guard response != nil else {
                    throw RemoteError(
                        .verificationFailed,
                        "object \(RemoteLayout.pack(range.pack, location)) is missing from the store; DEST was not changed")
                }
                downloaded.withLock {
                    $0.bytes += range.end - range.start
                    $0.readied += sink.readied
                }
            }
        }
        try workers.finish()
        let totals = downloaded.withLock { $0 }
        (result.blobsDownloaded, result.bytesDownloaded) = (totals.blobs, totals.bytes)
        return totals.readied
    }

    /// Refuses a pull that would discard what DEST holds and no remote does: changes made
    /// since it was last pushed or pulled (its root is not its record's), or — never synced
    /// — a package or a folder holding files. `--force` skips this.
    static func refuseDiscarding(
        _ current: TreeSnapshot, sync: PackageSyncStatus, destination: String, store: RemoteStore
    ) throws(RemoteError) {
        if let synced = sync.syncedRoot {
            guard synced != current.rootHash else { return }
            let since =
                if let own = sync.own {
                    "version \(own.sequence) (\(own.version.description.prefix(12))) of \(own.location)"
                } else {
                    "version \(sync.base?.version.description.prefix(12) ?? "?") of \(store.location)"
                }
            throw RemoteError(
                .unpushedChanges,
                "'\(destination)' has changes not pushed since it was synced with \(since); 'pkgtool sync \(destination)' merges them with the remote's, or pull --force discards them")
        }
        // A folder that holds files, is no package and was never synced (a working folder,
        // a wrong path): the pull would delete whatever the version lacks, so it asks for
        // --force, as git clone refuses a non-empty destination.
        if PackageLayout.isForeignFolder(destination) {
            throw RemoteError(
                .unpushedChanges,
                "'\(destination)' holds files but is neither a package nor synced with \(store.location); pull into a new or empty folder, or pull --force to replace its contents")
        }
        // A package never pushed or pulled: all it holds is unpushed.
        if current.rootHash != TreeSnapshot.empty.rootHash {
            throw RemoteError(
                .unpushedChanges,
                "'\(destination)' is a package never pushed or pulled, and pulling would replace what it holds; push it, pull into a new or empty folder, or pull --force to replace it")
        }
    }

    /// Versions walked back from the head, past the head record's history, to check that it
    /// descends from DEST's version: one ranged GET each.
    static let ancestryLimit = 1000

    /// Refuses to take DEST back in time: the remote's latest version must descend from the
    /// version DEST was last synced with (`base`). Refused when it is older, or when the
    /// version of the same number in its ancestry (its parents walked back, through the head
    /// record's history then the manifests' headers) is another.
    static func refuseRollback(
        _ base: SyncBase, head: HeadRecord, destination: String, store: RemoteStore, connection: S3Connection
    ) throws(RemoteError) {
        let latest = head.head
        guard latest.id != base.version else { return }
        let recent = [latest] + head.history
        if recent.contains(where: { $0.id == base.version }) { return }
        let known = base.sequence ?? (try? store.summary(base.version, connection))?.sequence
        let held = "version \(known.map(String.init) ?? "?") (\(base.version.description.prefix(12))) that '\(destination)' holds"
        let onPurpose = "pull --version \(latest.sequence) to take it on purpose"
        let rewritten = RemoteError(
            .rollback,
            "\(store.location) was rewritten: its latest version \(latest.sequence) (\(latest.shortID)) does not descend from \(held); \(onPurpose)")
        guard let sequence = known else { throw rewritten }
        guard latest.sequence > sequence else {
            guard latest.sequence < sequence else { throw rewritten }
            throw RemoteError(
                .rollback,
                "\(store.location) went back: its latest version \(latest.sequence) (\(latest.shortID)) is older than \(held); \(onPurpose)")
        }
        var current = latest
        var history = head.history[...]
        var fetched = 0
        while current.sequence > sequence {
            guard let parent = current.parent else { break }
            if let next = history.first, next.id == parent {
                current = next
                history = history.dropFirst()
                continue
            }
            guard fetched < ancestryLimit else { return }
            // Past a pruned version the chain is gone: checked as far as it is kept.
            if head.isPruned(current.sequence - 1) { return }
            fetched += 1
            guard let next = try store.parentSummary(of: current, connection) else { break }
            current = next
        }
        guard current.id == base.version else { throw rewritten }
    }

    /// Refuses, before anything is written, a pull whose new contents cannot fit on DEST's
    /// file system: a few KiB of store objects can describe a huge file (one blob repeated).
    /// `needed`: the bytes the new contents add (`ContentsNeeded.bytesAdded`). A preflight,
    /// not a promise: the save itself fails cleanly on a full disk (Specs/save.md).
    static func requireRoom(_ needed: Int64, destination: String) throws {
        guard needed > 0 else { return }
        let folder = (try? FileSystem.statusIfExists(destination)) ?? nil != nil
            ? destination : RelativePath.splitLast(RelativePath.trimmingTrailingSlashes(destination)).directory
        guard let free = FileSystem.availableBytes(onFileSystemOf: folder.isEmpty ? "." : folder) else { return }
        // Room for the metadata and the file system's own blocks besides the bytes.
        let margin = Int64(16 << 20) + needed / 64
        if needed > free - margin {
            throw RemoteError(
                .localFailure,
                "not enough room for '\(destination)': this version needs \(ByteCountText.describe(needed)) more, and its file system has \(ByteCountText.describe(max(0, free))) free; nothing was changed")
        }
    }

    /// Merges the needs of one blob (its further destinations into the ranges' `extra`),
    /// then groups blobs by pack and merges neighbours into ranges (gaps up to `mergeGap`).
    /// Sorted in place: the ranges are slices of one array, 16 bytes a blob.
    static func plan(_ needs: consuming [BlobNeed], wanted: WantedFiles) -> [PackRange] {
        var blobs = needs
        blobs.sort { $0.location(in: wanted).digest < $1.location(in: wanted).digest }
        var unique = 0
        var extra: [SHA256Digest: [BlobNeed.Destination]] = [:]
        for index in blobs.indices {
            let digest = blobs[index].location(in: wanted).digest
            if unique > 0, blobs[unique - 1].location(in: wanted).digest == digest {
                // Another place for a blob fetched once; one blob file is enough.
                let destination = blobs[index].destination(in: wanted)
                let known = [blobs[unique - 1].destination(in: wanted)] + (extra[digest] ?? [])
                if !(destination.isBlobFile && known.contains(where: \.isBlobFile)) {
                    extra[digest, default: []].append(destination)
                }
            } else {
                blobs.swapAt(unique, index)
                unique += 1
            }
        }
        blobs.removeSubrange(unique...)
        blobs.sort { lhs, rhs in
            let (left, right) = (lhs.location(in: wanted), rhs.location(in: wanted))
            return (left.pack, left.offset) < (right.pack, right.offset)
        }
        var ranges: [PackRange] = []
        var current: PackRange?
        for index in blobs.indices {
            let location = blobs[index].location(in: wanted)
            let start = Int64(location.offset)
            let end = start + Int64(location.length)
            if var range = current, range.pack == location.pack, start >= range.end, start - range.end <= mergeGap,
                end - range.start <= maximumRange
            {
                range.end = end
                current = range
            } else {
                if let range = current { ranges.append(range) }
                current = PackRange(pack: location.pack, start: start, end: end, blobs: blobs[index..<index], extra: extra)
            }
            if let first = current?.blobs.startIndex { current?.blobs = blobs[first...index] }
        }
        if let range = current { ranges.append(range) }
        // Large ranges first: the transfers finish together.
        return ranges.sorted { $0.end - $0.start > $1.end - $1.start }
    }

    /// A piece of a DEST file: where a blob's bytes already are.
    struct LocalPiece: Sendable {
        var path: String
        var offset: Int64
        var length: Int
        /// XXH3 of the bytes: the chunk hash the new version's list records for them.
        var hash: ContentHash
    }

    /// Cuts DEST's `files` into pieces as a push would (with the chunk lists its scan found)
    /// and names each by its SHA-256: the pieces a changed large file can take from its old
    /// copy.
    /// - Complexity: one read of each file, SHA-256 and XXH3 of every byte.
    static func indexLocalPieces(
        _ files: [SnapshotEntry], destination: String, options: RemoteOptions, buffer: ChunkBuffer
    ) throws -> [SHA256Digest: LocalPiece] {
        let hasher = SHA256Hasher()
        var pieces: [SHA256Digest: LocalPiece] = [:]
        for file in files {
            let full = PackageLayout.joined(destination, file.path)
            guard let source = try? FileDescriptor.open(full, options: [.noFollow]) else { continue }
            let size = try source.status().size
            for piece in try options.chunking.pieces(of: source, size: size, known: file.chunks) {
                let length = Int(piece.count)
                let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<length])
                guard try source.readFully(into: bytes, at: piece.lowerBound) == length else { break }
                hasher.reset()
                hasher.update(UnsafeRawBufferPointer(bytes))
                pieces[hasher.finish()] = LocalPiece(
                    path: full, offset: piece.lowerBound, length: length, hash: ContentHash.of(UnsafeRawBufferPointer(bytes)))
            }
        }
        return pieces
    }
}
