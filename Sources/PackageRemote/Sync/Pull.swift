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
    /// Blobs and bytes fetched from the remote, and the bytes of the GETs (gaps included).
    public var blobsDownloaded = 0
    public var bytesDownloaded: Int64 = 0
    /// Blobs taken from DEST's own files instead (the unchanged pieces of a changed file),
    /// and whole contents copied from another path of DEST.
    public var blobsFromDestination = 0
    public var contentsCopiedFromDestination = 0
    /// Blobs an interrupted pull had already written and checked.
    public var blobsResumed = 0
    public var requests = 0
    public var retries = 0
    /// What the save engine did.
    public var save: SaveStatistics?
    /// Things a person should know (DEST's recovery, the engine's notes).
    public var notes: [String] = []
    public var seconds: Double = 0
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
        let clock = Clock()
        let destination = PushOperation.trimmed(destination)
        let connection = store.connection()
        let head = try store.requireHead(connection)
        let target =
            try reference.map { try LogOperation.resolve($0, store: store, connection: connection, head: head.record) }
            ?? head.record.head
        let manifest = try store.manifest(target.id, connection)
        guard manifest.summary(id: target.id) == target else {
            throw RemoteError(
                .verificationFailed,
                "the HEAD of \(store.location) disagrees with version \(target.shortID)'s manifest: the store holds damaged data")
        }
        var result = PullResult(version: target)

        // DEST as it is: its tree, and whether it holds changes never pushed.
        let current: TreeSnapshot?
        var rootPermissions: UInt32 = 0o755
        var manifestVouches = false
        var warnings: [String] = []
        if let status = try FileSystem.statusIfExists(destination) {
            let followed = status.kind == .symbolicLink ? try FileSystem.status(destination, followSymlinks: true) : status
            guard followed.kind == .directory else {
                throw RemoteError(.localFailure, "cannot pull into '\(destination)': it is a \(followed.kind), not a package directory")
            }
            let scan = try PackageAccess.reading(destination, warn: { warnings.append($0) }) {
                try PackageScan.scan(destination, workers: options.workers)
            }
            current = scan.snapshot
            rootPermissions = followed.permissions
            // The engine may trust DEST's manifest only when the scan just found DEST as it says.
            manifestVouches = scan.manifest?.snapshot.rootHash == scan.snapshot.rootHash
        } else {
            current = nil
        }
        result.notes = warnings
        let realPath = { PackagePaths.realPath(destination) ?? destination }
        if let current {
            if let record = store.cache.syncRecord(forPackage: realPath()), record.rootHash != current.rootHash, !force,
                current.rootHash != target.rootHash
            {
                throw RemoteError(
                    .unpushedChanges,
                    "'\(destination)' has changes not pushed to \(store.location) since version "
                        + "\(record.version.description.prefix(12)); push them first, or pull --force to discard them")
            }
            if current.rootHash == target.rootHash {
                try store.cache.storeSyncRecord(
                    LocalCache.SyncRecord(version: target.id, rootHash: target.rootHash), forPackage: realPath())
                result.unchanged = true
                result.requests = store.counters.requests
                result.seconds = clock.seconds
                return result
            }
        }

        // The contents DEST lacks at their paths, each assembled once.
        var localByContent: [FileKey: String] = [:]
        var currentByPath: [String: SnapshotEntry] = [:]
        for entry in current?.entries ?? [] where entry.kind == .regular {
            localByContent[FileKey(entry.hash, entry.size)] = entry.path
            currentByPath[entry.path] = entry
        }
        var needed: [FileKey: RemoteEntry] = [:]
        var neededOrder: [FileKey] = []
        var pieceSources: [String] = []  // DEST files whose unchanged pieces may serve
        for entry in manifest.entries where entry.kind == .regular && entry.size > 0 {
            let key = FileKey(entry.contentHash, entry.size)
            if let old = currentByPath[entry.path], old.hash == entry.contentHash, old.size == entry.size { continue }
            if needed[key] == nil {
                needed[key] = entry
                neededOrder.append(key)
            }
            if let old = currentByPath[entry.path], old.size > options.chunking.wholeFileLimit, entry.size > options.chunking.wholeFileLimit {
                pieceSources.append(old.path)
            }
        }

        let staging = try PullStaging(destination: destination)
        staging.removeUnneeded(Set(neededOrder.map(PullStaging.name)))
        let buffer = ChunkBuffer(size: max(ChunkBuffer.defaultSize, Int(options.chunking.maximumPiece)))
        let totalBytes = neededOrder.reduce(Int64(0)) { $0 + $1.size }
        progress?.withProperties {
            $0.totalCount = BlobUploader.units(totalBytes) + neededOrder.count + 2
            $0.totalByteCount = UInt64(totalBytes)
            $0.totalFileCount = neededOrder.count
        }

        // Plan every blob: already staged, copied from DEST, or fetched.
        var needs: [SHA256Digest: BlobNeed] = [:]
        var pending: [FileKey] = []
        for key in neededOrder {
            if staging.isReady(key, buffer: buffer) {
                progress?.complete(count: BlobUploader.units(key.size))
                continue
            }
            pending.append(key)
            if let path = localByContent[key] {
                try staging.preparePartial(key)
                try copyWhole(from: PackageLayout.joined(destination, path), key: key, staging: staging, buffer: buffer)
                result.contentsCopiedFromDestination += 1
                progress?.complete(count: BlobUploader.units(key.size))
                continue
            }
            try staging.preparePartial(key)
            var offset: Int64 = 0
            for blob in needed[key]!.blobs {
                defer { offset += Int64(blob.length) }
                if staging.done.contains(PullStaging.JournalRecord(content: key, offset: offset, digest: blob.digest)) {
                    result.blobsResumed += 1
                    continue
                }
                needs[blob.digest, default: BlobNeed(location: blob, destinations: [])].destinations.append((key, offset))
            }
        }

        // Pieces DEST already holds (a media file changed in a few places).
        if !needs.isEmpty && !pieceSources.isEmpty {
            result.blobsFromDestination = try copyLocalPieces(
                pieceSources, destination: destination, needs: &needs, staging: staging, options: options, buffer: buffer)
        }

        // The rest from the store, in ranges of packs, in parallel.
        if !needs.isEmpty {
            let ranges = plan(Array(needs.values))
            let workers = store.workers(store.configuration.transport.concurrency)
            let downloaded = Mutex((blobs: 0, bytes: Int64(0)))
            for range in ranges {
                let location = store.location
                workers.submit { connection in
                    let sink = PackRangeSink(range: range, staging: staging, location: location) { length in
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
                    downloaded.withLock { $0.bytes += range.end - range.start }
                }
            }
            try workers.finish()
            (result.blobsDownloaded, result.bytesDownloaded) = downloaded.withLock { ($0.blobs, $0.bytes) }
        }

        // Every content checked whole against its XXH3, then handed to the save engine.
        for key in pending {
            try staging.finish(key, buffer: buffer)
            progress?.complete(count: 1)
        }
        result.contentsAssembled = pending.count
        var staged: [FileKey: (path: String, status: FileStatus)] = [:]
        for key in neededOrder {
            let path = staging.readyPath(key)
            staged[key] = (path, try FileSystem.status(path))
        }
        let source = RemoteVersionSource(
            manifest, staged: staged, destination: destination, current: current, rootPermissions: rootPermissions)
        // A manifest that does not describe DEST as scanned (a file edited behind pkgtool's
        // back) is not trusted: the engine then checks DEST itself.
        let outcome = try PackageSaver.save(
            source, to: destination,
            options: SaveOptions(durability: durability, workers: options.workers, trustManifest: manifestVouches),
            progress: progress?.subprogress(assigningCount: 1))
        let statistics = outcome.statistics
        result.notes += statistics.notes
        guard statistics.rootHash == target.rootHash else {
            throw RemoteError(
                .verificationFailed,
                "'\(destination)' was saved but hashes to \(statistics.rootHash), not to version \(target.shortID)'s root \(target.rootHash)")
        }
        try store.cache.storeSyncRecord(
            LocalCache.SyncRecord(version: target.id, rootHash: target.rootHash), forPackage: realPath())
        staging.remove()
        progress?.complete(count: 1)
        result.save = statistics
        result.requests = store.counters.requests
        result.retries = store.counters.retries
        result.seconds = clock.seconds
        return result
    }

    /// Groups blobs by pack and merges neighbours into ranges (gaps up to `mergeGap`).
    static func plan(_ needs: [BlobNeed]) -> [PackRange] {
        var byPack: [SHA256Digest: [BlobNeed]] = [:]
        for need in needs { byPack[need.location.pack, default: []].append(need) }
        var ranges: [PackRange] = []
        for (pack, blobs) in byPack.sorted(by: { $0.key < $1.key }) {
            let sorted = blobs.sorted { $0.location.offset < $1.location.offset }
            var current: PackRange?
            for blob in sorted {
                let start = Int64(blob.location.offset)
                let end = start + Int64(blob.location.length)
                if var range = current, start >= range.end, start - range.end <= mergeGap, end - range.start <= maximumRange {
                    range.end = end
                    range.blobs.append(blob)
                    current = range
                } else {
                    if let range = current { ranges.append(range) }
                    current = PackRange(pack: pack, start: start, end: end, blobs: [blob])
                }
            }
            if let range = current { ranges.append(range) }
        }
        // Large ranges first: the transfers finish together.
        return ranges.sorted { $0.end - $0.start > $1.end - $1.start }
    }

    /// Copies a whole content DEST holds at another path.
    static func copyWhole(from path: String, key: FileKey, staging: PullStaging, buffer: ChunkBuffer) throws {
        let source = try FileDescriptor.open(path, options: [.noFollow])
        let target = try staging.openPartial(key)
        try FileCopy.copyRange(
            from: source.rawValue, path: path, at: 0, to: target.rawValue, path: staging.readyPath(key), at: 0,
            length: key.size, buffer: buffer)
    }

    /// Cuts DEST's files at `paths` into pieces as a push would, and copies every piece a
    /// needed blob names (checked against its SHA-256) into the staging area.
    /// - Returns: the blobs served this way (removed from `needs`).
    static func copyLocalPieces(
        _ paths: [String], destination: String, needs: inout [SHA256Digest: BlobNeed], staging: PullStaging,
        options: RemoteOptions, buffer: ChunkBuffer
    ) throws -> Int {
        let hasher = SHA256Hasher()
        var served = 0
        for path in paths {
            let full = PackageLayout.joined(destination, path)
            guard let source = try? FileDescriptor.open(full, options: [.noFollow]) else { continue }
            let size = try source.status().size
            for piece in try options.chunking.pieces(of: source, size: size) {
                let length = Int(piece.count)
                let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<length])
                guard try source.readFully(into: bytes, at: piece.lowerBound) == length else { break }
                hasher.reset()
                hasher.update(UnsafeRawBufferPointer(bytes))
                let digest = hasher.finish()
                guard let need = needs[digest], need.location.length == UInt32(length) else { continue }
                for destination in need.destinations {
                    let target = try staging.openPartial(destination.content)
                    try target.write(UnsafeRawBufferPointer(bytes), at: destination.offset)
                    staging.recordDone(
                        PullStaging.JournalRecord(content: destination.content, offset: destination.offset, digest: digest))
                }
                needs[digest] = nil
                served += 1
            }
        }
        return served
    }
}
