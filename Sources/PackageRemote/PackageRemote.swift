import PackageCore

/// Sync a package through S3-compatible object storage (Specs/remote.md): push a package
/// as the remote's next version, pull a version into a package, list the versions, read a
/// version's tree without its contents.
///
/// Every call blocks its thread until done (run it off the main thread); progress goes to
/// a `Subprogress`, and `options.cancellation` stops a call from another thread (its
/// transfers abort at once; the remote's versions and the package stay intact, and the
/// next call picks up what already arrived).
public enum PackageRemote {
    /// Uploads what the remote lacks of the package at `packagePath` and records it as the
    /// remote's next version, moving the head by compare-and-swap.
    ///
    /// Refused (`RemoteError.Kind.conflict`) when the remote's head is not the version this
    /// package was last pushed as or pulled from (unless `force`), or when another push moved
    /// the head meanwhile: nothing is lost either way; pull, then push again. The package
    /// remembers the version it was pushed as in its own `.pkgtool/sync` (so a package moved,
    /// renamed or copied keeps its base), replaced atomically under its lock.
    /// - Complexity: a scan of the package (unchanged files not reread, thanks to its
    ///   manifest); a GET of the head; when something changed, the parent's manifest (cached
    ///   locally), the new or changed files read once, one PUT per pack of new blobs (4 MiB),
    ///   one for the manifest and one for the head. A push of an unchanged package is one GET.
    public static func push(
        _ packagePath: String, to location: RemoteLocation, options: RemoteOptions, force: Bool = false,
        progress: consuming Subprogress? = nil
    ) throws -> PushResult {
        let manager = progress.take()?.start(totalCount: nil)
        let store = RemoteStore(location: location, options: options)
        return try PushOperation.run(packagePath: packagePath, store: store, options: options, force: force, progress: manager)
    }

    /// Makes DEST (created when absent) hold exactly a version of the remote: the head, or
    /// `version` (an id, a unique prefix of one, or a sequence number).
    ///
    /// Downloads only what DEST lacks: contents DEST holds at another path are copied, the
    /// unchanged pieces of a changed large file are taken from DEST's old copy, the rest is
    /// fetched in ranges of packs. Every blob is checked against its SHA-256 and every file
    /// against its content hash before the save engine writes DEST (crash-safe, only changed
    /// entries written); an object that fails leaves DEST untouched. An interrupted pull
    /// resumes from its staging area (`.DEST.pkgtool-pull` beside DEST).
    ///
    /// Refused (`unpushedChanges`) when DEST changed since it was last pushed or pulled (or,
    /// never synced, holds files), unless `force`; refused (`rollback`) when the latest
    /// version does not descend from the one DEST was last synced with (a remote rolled back
    /// or rewritten): pass `version` to take it on purpose. The version's sync record is
    /// committed in DEST's `.pkgtool` with the save that writes it.
    /// - Complexity: a scan of DEST; one GET of the head and of the manifest (unless
    ///   cached); the missing bytes in ranged GETs (blobs closer than 256 KiB in one pack
    ///   share one); writes in proportion to the change.
    public static func pull(
        _ location: RemoteLocation, to destination: String, version: String? = nil, options: RemoteOptions,
        force: Bool = false, durability: Durability = .full, progress: consuming Subprogress? = nil
    ) throws -> PullResult {
        let manager = progress.take()?.start(totalCount: nil)
        // A prune may move the version's blobs meanwhile: then the pull starts over.
        return try PruneOperation.pullingThroughPrunes(location: location, options: options) { store in
            try PullOperation.run(
                destination: destination, store: store, options: options, version: version, force: force,
                durability: durability, progress: manager)
        }
    }

    /// Deletes the versions `policy` does not keep and the bytes only they used
    /// (Specs/remote.md, "Prune"): packs no kept version uses, and packs kept versions use
    /// less than half of, whose live blobs move into new packs (a blob index says where).
    ///
    /// Takes no lock: a push racing the prune is kept (it rebases onto the prune's record),
    /// a pull racing it completes (it starts over with the blobs' new places). Objects no
    /// version names are kept while younger than `grace` (a push in flight's). Killed at any
    /// point, every kept version still pulls; the next prune finishes the job.
    /// - Parameters:
    ///   - location: the remote, `s3://BUCKET/PREFIX`.
    ///   - policy: which versions to keep (the head always); an empty policy is refused.
    ///   - options: the store's configuration and the transfer settings (`cancellation` too).
    ///   - grace: nanoseconds an object no version names is kept after it was written.
    ///   - dryRun: plan only: nothing is written or deleted, the result says what would go.
    ///   - progress: receives the prune's progress (its four steps).
    /// - Returns: the versions kept and dropped, and the objects and bytes deleted.
    /// - Complexity: a GET of the head, a listing of the prefix, a header per version past
    ///   the record's history, the kept and dropped manifests (cached), the live blobs of
    ///   repacked packs in ranged GETs, a PUT per new pack, one DELETE per object deleted.
    public static func prune(
        _ location: RemoteLocation, policy: PrunePolicy, options: RemoteOptions, grace: Int64 = 3600 * 1_000_000_000,
        dryRun: Bool = false, progress: consuming Subprogress? = nil
    ) throws -> PruneResult {
        let manager = progress.take()?.start(totalCount: nil)
        return try PruneOperation.run(
            store: RemoteStore(location: location, options: options), policy: policy, grace: grace, dryRun: dryRun,
            progress: manager)
    }

    /// Brings the package at `packagePath` and the remote together, whichever changed
    /// (Specs/remote.md, "Sync"): pushes when only the package changed since its base
    /// version, pulls when only the remote did, and when both did, merges the remote's head
    /// into the package (`TreeMerge`: its base version, the package, the head) with one save,
    /// then pushes the merged tree as the head's successor. A conflict keeps the package's
    /// version at its path and the other side's as a *conflict version* in the package's
    /// `.pkgtool/conflicts/`, listed until resolved (`SyncResult.conflicts`); nothing blocks.
    /// When another device moves the head meanwhile, the whole sync starts over (at most
    /// `SyncOperation.maximumAttempts` times). With `location` nil, the remote is the one the
    /// package remembers, through the endpoint remembered with it unless
    /// `options.explicitEndpoint` is set.
    /// - Complexity: a scan of the package and a GET of the head; then as a push, a pull, or
    ///   for a merge: the base's and the head's manifests (cached), the bytes the package
    ///   lacks in ranged GETs, one save, and a push.
    public static func sync(
        _ packagePath: String, with location: RemoteLocation?, options: RemoteOptions, durability: Durability = .full,
        progress: consuming Subprogress? = nil
    ) throws -> SyncResult {
        let manager = progress.take()?.start(totalCount: nil)
        let (location, options) = try syncTarget(location, packagePath, options)
        let store = RemoteStore(location: location, options: options)
        return try SyncOperation.run(
            packagePath: packagePath, store: store, options: options, durability: durability, progress: manager)
    }

    /// What `push` would do, without doing it: the same reads and refusals (a remote that
    /// moved on, a prefix holding other objects), no write — no object on the store, no
    /// conditional-write probe, no sync record.
    /// - Complexity: a scan of the package, a GET of the head, a LIST for a new remote, the
    ///   parent's manifest (cached).
    public static func planPush(
        _ packagePath: String, to location: RemoteLocation, options: RemoteOptions, force: Bool = false
    ) throws -> PushPlan {
        let store = RemoteStore(location: location, options: options)
        return try PushOperation.plan(packagePath: packagePath, store: store, options: options, force: force)
    }

    /// What `pull` would do, without doing it: the same reads and refusals, DEST's changes
    /// and the bytes to download; nothing written (no staging area, no save).
    /// - Complexity: a scan of DEST, a GET of the head and of the manifest (unless cached),
    ///   a read of each large DEST file a changed version of it would take pieces from.
    public static func planPull(
        _ location: RemoteLocation, to destination: String, version: String? = nil, options: RemoteOptions,
        force: Bool = false
    ) throws -> PullPlan {
        let store = RemoteStore(location: location, options: options)
        return try PullOperation.plan(
            destination: destination, store: store, options: options, version: version, force: force)
    }

    /// What `sync` would do, without doing it: push, pull or merge, with what each would
    /// move and, for a merge, the conflicts it would create; nothing written.
    /// - Complexity: as `planPush` or `planPull`; for a merge, the base's and the head's
    ///   manifests (cached).
    public static func planSync(_ packagePath: String, with location: RemoteLocation?, options: RemoteOptions) throws
        -> SyncPlan
    {
        let (location, options) = try syncTarget(location, packagePath, options)
        let store = RemoteStore(location: location, options: options)
        return try SyncOperation.plan(packagePath: packagePath, store: store, options: options)
    }

    /// Refuses, before any configuration or request, a `packagePath` a push or sync cannot
    /// take: missing (the file system's error) or not a directory.
    package static func requirePackageDirectory(_ packagePath: String) throws {
        try PushOperation.requirePackageDirectory(PushOperation.trimmed(packagePath))
    }

    /// `location` and `options` as given; or, when `location` is nil, the remote the package
    /// remembers, reached through the endpoint remembered with it unless `options` names
    /// one explicitly (as `pkgtool push PKG` does without a URL).
    static func syncTarget(_ location: RemoteLocation?, _ packagePath: String, _ options: RemoteOptions)
        throws(RemoteError) -> (RemoteLocation, RemoteOptions)
    {
        if let location { return (location, options) }
        guard let remembered = remembered(by: packagePath) else {
            throw RemoteError(
                .configuration, "'\(packagePath)' remembers no remote: give its s3://BUCKET/PREFIX URL")
        }
        var options = options
        if options.explicitEndpoint == nil, let endpoint = remembered.endpoint {
            options.configuration.endpoint = endpoint
            options.explicitEndpoint = endpoint
        }
        return (remembered.location, options)
    }

    /// The remote a package was last pushed to or pulled from, as the package itself
    /// remembers it (`.pkgtool/sync`): the URL, and the endpoint when one was given
    /// explicitly. Nil when it has no record, or one that cannot be used (`note` hears why,
    /// in one line). What `pkgtool push PKG` and `pkgtool pull DEST` use without a URL.
    /// - Complexity: one read of at most 4 KiB; no request.
    public static func remembered(by packagePath: String, note: (String) -> Void = { _ in })
        -> (location: RemoteLocation, endpoint: String?)?
    {
        SyncState.read(packagePath: packagePath, note: note).map { ($0.location, $0.endpoint) }
    }

    /// A version's tree (names, kinds, modes, sizes, content hashes) without its contents:
    /// what `pkgtool diff PKG s3://…` compares with.
    /// - Parameters:
    ///   - location: the remote.
    ///   - version: a full id, a unique id prefix (4 hexadecimal digits or more) or a sequence
    ///     number; nil for the latest.
    ///   - options: how to reach the store.
    /// - Complexity: one GET of the head and one of the manifest (unless cached).
    public static func snapshot(
        of location: RemoteLocation, version: String? = nil, options: RemoteOptions
    ) throws -> (version: VersionSummary, snapshot: TreeSnapshot) {
        let (store, connection, target) = try resolve(location, version: version, options: options)
        return (target, try store.tree(target.id, connection))
    }

    /// `held` and the latest version's tree, both pruned to where they differ
    /// (`StreamedComparison`): what `TreeDiff` finds in them is what it finds in the whole
    /// trees. The version's tree is compared as its manifest is decoded, never built, so a
    /// diff holds one whole tree, not two; the result is returned only once the manifest
    /// passed every check `snapshot(of:)` makes.
    /// - Complexity: as `snapshot(of:)`; one merge of the manifest's entries with `held`'s.
    package static func comparison(with held: TreeSnapshot, of location: RemoteLocation, options: RemoteOptions) throws
        -> (held: TreeSnapshot, remote: TreeSnapshot)
    {
        let (store, connection, target) = try resolve(location, version: nil, options: options)
        let (summary, comparison) = try store.streamTree(target.id, connection) { StreamedComparison(held: held.entries) }
        let pruned = comparison.pruned(heldRoot: held.rootHash, streamedRoot: summary.rootHash)
        return (pruned.held, pruned.streamed)
    }

    /// The store of `location`, a connection to it, and the version `version` names (nil:
    /// the latest).
    private static func resolve(_ location: RemoteLocation, version: String?, options: RemoteOptions) throws
        -> (RemoteStore, S3Connection, VersionSummary)
    {
        let store = RemoteStore(location: location, options: options)
        let connection = store.connection()
        let head = try store.requireHead(connection)
        let target =
            try version.map { try LogOperation.resolve($0, store: store, connection: connection, head: head.record) }
            ?? head.record.head
        return (store, connection, target)
    }

    /// The remote's versions, newest first: at most `limit`, or, when nil, those the head
    /// record holds (the head and up to 100 ancestors), whatever number the head claims.
    /// - Complexity: one GET of the head (which holds the latest 101 summaries), then one
    ///   ranged GET of 128 bytes per older version `limit` asks for.
    public static func log(_ location: RemoteLocation, options: RemoteOptions, limit: Int? = nil) throws
        -> [VersionSummary]
    {
        let store = RemoteStore(location: location, options: options)
        return try LogOperation.run(store: store, limit: limit)
    }

    /// The remote's versions as `log` lists them, with the numbers prunes dropped
    /// (Specs/remote.md, "Prune"): a walk past the head record stops at the first pruned version.
    /// - Parameters:
    ///   - location: the remote, `s3://BUCKET/PREFIX`.
    ///   - options: the store's configuration and the transfer settings.
    ///   - limit: at most this many versions; nil: those the head record holds.
    /// - Returns: the versions newest first, and the pruned numbers.
    /// - Complexity: as `log`.
    public static func history(_ location: RemoteLocation, options: RemoteOptions, limit: Int? = nil) throws
        -> RemoteHistory
    {
        try LogOperation.history(store: RemoteStore(location: location, options: options), limit: limit)
    }
}
