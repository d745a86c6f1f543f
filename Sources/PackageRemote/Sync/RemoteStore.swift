import PackageCore
import Synchronization

/// One remote as a push, pull or log sees it: where it is, how to reach it, what this
/// machine caches about it, and the reads every operation starts with.
final class RemoteStore: Sendable {
    let location: RemoteLocation
    let configuration: S3Configuration
    let counters = TransferCounters()
    let cancellation: TransferCancellation
    let cache: LocalCache
    /// The endpoint when given explicitly (`RemoteOptions.explicitEndpoint`).
    let explicitEndpoint: String?
    /// Manifests larger than this are refused (about 16 million entries).
    static let manifestLimit = 1 << 30
    /// What the last head record read says a prune did: where blobs moved (applied to every
    /// manifest read after it), the packs being deleted, and the ETag of the first record
    /// read (a pull that finds a pack gone starts over when the record changed since).
    private let pruneState = Mutex(
        (
            index: BlobIndex(), deleting: Set<SHA256Digest>(), firstETag: String?.none,
            pruned: [SHA256Digest: Int](), anyPruned: false
        ))

    init(location: RemoteLocation, options: RemoteOptions) {
        self.location = location
        configuration = options.configuration
        cancellation = options.cancellation ?? TransferCancellation()
        explicitEndpoint = options.explicitEndpoint
        cache = LocalCache(root: options.cacheDirectory, endpoint: options.configuration.endpoint, location: location)
    }

    /// A connection for the calling thread.
    func connection() -> S3Connection {
        S3Connection(configuration: configuration, counters: counters, cancellation: cancellation)
    }

    /// Transfer threads for this store, cancelled with it; `queueLimit` bounds the jobs
    /// waiting (`TransferWorkers.init`).
    func workers(_ count: Int, queueLimit: Int? = nil) -> TransferWorkers {
        TransferWorkers(
            count: count, configuration: configuration, counters: counters, cancellation: cancellation,
            queueLimit: queueLimit)
    }

    /// The head record and its ETag; nil when the prefix has no HEAD (no remote yet).
    /// - Throws: `notARemote` when HEAD is another program's object.
    func readHead(_ connection: S3Connection) throws(RemoteError) -> (record: HeadRecord, etag: String)? {
        guard
            let (bytes, etag) = try connection.getObject(
                bucket: location.bucket, key: RemoteLayout.head(location), limit: 4 << 20)
        else { return nil }
        guard let record = try HeadRecord.decode(bytes, location: location) else {
            throw RemoteError(.notARemote, "\(location) is not a pkgtool remote: its HEAD object is not pkgtool's")
        }
        try adopt(record, connection)
        pruneState.withLock { if $0.firstETag == nil { $0.firstETag = etag ?? "" } }
        return (record, etag ?? "")
    }

    /// Takes what `record` says a prune did: its blob index (one GET, or the cache) and
    /// the packs it deletes. Manifests read afterwards place their blobs through the index.
    func adopt(_ record: HeadRecord, _ connection: S3Connection) throws(RemoteError) {
        let index = try record.index.map { (id) throws(RemoteError) in try blobIndex(id, connection) } ?? BlobIndex()
        var pruned: [SHA256Digest: Int] = [:]
        for version in [record.head] + record.history where record.isPruned(version.sequence) {
            pruned[version.id] = version.sequence
        }
        pruneState.withLock {
            $0.index = index
            $0.deleting = Set(record.deleting)
            $0.pruned = pruned
            $0.anyPruned = !record.pruned.isEmpty
        }
    }

    /// The ETag of the first head record this store read.
    var firstHeadETag: String? { pruneState.withLock { $0.firstETag } }

    /// Whether the last record read says a prune deletes pack `id` (a push must not adopt it).
    func isDeleting(_ id: SHA256Digest) -> Bool { pruneState.withLock { $0.deleting.contains(id) } }

    /// The blob index the last record read names (empty when none).
    var blobIndex: BlobIndex { pruneState.withLock { $0.index } }

    /// The blob index `id`: from the cache (which keeps objects by their SHA-256), or
    /// fetched and checked against its name.
    func blobIndex(_ id: SHA256Digest, _ connection: S3Connection) throws(RemoteError) -> BlobIndex {
        if let bytes = cache.manifest(id), let index = try? BlobIndex.decode(bytes, id: id) { return index }
        guard
            let (bytes, _) = try connection.getObject(
                bucket: location.bucket, key: RemoteLayout.index(id, location), limit: BlobIndex.limit)
        else {
            throw RemoteError(
                .verificationFailed, "the blob index \(id.description.prefix(12)) of \(location) is missing from the store")
        }
        guard SHA256Digest.of(bytes) == id else {
            throw RemoteError(
                .verificationFailed,
                "the blob index \(id.description.prefix(12)) of \(location) does not match its SHA-256: the store holds damaged data")
        }
        let index = try BlobIndex.decode(bytes, id: id)
        cache.storeManifest(id, bytes)
        return index
    }

    /// `manifest` with every blob at its place now (through the blob index).
    private func placed(_ manifest: VersionManifest) -> VersionManifest {
        let index = blobIndex
        guard !index.isEmpty else { return manifest }
        var manifest = manifest
        for position in manifest.entries.indices where !manifest.entries[position].blobs.isEmpty {
            manifest.entries[position].blobs = ArraySlice(manifest.entries[position].blobs.map(index.place))
        }
        return manifest
    }

    /// The head record, or the refusal a pull, log or diff gives when there is none.
    func requireHead(_ connection: S3Connection) throws(RemoteError) -> (record: HeadRecord, etag: String) {
        guard let head = try readHead(connection) else {
            throw RemoteError(.notARemote, "\(location) is not a pkgtool remote (it has no HEAD object)")
        }
        return head
    }

    /// The manifest of version `id`: from the cache, or fetched and checked against its name.
    /// - Complexity: one GET of the manifest when not cached (about 65 bytes per entry).
    func manifest(_ id: SHA256Digest, _ connection: S3Connection) throws(RemoteError) -> VersionManifest {
        try decodedManifest(id, connection) { bytes throws(RemoteError) in
            placed(try VersionManifest.decode(bytes, id: id))
        }
    }

    /// The tree version `id` describes, decoded from its manifest (cached or fetched, and
    /// checked as `manifest` checks it) without keeping its blobs: what a pull compares.
    func tree(_ id: SHA256Digest, _ connection: S3Connection) throws(RemoteError) -> TreeSnapshot {
        let (summary, collector) = try streamTree(id, connection, into: TreeCollector.init)
        return collector.tree(rootHash: summary.rootHash)
    }

    /// The tree of version `id` handed entry by entry to a sink that `makeSink` makes (a
    /// new one for each try: a cached copy that does not decode is fetched again), checked
    /// as `manifest` checks it; the sink may act on what it was handed once this returns.
    /// The manifest is decoded from the cache's file a piece at a time, never held whole
    /// (at a million files it is 65 MB): fetched into the cache first when it is not there;
    /// decoded from memory only when the cache cannot keep it. `files`, when given, is handed
    /// each regular file with its blobs as the manifest stores them (`BlobIndex.place` gives
    /// where a prune moved them).
    func streamTree<Sink: TreeEntrySink>(
        _ id: SHA256Digest, _ connection: S3Connection, into makeSink: () -> Sink,
        files: VersionManifest.FileHandoff<Sink>? = nil
    ) throws(RemoteError) -> (summary: VersionSummary, sink: Sink) {
        if let path = cache.manifestPath(id) {
            var sink = makeSink()
            if let summary = try? VersionManifest.streamTree(file: path, id: id, into: &sink, files: files) {
                return (summary, sink)
            }
        }
        var bytes = try fetchedManifest(id, connection)
        cache.storeManifest(id, bytes)
        if let path = cache.manifestPath(id) {
            bytes = []
            var sink = makeSink()
            do {
                return (try VersionManifest.streamTree(file: path, id: id, into: &sink, files: files), sink)
            } catch let refusal as RemoteError {
                throw refusal  // the version itself is damaged: no second fetch would mend it
            } catch {
                bytes = try fetchedManifest(id, connection)  // the cached copy went or cannot be read
            }
        }
        var sink = makeSink()
        return (try VersionManifest.streamTree(bytes, id: id, into: &sink, files: files), sink)
    }

    /// Version `id`'s manifest bytes decoded by `decode`: the cached copy when it decodes,
    /// else fetched, checked against its name, decoded, and then cached.
    private func decodedManifest<Decoded>(
        _ id: SHA256Digest, _ connection: S3Connection, _ decode: ([UInt8]) throws(RemoteError) -> Decoded
    ) throws(RemoteError) -> Decoded {
        if let bytes = cache.manifest(id), let decoded = try? decode(bytes) { return decoded }
        let bytes = try fetchedManifest(id, connection)
        let decoded = try decode(bytes)
        cache.storeManifest(id, bytes)
        return decoded
    }

    /// Version `id`'s manifest fetched from the store and checked against its name.
    private func fetchedManifest(_ id: SHA256Digest, _ connection: S3Connection) throws(RemoteError) -> [UInt8] {
        guard
            let (bytes, _) = try connection.getObject(
                bucket: location.bucket, key: RemoteLayout.version(id, location), limit: Self.manifestLimit)
        else {
            let (number, anyPruned) = pruneState.withLock { ($0.pruned[id], $0.anyPruned) }
            if let number {
                throw RemoteError(.verificationFailed, "version \(number) (\(id.description.prefix(12))) of \(location) was pruned")
            }
            throw RemoteError(
                .verificationFailed,
                "version \(id.description.prefix(12)) of \(location) is missing from the store"
                    + (anyPruned ? " (it may be one of the versions a prune dropped: 'pkgtool log' lists them)" : ""))
        }
        guard SHA256Digest.of(bytes) == id else {
            throw RemoteError(
                .verificationFailed,
                "version \(id.description.prefix(12)) of \(location) does not match its SHA-256: the store holds damaged data")
        }
        return bytes
    }

    /// The summary of version `id` from its manifest's header alone (one ranged GET; a
    /// second one of 32 bytes for a merge's second parent), for `log` past the head
    /// record's history. Not checked against the id: `pull` checks.
    /// The summary of `version`'s parent, read from the store and checked to be the version
    /// just before it (a store's history is not trusted to be a chain).
    func parentSummary(of version: VersionSummary, _ connection: S3Connection) throws(RemoteError) -> VersionSummary? {
        guard let parent = version.parent else { return nil }
        let older = try summary(parent, connection)
        guard older.sequence == version.sequence - 1 else {
            throw RemoteError(
                .verificationFailed,
                "version \(older.shortID) of \(location) does not follow version \(version.shortID): the history is damaged")
        }
        return older
    }

    func summary(_ id: SHA256Digest, _ connection: S3Connection) throws(RemoteError) -> VersionSummary {
        if let bytes = cache.manifest(id), let header = try? VersionManifest.decodeHeader(bytes, id: id) {
            return header.summary
        }
        var bytes = try headerBytes(id, 0..<VersionManifest.headerSize, connection)
        let length = VersionManifest.headerLength(startingWith: bytes)
        if length > bytes.count { bytes += try headerBytes(id, bytes.count..<length, connection) }
        return try VersionManifest.decodeHeader(bytes, id: id).summary
    }

    /// The bytes `range` of version `id`'s manifest, in one ranged GET.
    private func headerBytes(_ id: SHA256Digest, _ range: Range<Int>, _ connection: S3Connection) throws(RemoteError)
        -> [UInt8]
    {
        let sink = MemorySink(limit: range.count)
        guard
            try connection.get(
                bucket: location.bucket, key: RemoteLayout.version(id, location),
                range: Int64(range.lowerBound)..<Int64(range.upperBound), into: sink) != nil
        else {
            throw RemoteError(
                .verificationFailed, "version \(id.description.prefix(12)) of \(location) is missing from the store")
        }
        return sink.bytes
    }
}
