import Glibc
import PackageCore

/// What a push did.
public struct PushResult: Sendable {
    /// The remote's head afterwards: the new version, or the one already there.
    public var version: VersionSummary
    /// False when the remote already held exactly this package (nothing was written).
    public var createdVersion: Bool
    /// Files read and hashed to find their blobs (files the parent version did not hold).
    public var filesRead = 0
    /// Bytes of those files.
    public var bytesRead: Int64 = 0
    /// New blobs: pieces of files the remote did not hold.
    public var blobsUploaded = 0
    /// The packs that carried them, one PUT each.
    public var packsUploaded = 0
    /// Bytes of those packs (blobs and trailers).
    public var bytesUploaded: Int64 = 0
    /// The new version's manifest object.
    public var manifestBytes = 0
    /// Packs of an interrupted push found on the remote and reused.
    public var packsResumed = 0
    /// HTTP requests sent, and how many of them were retries.
    public var requests = 0
    /// Requests that were attempts after a failure.
    public var retries = 0
    /// Wall-clock duration of the push.
    public var seconds: Double = 0
    /// Times the new version was rebased onto a record a prune wrote meanwhile.
    public var rebasedOntoPrunes = 0
    /// Things a person should know (special files left out).
    public var notes: [String] = []
}

/// What a push would do (`PackageRemote.planPush`, `pkgtool push --dry-run`), found by
/// the reads and refusals of a real push, with nothing written.
public struct PushPlan: Sendable {
    /// A file the push would read, and whose blobs the remote lacks it would upload.
    public struct File: Sendable, Equatable {
        /// Its path inside the package: bytes, compared and ordered as `RelativePath` does.
        public var path: RelativePath
        /// Its size in bytes.
        public var size: Int64
        /// Whether the remote's head holds another content at this path (else the path is new).
        public var replaces: Bool
    }

    /// The remote's head now; nil when the remote holds no version yet.
    public var head: VersionSummary?
    /// Whether the push would record a new version (false: the remote holds the package).
    public var createsVersion: Bool
    /// The number the new version would get.
    public var sequence: Int
    /// The root hash of the package as the push sees it (exclusions left out).
    public var rootHash: ContentHash
    /// Entries the version would hold.
    public var entries: Int
    /// The files whose content the remote's head does not hold: read, and their new blobs
    /// uploaded (pieces of a large file the remote holds stay where they are).
    public var files: [File] = []
    /// Things a person should know (special files left out).
    public var notes: [String] = []
    /// HTTP requests the plan took (reads only).
    public var requests = 0

    /// Bytes of `files`: at most what the push would upload (before packing).
    public var bytes: Int64 { files.reduce(0) { $0 + $1.size } }
}

/// `push`: makes a package the remote's next version (Specs/remote.md, "Push").
enum PushOperation {
    /// What a push reads before it writes anything: the package as scanned (without what
    /// `options.exclusions` name), its sync state, and the remote's head.
    struct Prepared {
        var packagePath: String
        var head: (record: HeadRecord, etag: String)?
        var sync: PackageSyncStatus
        var snapshot: TreeSnapshot
        var notes: [String]
    }

    /// Reads the package, its sync state and the head; refuses what the push would refuse
    /// (not a directory; unless `force`, a remote that moved on since the package was last
    /// synced with it; a prefix holding other objects). Writes nothing.
    static func prepare(
        packagePath: String, store: RemoteStore, options: RemoteOptions, force: Bool, connection: S3Connection
    ) throws -> Prepared {
        let packagePath = trimmed(packagePath)
        try requirePackageDirectory(packagePath)
        let head = try store.readHead(connection)
        var warnings: [String] = []
        var sync = PackageSyncStatus(own: nil, contents: .absent, base: nil)
        let scan = try PackageAccess.reading(packagePath, warn: { warnings.append($0) }) {
            sync = PackageSyncStatus.read(packagePath: packagePath, store: store) { warnings.append($0) }
            return try PackageScan.scan(
                packagePath, workers: options.workers, excluding: options.exclusions, keepingManifest: false,
                recordingHashedPaths: false)
        }
        for skipped in scan.result.skipped {
            warnings.append("skipped '\(PackageLayout.joined(packagePath, skipped.path))': a \(skipped.kind) is not package content")
        }
        let prepared = Prepared(
            packagePath: packagePath, head: head, sync: sync, snapshot: scan.snapshot, notes: warnings)
        if let head {
            if head.record.head.rootHash != scan.snapshot.rootHash && !force {
                try requireBase(
                    sync.base, head: head.record.head, packagePath: packagePath, location: store.location,
                    unchanged: sync.base.map { $0.rootHash == scan.snapshot.rootHash } ?? false)
            }
        } else {
            try prepareNewRemote(store, connection)
        }
        return prepared
    }

    /// Refuses a PKG that is not a directory (missing: the file system's error).
    static func requirePackageDirectory(_ packagePath: String) throws {
        let status = try FileSystem.status(packagePath, followSymlinks: true)
        guard status.kind == .directory else {
            throw RemoteError(.localFailure, "cannot push '\(packagePath)': it is a \(status.kind), not a package directory")
        }
    }

    /// The files of `snapshot` whose content the parent (`parentContents`) does not hold
    /// (by content hash and size): what a push reads and whose new blobs it sends, as
    /// indices into the snapshot (4 bytes a file).
    static func pendingWork(_ snapshot: TreeSnapshot, parentContents: ParentContents) -> BlobUploader.Work {
        var indices: [Int32] = []
        for (index, entry) in snapshot.entries.enumerated() where entry.kind == .regular && entry.size > 0 {
            if parentContents.blobs(of: FileKey(entry.hash, entry.size)) == nil { indices.append(Int32(index)) }
        }
        return BlobUploader.Work(snapshot: snapshot, indices: indices)
    }

    /// The contents version `parent` holds, handed over as its manifest is decoded (checked
    /// as `RemoteStore.manifest` checks it): its entries are never held.
    static func parentContents(of parent: VersionSummary, store: RemoteStore, connection: S3Connection)
        throws(RemoteError) -> ParentContents
    {
        let index = store.blobIndex
        var (_, contents) = try store.streamTree(
            parent.id, connection, into: { ParentContents(place: { index.place($0) }) },
            files: { contents, entry, blobs in contents.add(entry, blobs: blobs) })
        contents.finish()
        return contents
    }

    /// What a push would do, with every read and refusal of a real one and no write: no
    /// object on the store (not even the conditional-write probe), no sync record.
    static func plan(packagePath: String, store: RemoteStore, options: RemoteOptions, force: Bool) throws -> PushPlan {
        let connection = store.connection()
        let prepared = try prepare(
            packagePath: packagePath, store: store, options: options, force: force, connection: connection)
        let head = prepared.head?.record.head
        var plan = PushPlan(
            head: head, createsVersion: head?.rootHash != prepared.snapshot.rootHash,
            sequence: (head?.sequence ?? 0) + 1, rootHash: prepared.snapshot.rootHash,
            entries: prepared.snapshot.entries.count, notes: prepared.notes)
        if plan.createsVersion {
            let parent = try head.map { try store.manifest($0.id, connection) }
            let held = Set((parent?.entries ?? []).map { RelativePath(trusted: $0.path) })  // names are bytes
            let work = pendingWork(prepared.snapshot, parentContents: ParentContents(parent))
            plan.files = (0..<work.count).map {
                let path = RelativePath(trusted: work[$0].path)
                return PushPlan.File(path: path, size: work[$0].size, replaces: held.contains(path))
            }
        }
        plan.requests = store.counters.requests
        return plan
    }

    /// Pushes the package at `packagePath`; `secondParent` makes the new version a merge
    /// (`sync` passes the version the merged changes were based on).
    static func run(
        packagePath: String, store: RemoteStore, options: RemoteOptions, force: Bool, progress: ProgressManager?,
        secondParent: SHA256Digest? = nil
    ) throws -> PushResult {
        let clock = Stopwatch()
        let connection = store.connection()
        var prepared = try prepare(
            packagePath: packagePath, store: store, options: options, force: force, connection: connection)
        // The scan's working state (its per-directory arrays, the package manifest it took
        // hashes from) is gone: its pages go back before the upload builds its tables.
        ProcessEnvironment.releaseFreeMemory()
        let packagePath = prepared.packagePath
        let head = prepared.head
        var result = PushResult(version: head?.record.head ?? Self.placeholderSummary, createdVersion: false)
        result.notes = prepared.notes

        if let head, head.record.head.rootHash == prepared.snapshot.rootHash {
            // Nothing to send: the remote holds this package already.
            remember(head.record.head, in: packagePath, sync: prepared.sync, store: store, options: options, notes: &result.notes)
            result.requests = store.counters.requests
            result.seconds = clock.seconds
            completeWithoutWork(progress)
            return result
        }
        // Before anything is uploaded: the head will move by compare-and-swap, so the store
        // must be seen refusing a condition that does not hold, now (not only when the
        // remote was made: the store, or a proxy before it, may have changed since).
        try ConditionalWrites.probe(store, connection)

        // What the remote holds: the parent's blobs (by content for whole files, by digest
        // for pieces), and the packs of an interrupted push.
        var parentContents =
            try head.map { try Self.parentContents(of: $0.record.head, store: store, connection: connection) }
            ?? ParentContents(nil)
        // The files whose content the parent does not hold are read and sent.
        var work = pendingWork(prepared.snapshot, parentContents: parentContents)
        var known = parentContents.knownBlobs()
        result.packsResumed = try adoptPendingPacks(store, connection, known: &known)
        let sent = try upload(
            work, known: known, packagePath: packagePath, store: store, options: options, progress: progress,
            result: &result)
        known = ParentContents(nil).knownBlobs()  // what the upload looked blobs up in
        // The upload's buffers were freed on its threads: their pages go back before the
        // version's entries and its encoding are built.
        ProcessEnvironment.releaseFreeMemory()
        var version: any StorableVersion = newVersion(
            of: &prepared.snapshot, work: &work, sent: sent, parentContents: &parentContents, onto: head,
            secondParent: secondParent)
        let summary = try commit(
            &version, onto: head, packagePath: packagePath, store: store, connection: connection, result: &result)
        remember(summary, in: packagePath, sync: prepared.sync, store: store, options: options, notes: &result.notes)
        store.cache.dropPending(named: version.packNames())
        progress?.complete(count: 1)
        result.version = summary
        result.createdVersion = true
        result.requests = store.counters.requests
        result.retries = store.counters.retries
        result.seconds = clock.seconds
        return result
    }

    /// Shows a push that had nothing to send as done: no bytes, every unit complete.
    static func completeWithoutWork(_ progress: ProgressManager?) {
        progress?.withProperties {
            $0.totalByteCount = 0
            $0.completedByteCount = 0
        }
        progress?.complete(count: progress?.totalCount ?? 0)
    }

    /// Reads `work` and sends the blobs the remote lacks (`known`: those it holds), after
    /// setting the progress totals. Returns each file's blobs, in the order of `work`.
    static func upload(
        _ work: BlobUploader.Work, known: KnownBlobs, packagePath: String, store: RemoteStore,
        options: RemoteOptions, progress: ProgressManager?, result: inout PushResult
    ) throws -> BlobUploader.Sent {
        // The figures a progress line shows: the bytes of those files, known before any is
        // read and never growing; a byte is done once found on the remote or once its pack
        // has arrived (`BlobUploader`), so done never passes the total.
        let sizes = work.indices.lazy.map { work.snapshot.entries[Int($0)].size }
        let units = sizes.reduce(0) { $0 + BlobUploader.units($1) }
        progress?.withProperties {
            $0.totalCount = units + 1
            $0.totalByteCount = UInt64(sizes.reduce(Int64(0), +))
            $0.completedByteCount = 0
            $0.totalFileCount = work.count
            $0.completedFileCount = 0
        }
        guard work.count > 0 else { return BlobUploader.Sent() }
        let uploader = BlobUploader(
            store: store, options: options, packagePath: packagePath, known: known, progress: progress)
        let (blobs, statistics) = try uploader.run(work)
        result.filesRead = statistics.filesRead
        result.bytesRead = statistics.bytesRead
        result.blobsUploaded = statistics.blobsUploaded
        result.packsUploaded = statistics.packsUploaded
        result.bytesUploaded = statistics.bytesUploaded
        return blobs
    }

    /// The version this push makes on top of `head` (a merge of `secondParent` when that is
    /// another version): every entry of the scan with its blobs, sent or the parent's, made
    /// from the scan's tree as the manifest is encoded. The version holds the tree and the
    /// parent's contents; the push's own references to them go.
    static func newVersion(
        of snapshot: inout TreeSnapshot, work: inout BlobUploader.Work, sent: BlobUploader.Sent,
        parentContents: inout ParentContents, onto head: (record: HeadRecord, etag: String)?, secondParent: SHA256Digest?
    ) -> PushedVersion {
        // A second parent only beside a first, and only when it is another version.
        let mergedFrom = head.flatMap { head in secondParent.flatMap { $0 == head.record.head.id ? nil : $0 } }
        let version = PushedVersion(
            sequence: (head?.record.head.sequence ?? 0) + 1, time: SystemClock.realtimeNanoseconds,
            parent: head?.record.head.id, secondParent: mergedFrom, snapshot: snapshot, sentEntries: work.indices,
            sent: sent, parentContents: parentContents)
        snapshot = TreeSnapshot.empty
        work = BlobUploader.Work(snapshot: .empty, indices: [])
        parentContents = ParentContents(nil)
        return version
    }

    /// Stores `version` and moves the head to it by compare-and-swap on `head` (the head
    /// the push read). A prune that moved the record meanwhile, not the head, is built on:
    /// `version` is rebased onto it and stored again. Returns the version made the head.
    static func commit(
        _ version: inout any StorableVersion, onto head: (record: HeadRecord, etag: String)?, packagePath: String,
        store: RemoteStore, connection: S3Connection, result: inout PushResult
    ) throws -> VersionSummary {
        var base = head
        var attempt = 0
        while true {
            attempt += 1
            let stored = try storeManifest(version, packagePath: packagePath, store: store, connection: connection)
            result.manifestBytes = stored.bytes
            if try advanceHead(from: base, to: stored.summary, store: store, connection: connection) {
                return stored.summary
            }
            // Lost the race — unless a retry of our own PUT is what moved it.
            let now = try store.readHead(connection)
            if now?.record.contains(stored.id) == true { return stored.summary }
            // A prune moved the record, not the head: build on it (Specs/remote.md, "Prune").
            if let now, let read = base, now.record.head.id == read.record.head.id, attempt < 5 {
                var manifest = version.manifest()
                manifest.entries = try PruneOperation.rebase(
                    manifest.entries, store: store, packagePath: packagePath,
                    prunesSinceRead: now.record.prunes - read.record.prunes, adoptedPacks: result.packsResumed > 0)
                manifest.time = SystemClock.realtimeNanoseconds
                version = manifest
                result.rebasedOntoPrunes += 1
                base = now
                continue
            }
            throw RemoteError(
                .conflict,
                "the remote moved on while pushing: \(store.location) is now at \(describe(now?.record.head)); "
                    + "nothing was lost: 'pkgtool sync \(packagePath)' merges both, or pull (into another directory "
                    + "to keep these changes), then push again")
        }
    }

    /// Stores the manifest object, named by its SHA-256, once it decodes to what was
    /// scanned. Returns its id, the version it describes, and its size.
    static func storeManifest(
        _ manifest: some StorableVersion, packagePath: String, store: RemoteStore, connection: S3Connection
    ) throws -> (id: SHA256Digest, summary: VersionSummary, bytes: Int) {
        let bytes = manifest.encoded()
        let id = SHA256Digest.of(bytes)
        // A self-check: what pull will rebuild must hash to what was scanned.
        guard manifest.isEncoded(as: bytes, id: id) else {
            throw RemoteError(.localFailure, "internal error: the manifest of '\(packagePath)' does not decode to its tree")
        }
        let outcome = try connection.put(
            bucket: store.location.bucket, key: RemoteLayout.version(id, store.location), body: MemoryBody(bytes),
            payloadHash: id, condition: .absent)
        _ = outcome  // 412: the same manifest is there already (a retried push)
        store.cache.storeManifest(id, bytes)
        return (id, manifest.summary(id: id), bytes.count)
    }

    /// Moves the head to `summary` only if nobody moved it since `base` was read (absent:
    /// only if there is none). True when it moved, and reads back as written; false when
    /// another writer won the race.
    static func advanceHead(
        from base: (record: HeadRecord, etag: String)?, to summary: VersionSummary, store: RemoteStore,
        connection: S3Connection
    ) throws -> Bool {
        let newRecord = base.map { $0.record.advanced(to: summary) } ?? HeadRecord(head: summary, history: [])
        let condition: WriteCondition = base.map { .matching(etag: $0.etag) } ?? .absent
        let recordBytes = newRecord.encoded()
        let moved = try connection.put(
            bucket: store.location.bucket, key: RemoteLayout.head(store.location), bytes: recordBytes,
            condition: condition)
        guard moved == .preconditionFailed else {
            // Stored: read it back. A store that ignored the condition may have let another
            // push overwrite this one (Specs/remote.md, "What a hostile store can do").
            try ConditionalWrites.confirmHead(holding: summary, written: recordBytes, store, connection)
            return true
        }
        return false
    }

    /// Makes `version` the package's sync record (`SyncState`), unless it says so already:
    /// replaced atomically under the package's lock, and only while the package holds what
    /// was pushed or still carries the record the push started from
    /// (`SyncRecordFile.replace`): a pull that committed another version meanwhile keeps
    /// its record. The version is on the remote either way: what fails here is a note.
    static func remember(
        _ version: VersionSummary, in packagePath: String, sync: PackageSyncStatus, store: RemoteStore,
        options: RemoteOptions, notes: inout [String]
    ) {
        let state = SyncState(location: store.location, endpoint: store.explicitEndpoint, version: version)
        guard sync.own != state else { return }
        do {
            let written = try SyncRecordFile.replace(
                with: state.encoded(), packagePath: packagePath, ifRootHash: version.rootHash, orRecordIs: sync.contents,
                workers: options.workers, durability: .full)
            if !written {
                notes.append(
                    "'\(packagePath)' was pulled into while it was pushed: it keeps the sync record of that pull, not version \(version.sequence)")
            }
        } catch {
            notes.append("version \(version.sequence) is on the remote, but '\(packagePath)' could not record it: \(error)")
        }
    }

    /// Refuses a push whose package was not last synced with the head: its version would
    /// silently drop what was pushed since. `unchanged`: the package holds what it held when
    /// last synced (nothing of its own to push; the remote simply moved on).
    static func requireBase(
        _ record: SyncBase?, head: VersionSummary, packagePath: String, location: RemoteLocation, unchanged: Bool = false
    ) throws(RemoteError) {
        guard let record else {
            throw RemoteError(
                .conflict,
                "'\(packagePath)' was never pushed to or pulled from \(location), which holds \(describe(head)): "
                    + "pull it first, or push --force to make this package the next version")
        }
        guard record.version == head.id else {
            let short = String(record.version.description.prefix(12))
            let synced = "version " + (record.sequence.map { "\($0) (\(short))" } ?? short)
            if unchanged {
                throw RemoteError(
                    .conflict,
                    "nothing to push: '\(packagePath)' has not changed since \(synced), and \(location) moved on "
                        + "to \(describe(head)); 'pkgtool pull \(packagePath)' brings it up to date "
                        + "(push --force would make the older tree the next version)")
            }
            throw RemoteError(
                .conflict,
                "the remote moved on: \(location) is at \(describe(head)) but '\(packagePath)' was last synced with "
                    + "\(synced); 'pkgtool sync \(packagePath)' merges both, "
                    + "or pull (into another directory to keep these changes), then push again, or push --force")
        }
    }

    static func describe(_ summary: VersionSummary?) -> String {
        guard let summary else { return "no version" }
        return "version \(summary.sequence) (\(summary.shortID), pushed \(summary.isoTime))"
    }

    /// A first push: the prefix must hold nothing but a previous attempt's objects (and
    /// probes a killed push left behind).
    static func prepareNewRemote(_ store: RemoteStore, _ connection: S3Connection) throws(RemoteError) {
        let location = store.location
        let prefix = RemoteLayout.listingPrefix(location)
        let listing = try connection.list(bucket: location.bucket, prefix: prefix, maximum: 100)
        for object in listing.objects {
            let name = PathOrder.droppingBytes(prefix.utf8.count, from: object.key)
            let ours =
                PathOrder.hasBytePrefix(name, RemoteLayout.packsDirectory)
                || PathOrder.hasBytePrefix(name, RemoteLayout.versionsDirectory)
                || PathOrder.hasBytePrefix(name, RemoteLayout.probeName)
            if !ours {
                throw RemoteError(
                    .notARemote,
                    "\(location) is not a pkgtool remote: it holds other objects ('\(object.key)'); push to an empty prefix")
            }
        }
    }

    /// Adds the blobs of packs an interrupted push uploaded (recorded in the cache and
    /// still on the store) to `known`; returns how many packs were adopted.
    static func adoptPendingPacks(
        _ store: RemoteStore, _ connection: S3Connection, known: inout KnownBlobs
    ) throws(RemoteError) -> Int {
        let pending = store.cache.pendingPacks()
        guard !pending.isEmpty else { return 0 }
        var held = Set<SHA256Digest>(minimumCapacity: known.count)
        for ordinal in 0..<known.count { held.insert(known[ordinal].digest) }
        var adopted = 0
        var seen = Set<SHA256Digest>()
        // A pack the last prune deletes is not adopted (Specs/remote.md, "Prune").
        for pack in pending where seen.insert(pack.id).inserted && !store.isDeleting(pack.id) {
            guard pack.blobs.contains(where: { !held.contains($0.digest) }) else { continue }
            // The cache may outlive the store's objects (a bucket emptied): check it is there.
            guard try connection.head(bucket: store.location.bucket, key: RemoteLayout.pack(pack.id, store.location)) != nil
            else { continue }
            let name = PackName(pack.id)
            for blob in pack.blobs where held.insert(blob.digest).inserted {
                known.extra.append(BlobLocation(digest: blob.digest, packName: name, offset: blob.offset, length: blob.length))
            }
            adopted += 1
        }
        return adopted
    }

    static let placeholderSummary = VersionSummary(
        id: SHA256Digest.empty, sequence: 1, time: 0, parent: nil, rootHash: ContentHash(high: 0, low: 0), size: 0,
        entryCount: 0)

    /// `path` without trailing slashes, by bytes ("/" stays "/").
    static func trimmed(_ path: String) -> String { RelativePath.trimmingTrailingSlashes(path) }
}

/// A file's identity for reuse: content hash and size.
struct FileKey: Hashable, Sendable {
    var hash: ContentHash
    var size: Int64
    init(_ hash: ContentHash, _ size: Int64) {
        self.hash = hash
        self.size = size
    }
}

enum PackagePaths {
    static func realPath(_ path: String) -> String? { try? FileSystem.realPath(path) }
}
