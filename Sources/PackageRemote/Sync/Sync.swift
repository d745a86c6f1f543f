import PackageCore

/// What a sync did.
public struct SyncResult: Sendable {
    /// What the sync had to do.
    public enum Action: String, Sendable, Hashable {
        /// The package and the remote's head were the same already.
        case upToDate = "up to date"
        /// Only the package had changed: pushed.
        case pushed
        /// Only the remote had moved on: pulled.
        case pulled
        /// Both had changed: merged into the package, then pushed.
        case merged
    }

    /// What was done.
    public var action: Action
    /// The remote's head afterwards, which the package is now synced with.
    public var version: VersionSummary
    /// The pull, when one ran.
    public var pulled: PullResult?
    /// The push, when one ran (after a merge too).
    public var pushed: PushResult?
    /// For a merge: entries taken from the remote's version.
    public var entriesFromRemote = 0
    /// For a merge: entries kept from the package's changes.
    public var entriesFromLocal = 0
    /// The conflict versions this sync added (the side a merge could not keep in the tree).
    public var newConflicts: [ConflictVersion] = []
    /// Every conflict version the package lists afterwards, this sync's and older ones.
    public var conflicts: [ConflictVersion] = []
    /// Attempts made: more than one when another device moved the head during a sync.
    public var attempts = 1
    /// Things a person should know.
    public var notes: [String] = []
}

/// What a sync would do (`PackageRemote.planSync`, `pkgtool sync --dry-run`), found by the
/// reads and refusals of a real sync, with nothing written.
public struct SyncPlan: Sendable {
    /// What the sync would do.
    public var action: SyncResult.Action
    /// The remote's head now; nil when the remote holds no version yet.
    public var head: VersionSummary?
    /// The push it would make (alone, or after a merge: `nil` then; see `mergedSequence`).
    public var push: PushPlan?
    /// The pull it would make, when only the remote moved on.
    public var pull: PullPlan?
    /// For a merge: how the package would change (the remote's changes it would take).
    public var changes: [TreeChange] = []
    /// For a merge: the paths that would get a conflict version.
    public var conflicts: [RelativePath] = []
    /// For a merge: entries taken from the remote's version, and kept from the package.
    public var entriesFromRemote = 0
    /// For a merge: entries kept from the package's changes.
    public var entriesFromLocal = 0
    /// For a merge: blobs and bytes to download.
    public var blobsToDownload = 0
    /// For a merge: bytes of those blobs.
    public var bytesToDownload: Int64 = 0
    /// For a merge: the number the pushed merge would get.
    public var mergedSequence: Int?
    /// Things a person should know.
    public var notes: [String] = []

    init(action: SyncResult.Action, head: VersionSummary?) {
        self.action = action
        self.head = head
    }
}

/// `sync`: brings a package and a remote together — push, pull, or merge then push
/// (Specs/remote.md, "Sync").
enum SyncOperation {
    /// Whole syncs tried when another device keeps moving the head meanwhile.
    static let maximumAttempts = 5

    static func run(
        packagePath: String, store: RemoteStore, options: RemoteOptions, durability: Durability, progress: ProgressManager?
    ) throws -> SyncResult {
        let packagePath = PushOperation.trimmed(packagePath)
        try sweepConflictContents(packagePath: packagePath, durability: durability)
        var attempt = 1
        while true {
            do {
                var result = try once(
                    packagePath: packagePath, store: store, options: options, durability: durability, progress: progress)
                result.attempts = attempt
                return result
            } catch let error as RemoteError where error.kind == .conflict || error.kind == .localChange || error.kind == .unpushedChanges {
                // The head moved, or the package changed, between this attempt's reads and
                // its writes: nothing was lost; start over from what is there now.
                guard attempt < maximumAttempts else {
                    throw RemoteError(
                        error.kind,
                        "'\(packagePath)' could not be synced with \(store.location) in \(maximumAttempts) attempts: \(error.message)")
                }
                attempt += 1
            }
        }
    }

    /// What a sync would do: the decisions of `once`, with its reads and refusals, and no
    /// write (no sweep, no staging, no save, no object on the store).
    static func plan(packagePath: String, store: RemoteStore, options: RemoteOptions) throws -> SyncPlan {
        let packagePath = PushOperation.trimmed(packagePath)
        try requireDirectory(packagePath)
        let connection = store.connection()
        let head = try store.readHead(connection)
        var warnings: [String] = []
        var sync = PackageSyncStatus(own: nil, contents: .absent, base: nil)
        let scan = try PackageAccess.reading(packagePath, warn: { warnings.append($0) }) {
            sync = PackageSyncStatus.read(packagePath: packagePath, store: store) { warnings.append($0) }
            return try PackageScan.scan(packagePath, workers: options.workers)
        }
        let local = scan.snapshot
        let base = sync.base
        func pushing() throws -> SyncPlan {
            let push = try PushOperation.plan(packagePath: packagePath, store: store, options: options, force: false)
            var plan = SyncPlan(action: push.createsVersion ? .pushed : .upToDate, head: head?.record.head)
            plan.push = push
            plan.notes = warnings + push.notes
            return plan
        }
        guard let head else { return try pushing() }
        let latest = head.record.head
        if latest.rootHash == local.rootHash || base?.version == latest.id { return try pushing() }
        if let base {
            try PullOperation.refuseRollback(base, head: head.record, destination: packagePath, store: store, connection: connection)
        }
        let unchangedSinceBase = base.map { $0.rootHash == local.rootHash } ?? (local.rootHash == TreeSnapshot.empty.rootHash)
        if unchangedSinceBase {
            let pull = try PullOperation.plan(
                destination: packagePath, store: store, options: options, version: nil, force: false)
            var plan = SyncPlan(action: .pulled, head: latest)
            plan.pull = pull
            plan.notes = warnings + pull.notes
            return plan
        }
        var plan = try planMerge(
            packagePath: packagePath, local: local, base: base, head: latest, store: store, connection: connection,
            options: options)
        plan.notes = warnings
        return plan
    }

    /// Refuses a PKG that is not a directory (missing: the file system's error).
    static func requireDirectory(_ packagePath: String) throws {
        let status = try FileSystem.status(packagePath, followSymlinks: true)
        guard status.kind == .directory else {
            throw RemoteError(.localFailure, "cannot sync '\(packagePath)': it is a \(status.kind), not a package directory")
        }
    }

    /// What `merge` would do, with its reads and no write: how the package would change,
    /// its conflicts, and the blobs the merge would download.
    static func planMerge(
        packagePath: String, local: TreeSnapshot, base: SyncBase?, head latest: VersionSummary, store: RemoteStore,
        connection: S3Connection, options: RemoteOptions
    ) throws -> SyncPlan {
        let baseTree = try base.map { try store.manifest($0.version, connection).snapshot() } ?? TreeSnapshot.empty
        let otherManifest = try store.manifest(latest.id, connection)
        let merged = TreeMerge(base: baseTree, local: local, other: otherManifest.snapshot())
        var plan = SyncPlan(action: .merged, head: latest)
        plan.changes = TreeDiff.changes(from: local, to: merged.tree, detectRenames: true)
        plan.conflicts = merged.conflicts.map(\.path)
        plan.entriesFromRemote = merged.sources.filter { $0 == .other }.count
        plan.entriesFromLocal = merged.sources.filter { $0 == .local }.count
        let remoteByPath = byPath(otherManifest.entries)
        var wanted: [RemoteEntry] = []
        for (index, entry) in merged.tree.entries.enumerated() where merged.sources[index] == .other && entry.kind == .regular {
            if let remote = remoteByPath[RelativePath(trusted: entry.path)] { wanted.append(remote) }
        }
        for conflict in merged.conflicts where merged.source(of: conflict.path) != .other {
            if let remote = remoteByPath[conflict.path], remote.kind == .regular { wanted.append(remote) }
        }
        (plan.blobsToDownload, plan.bytesToDownload) = try PullOperation.download(
            wanted, destination: packagePath, current: local, options: options)
        plan.mergedSequence = latest.sequence + 1
        return plan
    }

    /// Removes conflict contents a crash left unlisted in the package's
    /// `.pkgtool/conflicts` (kept by a merge that never committed its record): under the
    /// pull staging lock, which every sync and pull of the package holds while it keeps
    /// contents and commits, and the package's exclusive lock (`ConflictStore.sweep`). When
    /// nothing is unlisted, no lock is taken and nothing is made.
    static func sweepConflictContents(packagePath: String, durability: Durability) throws {
        guard (try? FileSystem.status(packagePath, followSymlinks: true))?.kind == .directory,
            ConflictStore.hasUnlisted(packagePath: packagePath)
        else { return }
        let stagingPath = PullStaging.path(of: packagePath)
        let stagingExisted = (try? FileSystem.statusIfExists(stagingPath)) != nil
        let staging = try PullStaging(destination: packagePath)
        defer {
            if !stagingExisted { staging.remove() }
            staging.unlock()
        }
        try ConflictStore.sweep(packagePath: packagePath, durability: durability)
    }

    static func once(
        packagePath: String, store: RemoteStore, options: RemoteOptions, durability: Durability, progress: ProgressManager?
    ) throws -> SyncResult {
        try requireDirectory(packagePath)
        let connection = store.connection()
        let head = try store.readHead(connection)
        var warnings: [String] = []
        var sync = PackageSyncStatus(own: nil, contents: .absent, base: nil)
        var existing = ConflictStore.Contents.absent
        let scan = try PackageAccess.reading(packagePath, warn: { warnings.append($0) }) {
            sync = PackageSyncStatus.read(packagePath: packagePath, store: store) { warnings.append($0) }
            existing = ConflictStore.read(packagePath: packagePath)
            return try PackageScan.scan(packagePath, workers: options.workers)
        }
        let listed = try conflictList(existing, packagePath: packagePath)
        let local = scan.snapshot
        let base = sync.base

        func pushed(_ action: SyncResult.Action) throws -> SyncResult {
            let push = try PushOperation.run(
                packagePath: packagePath, store: store, options: options, force: false, progress: progress)
            // A push that found the remote holding the package (what it leaves out aside) made nothing.
            var result = SyncResult(action: push.createdVersion ? action : .upToDate, version: push.version, pushed: push)
            result.conflicts = listed.versions
            result.notes = warnings + push.notes
            return result
        }
        guard let head else { return try pushed(.pushed) }  // a new remote
        let latest = head.record.head
        if latest.rootHash == local.rootHash {
            var result = try pushed(.upToDate)  // records the version when the record lacks it
            result.action = .upToDate
            return result
        }
        if let base, base.version == latest.id { return try pushed(.pushed) }
        if let base {
            // The latest version must descend from the package's: a sync never goes back.
            try PullOperation.refuseRollback(base, head: head.record, destination: packagePath, store: store, connection: connection)
        }
        let unchangedSinceBase = base.map { $0.rootHash == local.rootHash } ?? (local.rootHash == TreeSnapshot.empty.rootHash)
        if unchangedSinceBase {
            let pull = try PullOperation.run(
                destination: packagePath, store: store, options: options, version: nil, force: false,
                durability: durability, progress: progress)
            var result = SyncResult(action: .pulled, version: pull.version, pulled: pull)
            result.conflicts = listed.versions
            result.notes = warnings + pull.notes
            return result
        }
        return try merge(
            packagePath: packagePath, scan: scan, base: base, head: latest, listed: listed, store: store,
            connection: connection, options: options, durability: durability, progress: progress, notes: warnings)
    }

    /// The package's conflict versions as read: none when it lists none; refused when its
    /// list cannot be read (a sync would lose track of them).
    static func conflictList(_ existing: ConflictStore.Contents, packagePath: String) throws -> ConflictList {
        switch existing {
        case .absent: return ConflictList()
        case .list(let list): return list
        case .unusable(let why):
            throw RemoteError(.localFailure, "cannot sync '\(packagePath)': its conflict versions cannot be read: \(why)")
        }
    }

    /// Both sides changed: the three-way merge of the base version, the package and the
    /// head, written into the package with one save (its new sync record and conflicts
    /// record in the same commit), then pushed as the head's successor.
    static func merge(
        packagePath: String, scan: PackageScan, base: SyncBase?, head: VersionSummary, listed: ConflictList,
        store: RemoteStore, connection: S3Connection, options: RemoteOptions, durability: Durability,
        progress: ProgressManager?, notes: [String]
    ) throws -> SyncResult {
        let local = scan.snapshot
        let baseManifest = try base.map { try store.manifest($0.version, connection) }
        let otherManifest = try store.manifest(head.id, connection)
        guard otherManifest.summary(id: head.id) == head else {
            throw RemoteError(
                .verificationFailed,
                "the HEAD of \(store.location) disagrees with version \(head.shortID)'s manifest: the store holds damaged data")
        }
        let remoteByPath = byPath(otherManifest.entries)
        var pulled = PullResult(version: head)
        let staging = try PullStaging(destination: packagePath)
        defer { staging.unlock() }

        let (merged, appMerged) = try mergeTrees(
            base: baseManifest, local: local, other: otherManifest, remoteByPath: remoteByPath, packagePath: packagePath,
            staging: staging, store: store, options: options, pulled: &pulled)
        let added = conflictVersions(of: merged, base: base, head: head)
        let list = listed.adding(added)
        let (wanted, wholeOnly) = wantedContents(
            merged, conflictVersions: added, remoteByPath: remoteByPath, base: baseManifest)
        var contents = try PullOperation.gatherContents(
            wanted, wholeOnly: wholeOnly, destination: packagePath, current: local, staging: staging, store: store,
            options: options, progress: progress, result: &pulled)
        for (entry, bytes) in appMerged.values { contents.origins[FileKey(entry.hash, entry.size)] = .bytes(bytes) }
        try keepConflictContents(added, contents: contents, local: local, packagePath: packagePath, durability: durability)

        // One save: the merged tree, the new base and the conflicts, in one commit.
        var conflictsRecord: [UInt8]?
        if !added.isEmpty || !PathOrder.sameBytes(String(decoding: list.encoded(), as: UTF8.self), String(decoding: listed.encoded(), as: UTF8.self)) {
            conflictsRecord = list.encoded()
        }
        let statistics = try saveMerged(
            merged.tree, contents: contents, scan: scan, head: head, conflictsRecord: conflictsRecord,
            packagePath: packagePath, store: store, options: options, durability: durability)
        staging.remove()
        pulled.save = statistics

        // The merged tree, pushed on top of the head (a lost race starts the sync over): a
        // version with two parents, the head and the version PKG's changes were based on.
        let push = try PushOperation.run(
            packagePath: packagePath, store: store, options: options, force: false, progress: nil,
            secondParent: base?.version)
        var result = SyncResult(action: .merged, version: push.version, pulled: pulled, pushed: push)
        result.entriesFromRemote = merged.sources.filter { $0 == .other }.count
        result.entriesFromLocal = merged.sources.filter { $0 == .local }.count
        result.newConflicts = added.filter { $0.side != .base }
        result.conflicts = list.versions
        result.notes = notes + statistics.notes + push.notes
        result.notes += appMerged.keys.sorted().map { "'\($0.string)' was changed on both sides: merged by the app" }
        return result
    }

    /// Entries by path (names are bytes).
    static func byPath(_ entries: [RemoteEntry]) -> [RelativePath: RemoteEntry] {
        var byPath: [RelativePath: RemoteEntry] = [:]
        for entry in entries { byPath[RelativePath(trusted: entry.path)] = entry }
        return byPath
    }

    /// The three-way merge, with the files the app merges itself (`options.contentMerge`)
    /// resolved by their merged bytes, saved instead of a conflict. Returns the merge and,
    /// by path, the merged entry and bytes of each file the app merged.
    static func mergeTrees(
        base: VersionManifest?, local: TreeSnapshot, other: VersionManifest, remoteByPath: [RelativePath: RemoteEntry],
        packagePath: String, staging: PullStaging, store: RemoteStore, options: RemoteOptions, pulled: inout PullResult
    ) throws -> (TreeMerge, [RelativePath: (entry: SnapshotEntry, bytes: [UInt8])]) {
        let baseTree = base?.snapshot() ?? TreeSnapshot.empty
        let otherTree = other.snapshot()
        let merged = TreeMerge(base: baseTree, local: local, other: otherTree)
        guard let contentMerge = options.contentMerge else { return (merged, [:]) }
        let appMerged = try mergeContents(
            merged.conflicts.filter(contentMerge.applies), with: contentMerge, packagePath: packagePath,
            other: remoteByPath, base: base, local: local, staging: staging, store: store, options: options,
            pulled: &pulled)
        guard !appMerged.isEmpty else { return (merged, appMerged) }
        let resolved = TreeMerge(base: baseTree, local: local, other: otherTree) { conflict in
            appMerged[conflict.path].map { .use($0.entry) }
        }
        return (resolved, appMerged)
    }

    /// The conflict versions: for each conflict, the side the merged tree does not hold;
    /// and what both sides last shared at each conflicting file or link, kept too, for the
    /// app to merge from or show (`ConflictResolver.base(of:in:)`).
    static func conflictVersions(of merged: TreeMerge, base: SyncBase?, head: VersionSummary) -> [ConflictVersion] {
        let now = SystemClock.realtimeNanoseconds
        var added: [ConflictVersion] = []
        for conflict in merged.conflicts {
            let keptOther = merged.source(of: conflict.path) == .other || conflict.local == nil
            if keptOther {
                added.append(
                    ConflictVersion(
                        path: conflict.path, side: .local, entry: conflict.local, remoteVersion: base?.version.description ?? head.id.description,
                        time: now))
            } else {
                added.append(
                    ConflictVersion(
                        path: conflict.path, side: .other, entry: conflict.other, remoteVersion: head.id.description, time: now))
                for entry in conflict.otherDescendants {
                    added.append(
                        ConflictVersion(
                            path: RelativePath(trusted: entry.path), side: .other, entry: entry,
                            remoteVersion: head.id.description, time: now))
                }
            }
        }
        if let base {
            for conflict in merged.conflicts {
                guard let entry = conflict.base, entry.kind == .regular || entry.kind == .symbolicLink else { continue }
                added.append(
                    ConflictVersion(path: conflict.path, side: .base, entry: entry, remoteVersion: base.version.description, time: now))
            }
        }
        return added
    }

    /// The bytes the package lacks: other's entries the merged tree takes, and the conflict
    /// versions of other and base that are files, which are always whole files (`wholeOnly`:
    /// they are kept as such).
    static func wantedContents(
        _ merged: TreeMerge, conflictVersions added: [ConflictVersion], remoteByPath: [RelativePath: RemoteEntry],
        base: VersionManifest?
    ) -> (wanted: [RemoteEntry], wholeOnly: Set<FileKey>) {
        let baseByPath = byPath(base?.entries ?? [])
        var wanted: [RemoteEntry] = []
        for (index, entry) in merged.tree.entries.enumerated() where merged.sources[index] == .other && entry.kind == .regular {
            if let remote = remoteByPath[RelativePath(trusted: entry.path)] { wanted.append(remote) }
        }
        var wholeOnly = Set<FileKey>()
        for version in added where version.side != .local && version.kind == .file && version.size > 0 {
            if let remote = (version.side == .base ? baseByPath : remoteByPath)[version.path] {
                wanted.append(remote)
                wholeOnly.insert(FileKey(version.hash, version.size))
            }
        }
        return (wanted, wholeOnly)
    }

    /// Keeps the conflict versions' bytes in the package before the save that lists them,
    /// from where the pull gathered them or, for the package's own side, its file.
    static func keepConflictContents(
        _ added: [ConflictVersion], contents: PulledContents, local: TreeSnapshot, packagePath: String,
        durability: Durability
    ) throws {
        var localByContent: [FileKey: RelativePath] = [:]
        for entry in local.entries where entry.kind == .regular {
            localByContent[FileKey(entry.hash, entry.size)] = RelativePath(trusted: entry.path)
        }
        for version in added where version.kind == .file && version.size > 0 {
            let key = FileKey(version.hash, version.size)
            let source: String
            switch contents.origin(key) {
            case .file(let path, _)?, .adopt(let path, _)?: source = path
            default:
                guard let path = localByContent[key] else {
                    throw RemoteError(
                        .localFailure, "internal error: no bytes for the conflict version of '\(version.path.string)'")
                }
                source = PackageLayout.joined(packagePath, path.string)
            }
            try ConflictStore.keepContent(
                from: source, hash: version.hash, size: version.size, packagePath: packagePath, durability: durability)
        }
    }

    /// Saves the merged tree into the package with one commit: the head as its new sync
    /// record and `conflictsRecord` (when it changed) beside it; checks the package then
    /// hashes to the merge's root.
    static func saveMerged(
        _ tree: TreeSnapshot, contents: PulledContents, scan: PackageScan, head: VersionSummary, conflictsRecord: [UInt8]?,
        packagePath: String, store: RemoteStore, options: RemoteOptions, durability: Durability
    ) throws -> SaveStatistics {
        let local = scan.snapshot
        let rootPermissions = try FileSystem.status(packagePath, followSymlinks: true).permissions
        let source = RemoteVersionSource(tree: tree, contents: contents, rootPermissions: rootPermissions)
        var saveOptions = SaveOptions(
            durability: durability, workers: options.workers,
            trustManifest: scan.manifest?.snapshot.rootHash == local.rootHash,
            cancellation: store.cancellation.saveCancellation)
        saveOptions.syncRecord = SyncState(location: store.location, endpoint: store.explicitEndpoint, version: head).encoded()
        saveOptions.conflictsRecord = conflictsRecord
        saveOptions.requiredCurrentRoot = local.rootHash
        let outcome: SaveOutcome
        do {
            outcome = try PackageSaver.save(source, to: packagePath, options: saveOptions)
        } catch is CancellationError {
            throw RemoteError(.cancelled, "cancelled: '\(packagePath)' was not changed")
        } catch let refusal as SaveRefusal where refusal.isTransient {
            throw RemoteError(.localChange, "'\(packagePath)' changed while it was being synced; it was left as it is")
        }
        guard outcome.statistics.rootHash == tree.rootHash else {
            throw RemoteError(
                .verificationFailed,
                "'\(packagePath)' was saved but hashes to \(outcome.statistics.rootHash), not to the merge's root \(tree.rootHash)")
        }
        return outcome.statistics
    }

    /// Runs the app's merge on `conflicts` (files both sides changed that it covers): the
    /// other side's and base's versions fetched whole into the pull's staging, the
    /// package's own read, each at most `ContentMerge.maximumSize`. Returns, by path, the
    /// merged entry and bytes of each file the app merged (nil from the app: left out).
    static func mergeContents(
        _ conflicts: [MergeConflict], with contentMerge: ContentMerge, packagePath: String,
        other: [RelativePath: RemoteEntry], base: VersionManifest?, local: TreeSnapshot, staging: PullStaging,
        store: RemoteStore, options: RemoteOptions, pulled: inout PullResult
    ) throws -> [RelativePath: (entry: SnapshotEntry, bytes: [UInt8])] {
        guard !conflicts.isEmpty else { return [:] }
        var baseByPath: [RelativePath: RemoteEntry] = [:]
        for entry in base?.entries ?? [] where entry.kind == .regular && entry.size <= ContentMerge.maximumSize {
            baseByPath[RelativePath(trusted: entry.path)] = entry
        }
        let inputs = conflicts.flatMap { conflict in [other[conflict.path], baseByPath[conflict.path]].compactMap { $0 } }
        let contents = try PullOperation.gatherContents(
            inputs, wholeOnly: Set(inputs.map { FileKey($0.contentHash, $0.size) }), destination: packagePath,
            current: local, staging: staging, store: store, options: options, progress: nil, result: &pulled)
        func bytes(_ entry: RemoteEntry?) throws -> [UInt8]? {
            guard let entry else { return nil }
            if entry.size == 0 { return [] }
            switch contents.origin(FileKey(entry.contentHash, entry.size)) {
            case .bytes(let bytes)?: return bytes
            case .file(let path, _)?, .adopt(let path, _)?: return try FileSystem.readWholeFile(path, limit: ContentMerge.maximumSize)
            default:
                // Not staged: DEST holds that content at the same path.
                return try FileSystem.readWholeFile(
                    PackageLayout.joined(packagePath, entry.path), limit: ContentMerge.maximumSize)
            }
        }
        var result: [RelativePath: (entry: SnapshotEntry, bytes: [UInt8])] = [:]
        for conflict in conflicts {
            guard let theirs = try bytes(other[conflict.path]) else { continue }
            let mine = try FileSystem.readWholeFile(
                PackageLayout.joined(packagePath, conflict.path.string), limit: ContentMerge.maximumSize)
            guard let merged = try contentMerge.merge(conflict.path, base: try bytes(baseByPath[conflict.path]), local: mine, other: theirs)
            else { continue }
            result[conflict.path] = (ContentMerge.entry(for: merged, resolving: conflict), merged)
        }
        return result
    }
}
