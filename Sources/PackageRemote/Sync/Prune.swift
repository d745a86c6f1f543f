import Glibc
import PackageCore
import Synchronization

/// Which versions a prune keeps (Specs/remote.md, "Retention"): the head always, and every
/// version any rule names.
public struct PrunePolicy: Sendable, Equatable {
    /// Keep the N latest versions along first parents (the head counts); nil: no such rule.
    public var keepLast: Int?
    /// Keep the versions pushed at most this many nanoseconds before the head; nil: no such rule.
    public var keepWithin: Int64?
    /// Keep these versions: ids, unique id prefixes (4 digits or more) or numbers.
    public var keep: [String]

    /// A policy of these rules.
    /// - Parameters:
    ///   - keepLast: the number of latest versions to keep (at least 1), or nil.
    ///   - keepWithin: nanoseconds before the head's time within which versions are kept, or nil.
    ///   - keep: versions kept by name.
    public init(keepLast: Int? = nil, keepWithin: Int64? = nil, keep: [String] = []) {
        self.keepLast = keepLast
        self.keepWithin = keepWithin
        self.keep = keep
    }

    /// True when no rule is given: a prune refuses it rather than keep only the head.
    public var isEmpty: Bool { keepLast == nil && keepWithin == nil && keep.isEmpty }
}

/// What a prune did, or with `dryRun`, would do.
public struct PruneResult: Sendable {
    /// True when nothing was written or deleted (the plan only).
    public var dryRun = false
    /// The versions kept, newest first.
    public var kept: [VersionSummary] = []
    /// The versions dropped now, newest first.
    public var dropped: [VersionSummary] = []
    /// Packs deleted (no kept version used them, or their live blobs were moved).
    public var packsDeleted = 0
    /// Their bytes.
    public var packBytesDeleted: Int64 = 0
    /// Packs less than half live whose live blobs were moved into new packs.
    public var packsRepacked = 0
    /// Bytes of the new packs those live blobs went to.
    public var bytesRewritten: Int64 = 0
    /// New packs written.
    public var packsWritten = 0
    /// Version manifests deleted.
    public var manifestsDeleted = 0
    /// Their bytes.
    public var manifestBytesDeleted: Int64 = 0
    /// Other objects deleted: leftovers older than the grace period (a killed push's or
    /// prune's packs, manifests of pushes that lost their race, old indexes, probes).
    public var otherObjectsDeleted = 0
    /// Their bytes.
    public var otherBytesDeleted: Int64 = 0
    /// Bytes of the remote's objects before, by the store's listing.
    public var storeBytesBefore: Int64 = 0
    /// Bytes after (planned, for a dry run).
    public var storeBytesAfter: Int64 = 0
    /// How many times the prune planned (a push that landed meanwhile makes it start over).
    public var attempts = 0
    /// HTTP requests sent, retries included.
    public var requests = 0
    /// Requests that were attempts after a failure.
    public var retries = 0
    /// Wall-clock duration.
    public var seconds: Double = 0
    /// Things a person should know.
    public var notes: [String] = []

    /// Bytes deleted (or that would be), all objects together, less the bytes rewritten.
    public var bytesFreed: Int64 { storeBytesBefore - storeBytesAfter }
}

/// `prune`: the versions a policy does not keep, and the bytes only they used, deleted
/// without a lock (Specs/remote.md, "Prune").
enum PruneOperation {
    /// A pack less than this fraction live is repacked.
    static let repackThreshold = 0.5
    /// Plans made before giving up on a remote that keeps moving.
    static let maximumAttempts = 5
    /// New packs hold up to this many bytes of blobs, as a push's do.
    static let packSize = 8 << 20
    /// The default grace period: objects no version names are kept this long.
    static let defaultGrace: Int64 = 3600 * 1_000_000_000

    struct Listed {
        var key: String
        var size: Int64
        var modified: Int64?
    }

    static func run(
        store: RemoteStore, policy: PrunePolicy, grace: Int64, dryRun: Bool, progress: ProgressManager?
    ) throws -> PruneResult {
        try validate(policy)
        let clock = Stopwatch()
        let location = store.location
        let connection = store.connection()
        // The start by the store's clock: a marker whose listed time is the start.
        let marker = RemoteLayout.probe(location, token: UInt64.random(in: 1...UInt64.max))
        if !dryRun {
            _ = try connection.put(bucket: location.bucket, key: marker, bytes: Array("pkgtool prune\n".utf8))
        }
        defer {
            if !dryRun {
                // On a connection of its own, which a cancellation does not stop.
                let cleanup = S3Connection(configuration: store.configuration, counters: store.counters, cancellation: nil)
                try? cleanup.delete(bucket: location.bucket, key: marker)
            }
        }
        progress?.withProperties { $0.totalCount = 4 }
        var result = PruneResult()
        result.dryRun = dryRun
        while true {
            result.attempts += 1
            guard let head = try store.readHead(connection) else {
                throw RemoteError(.notARemote, "\(location) is not a pkgtool remote (it has no HEAD object)")
            }
            let listed = try list(store, connection)
            let start = dryRun ? SystemClock.secondsSinceEpoch : listed.first { $0.key == marker }?.modified
            var plan = try Plan(
                store: store, connection: connection, head: head.record, policy: policy, listed: listed, marker: marker,
                youngAfter: start.map { $0 - grace / 1_000_000_000 })
            progress?.complete(count: 1)
            result.kept = plan.kept
            result.dropped = plan.dropped
            result.storeBytesBefore = listed.reduce(0) { $0 + ($1.key == marker ? 0 : $1.size) }
            result.notes = plan.notes
            if dryRun {
                plan.account(into: &result, rewritten: plan.repackLiveBytes)
                result.storeBytesAfter = result.storeBytesBefore - result.packBytesDeleted - result.manifestBytesDeleted
                    - result.otherBytesDeleted + plan.repackLiveBytes
                break
            }
            if try apply(&plan, head: head, marker: marker, store: store, connection: connection, progress: progress, result: &result) {
                break
            }
        }
        result.requests = store.counters.requests
        result.retries = store.counters.retries
        result.seconds = clock.seconds
        return result
    }

    /// Refuses a policy that names no rule, or keeps fewer than one version.
    static func validate(_ policy: PrunePolicy) throws(RemoteError) {
        guard !policy.isEmpty else {
            throw RemoteError(.invalidLocation, "prune needs a policy: --keep-last N, --keep-within DURATION or --keep VERSION")
        }
        if let last = policy.keepLast, last < 1 {
            throw RemoteError(.invalidLocation, "--keep-last must be at least 1 (the head is always kept)")
        }
    }

    /// Carries out `plan` in the order that loses nothing: the live blobs it moves written
    /// first, then the head record that names what goes committed, then the deletions.
    /// Returns false when a push landed before the commit: nothing was deleted, and the
    /// prune plans again.
    static func apply(
        _ plan: inout Plan, head: (record: HeadRecord, etag: String), marker: String, store: RemoteStore,
        connection: S3Connection, progress: ProgressManager?, result: inout PruneResult
    ) throws -> Bool {
        // Write: the live blobs of packs mostly dead into new packs, then the index.
        var index = plan.index
        let written = try repack(plan, store: store, connection: connection, index: &index)
        // A repack that wrote the very blobs of a source again made the same pack (its
        // name is its trailer's SHA-256): that one stays.
        let placedNow = Set(index.locations.values.map(\.pack))
        plan.deletedPacks.removeAll { placedNow.contains($0.id) }
        progress?.complete(count: 1)
        let record = try newRecord(&plan, head: head.record, index: index, store: store, connection: connection)
        if record != head.record {
            guard try commit(record, replacing: head.etag, store: store, connection: connection, attempts: result.attempts)
            else { return false }
        }
        progress?.complete(count: 1)
        try deleteCommitted(plan, record: record, store: store, connection: connection)
        plan.account(into: &result, rewritten: written.bytes)
        result.packsWritten = written.packs
        // What the store holds now, by its listing (one more request).
        result.storeBytesAfter = try list(store, connection).reduce(0) { $0 + ($1.key == marker ? 0 : $1.size) }
        progress?.complete(count: 1)
        return true
    }

    /// The head record this prune commits: the pruned ranges, the packs it deletes, and the
    /// new blob index (stored first, when it holds any place). A prune that drops and moves
    /// nothing leaves the record as it is (no push has to rebase).
    static func newRecord(
        _ plan: inout Plan, head: HeadRecord, index: BlobIndex, store: RemoteStore, connection: S3Connection
    ) throws -> HeadRecord {
        let location = store.location
        var record = head
        record.prunes = head.prunes + 1
        record.pruned = plan.pruned
        record.deleting = plan.deletedPacks.map(\.id)
        record.index = nil
        if !index.isEmpty {
            let bytes = index.encoded()
            let id = SHA256Digest.of(bytes)
            _ = try connection.put(
                bucket: location.bucket, key: RemoteLayout.index(id, location), body: MemoryBody(bytes), payloadHash: id,
                condition: .absent)
            store.cache.storeManifest(id, bytes)
            record.index = id
        }
        // The index this record names is never a leftover (an unchanged one keeps its name).
        if let id = record.index {
            plan.otherDeletions.removeAll { $0.key == RemoteLayout.index(id, location) }
        }
        // Nothing dropped or moved: the record stays as it is (no push has to rebase).
        if plan.deletedPacks.isEmpty && record.pruned == head.pruned && record.index == head.index {
            record.deleting = head.deleting
            if record.index == head.index { record.prunes = head.prunes }
        }
        return record
    }

    /// Commits `record` by compare-and-swap on the head read (`etag`). False when a push
    /// landed meanwhile, which makes the prune start over, up to `maximumAttempts` plans.
    static func commit(
        _ record: HeadRecord, replacing etag: String, store: RemoteStore, connection: S3Connection, attempts: Int
    ) throws -> Bool {
        let location = store.location
        let moved = try connection.put(
            bucket: location.bucket, key: RemoteLayout.head(location), bytes: record.encoded(),
            condition: .matching(etag: etag))
        guard moved == .preconditionFailed else { return true }
        guard attempts < maximumAttempts else {
            throw RemoteError(
                .conflict,
                "\(location) kept moving while pruning (\(maximumAttempts) attempts); nothing was deleted: prune again")
        }
        return false
    }

    /// Deletes what `plan` drops, only while HEAD still says what is being deleted: a store
    /// that ignored the condition may have let a push overwrite the record.
    static func deleteCommitted(_ plan: Plan, record: HeadRecord, store: RemoteStore, connection: S3Connection) throws {
        if !plan.deletedPacks.isEmpty || !plan.otherDeletions.isEmpty || !plan.droppedManifests.isEmpty {
            let now = try store.readHead(connection)
            guard let now, Set(now.record.deleting) == Set(record.deleting), now.record.index == record.index else {
                throw RemoteError(
                    .unsupportedStore,
                    "\(store.configuration.endpoint) did not keep the HEAD this prune wrote to \(store.location); the store "
                        + "or a proxy before it does not honour conditional writes: nothing was deleted")
            }
        }
        try delete(
            plan.deletedPacks.map(\.key) + plan.droppedManifests.map(\.key) + plan.otherDeletions.map(\.key),
            store: store)
    }

    /// The id in an object's name below the prefix (`packs/<id>`), nil when it is not one.
    static func objectID(_ name: String, under directory: String) -> SHA256Digest? {
        SHA256Digest(hex: PathOrder.droppingBytes(directory.utf8.count, from: name))
    }

    /// Every object under the prefix, in listing pages of 1,000.
    static func list(_ store: RemoteStore, _ connection: S3Connection) throws(RemoteError) -> [Listed] {
        var objects: [Listed] = []
        var token: String? = nil
        repeat {
            let page = try connection.list(
                bucket: store.location.bucket, prefix: RemoteLayout.listingPrefix(store.location), continuation: token)
            objects += page.objects.map { Listed(key: $0.key, size: $0.size, modified: $0.modified) }
            token = page.next
        } while token != nil
        return objects
    }

    /// What one attempt keeps, drops, moves and deletes.
    struct Plan {
        var kept: [VersionSummary] = []
        var dropped: [VersionSummary] = []
        var pruned: [ClosedRange<Int>] = []
        /// Live blobs by pack, at their places now.
        var liveByPack: [SHA256Digest: [BlobLocation]] = [:]
        var repackSources: [Listed] = []
        var repackLiveBytes: Int64 = 0
        var deletedPacks: [(key: String, id: SHA256Digest, size: Int64)] = []
        var droppedManifests: [Listed] = []
        var otherDeletions: [Listed] = []
        var index = BlobIndex()
        var notes: [String] = []

        init(
            store: RemoteStore, connection: S3Connection, head: HeadRecord, policy: PrunePolicy, listed: [Listed],
            marker: String, youngAfter: Int64?
        ) throws {
            let chain = try Self.firstParentChain(head, store: store, connection: connection)
            let keptIDs = try choose(from: chain, head: head, policy: policy, store: store, connection: connection)
            let live = try findLiveBlobs(store: store, connection: connection)
            // Versions pruned before whose manifests are still there (a prune killed after its
            // commit) go now too, at any age: the record says they were dropped.
            let rules = ListingRules(
                keptIDs: keptIDs, droppedIDs: Set(dropped.map(\.id) + chain.filter { head.isPruned($0.sequence) }.map(\.id)),
                droppedPacks: Self.packs(of: dropped, store: store, connection: connection),
                committedDeleting: Set(head.deleting), currentIndex: head.index, marker: marker, youngAfter: youngAfter,
                prefixLength: RemoteLayout.listingPrefix(store.location).utf8.count)
            let (listedPacks, currentIndex) = sortListing(listed, by: rules)
            for (pack, _) in liveByPack where !listedPacks.contains(pack) {
                notes.append(
                    "pack \(pack.description.prefix(12)) that a kept version uses is not in the store's listing; it was left as it is")
            }
            makeIndex(live: live, store: store, currentIndex: currentIndex, prefixLength: rules.prefixLength)
        }

        /// The first-parent chain: the record's history, then one header per version, up to
        /// the first version pruned before.
        static func firstParentChain(
            _ head: HeadRecord, store: RemoteStore, connection: S3Connection
        ) throws -> [VersionSummary] {
            var chain = [head.head] + head.history
            while let last = chain.last, let parent = last.parent, !head.isPruned(last.sequence - 1) {
                let summary = try store.summary(parent, connection)
                guard summary.sequence == last.sequence - 1 else {
                    throw RemoteError(
                        .verificationFailed,
                        "version \(summary.shortID) of \(store.location) does not follow version \(last.shortID): the history is damaged")
                }
                chain.append(summary)
            }
            return chain
        }

        /// Sets `kept`, `dropped` and `pruned` from the policy's rules (the head always
        /// kept); returns the ids kept.
        mutating func choose(
            from chain: [VersionSummary], head: HeadRecord, policy: PrunePolicy, store: RemoteStore,
            connection: S3Connection
        ) throws -> Set<SHA256Digest> {
            let live = chain.filter { !head.isPruned($0.sequence) }
            var keptIDs: Set<SHA256Digest> = [head.head.id]
            if let last = policy.keepLast { for version in live.prefix(last) { keptIDs.insert(version.id) } }
            if let within = policy.keepWithin {
                for version in live where version.time >= head.head.time - within { keptIDs.insert(version.id) }
            }
            for reference in policy.keep {
                keptIDs.insert(try LogOperation.resolve(reference, store: store, connection: connection, head: head).id)
            }
            kept = live.filter { keptIDs.contains($0.id) }
            dropped = live.filter { !keptIDs.contains($0.id) }
            // The pruned ranges: the old ones and the dropped numbers, merged.
            let numbers = head.pruned.flatMap { Array($0) } + dropped.map(\.sequence)
            for number in Set(numbers).sorted() {
                if let last = pruned.last, last.upperBound + 1 == number {
                    pruned[pruned.count - 1] = last.lowerBound...number
                } else {
                    pruned.append(number...number)
                }
            }
            return keptIDs
        }

        /// Where each live blob is: the first place a kept version names it.
        struct LiveBlobs {
            var place: [SHA256Digest: BlobLocation] = [:]
            /// Blobs stored twice (content that went and came back, sent again).
            var duplicates = Set<SHA256Digest>()
        }

        /// Live blobs: the kept versions' (each manifest checked against its name, its blobs
        /// placed through the index the record names), into `liveByPack`. A blob stored twice
        /// is kept once: the first place seen; the index sends every reader there.
        mutating func findLiveBlobs(store: RemoteStore, connection: S3Connection) throws -> LiveBlobs {
            var live = LiveBlobs()
            for version in kept {
                for entry in try store.manifest(version.id, connection).entries {
                    for blob in entry.blobs {
                        if let place = live.place[blob.digest] {
                            if place != blob { live.duplicates.insert(blob.digest) }
                            continue
                        }
                        live.place[blob.digest] = blob
                        liveByPack[blob.pack, default: []].append(blob)
                    }
                }
            }
            return live
        }

        /// Packs the dropped versions name: committed versions' packs, deleted at any age.
        static func packs(of dropped: [VersionSummary], store: RemoteStore, connection: S3Connection) -> Set<SHA256Digest> {
            var droppedPacks = Set<SHA256Digest>()
            for version in dropped {
                guard let manifest = try? store.manifest(version.id, connection) else { continue }
                for entry in manifest.entries { for blob in entry.blobs { droppedPacks.insert(blob.pack) } }
            }
            return droppedPacks
        }

        /// What decides the fate of each listed object.
        struct ListingRules {
            var keptIDs: Set<SHA256Digest>
            var droppedIDs: Set<SHA256Digest>
            var droppedPacks: Set<SHA256Digest>
            /// The packs a committed prune listed for deletion.
            var committedDeleting: Set<SHA256Digest>
            /// The index the record names.
            var currentIndex: SHA256Digest?
            /// This prune's own marker, never deleted by it.
            var marker: String
            /// Objects listed as modified before this (seconds) are old; nil: none is.
            var youngAfter: Int64?
            var prefixLength: Int

            /// Whether `object` is older than the grace period: a leftover no version names
            /// may go.
            func isOld(_ object: Listed) -> Bool {
                guard let youngAfter, let modified = object.modified else { return false }
                return modified < youngAfter
            }
        }

        /// Sorts the listing into what goes: dead and mostly dead packs, dropped manifests,
        /// leftovers. Returns the packs listed, and the listed index the record names.
        mutating func sortListing(_ listed: [Listed], by rules: ListingRules) -> (packs: Set<SHA256Digest>, currentIndex: Listed?) {
            var listedPacks = Set<SHA256Digest>()
            var currentIndex: Listed? = nil
            for object in listed {
                let name = PathOrder.droppingBytes(rules.prefixLength, from: object.key)
                if PathOrder.hasBytePrefix(name, RemoteLayout.packsDirectory) {
                    guard let id = objectID(name, under: RemoteLayout.packsDirectory) else { continue }
                    listedPacks.insert(id)
                    sortPack(object, id: id, by: rules)
                } else if PathOrder.hasBytePrefix(name, RemoteLayout.versionsDirectory) {
                    guard let id = objectID(name, under: RemoteLayout.versionsDirectory) else { continue }
                    if rules.keptIDs.contains(id) { continue }
                    if rules.droppedIDs.contains(id) {
                        droppedManifests.append(object)
                    } else if rules.isOld(object) {
                        // A push that lost its race, or a version a killed prune dropped.
                        otherDeletions.append(object)
                    }
                } else if PathOrder.hasBytePrefix(name, RemoteLayout.indexDirectory) {
                    let id = objectID(name, under: RemoteLayout.indexDirectory)
                    // The index the record names goes when this prune replaces it; others are leftovers.
                    if id != nil, id == rules.currentIndex {
                        currentIndex = object
                    } else if rules.isOld(object) {
                        otherDeletions.append(object)
                    }
                } else if PathOrder.hasBytePrefix(name, RemoteLayout.probeName), object.key != rules.marker, rules.isOld(object) {
                    otherDeletions.append(object)
                }
            }
            return (listedPacks, currentIndex)
        }

        /// A listed pack's fate: deleted when dead (named by dropped versions, listed by a
        /// committed prune, or old), repacked when less than `repackThreshold` live.
        mutating func sortPack(_ object: Listed, id: SHA256Digest, by rules: ListingRules) {
            let blobs = liveByPack[id] ?? []
            if blobs.isEmpty {
                if rules.droppedPacks.contains(id) || rules.committedDeleting.contains(id) || rules.isOld(object) {
                    deletedPacks.append((object.key, id, object.size))
                }
                return
            }
            // A live blob's trailer record is live too: a pack all of whose blobs are live is
            // wholly live, however small.
            let liveBytes = blobs.reduce(Int64(PackFormat.trailerFixedSize)) {
                $0 + Int64($1.length) + Int64(PackFormat.trailerRecordSize)
            }
            if Double(liveBytes) < Double(object.size) * repackThreshold {
                repackSources.append(object)
                repackLiveBytes += liveBytes
                deletedPacks.append((object.key, id, object.size))
            }
        }

        /// The new index: the blobs the old one placed and kept versions still use, unless
        /// their pack is repacked now (they move again); the old index object goes when
        /// this one differs.
        mutating func makeIndex(live: LiveBlobs, store: RemoteStore, currentIndex: Listed?, prefixLength: Int) {
            let repacked = Set(
                repackSources.compactMap {
                    objectID(PathOrder.droppingBytes(prefixLength, from: $0.key), under: RemoteLayout.packsDirectory)
                })
            for (digest, place) in store.blobIndex.locations where live.place[digest] == place && !repacked.contains(place.pack) {
                index.locations[digest] = place
            }
            for digest in live.duplicates {
                if let place = live.place[digest], !repacked.contains(place.pack) { index.locations[digest] = place }
            }
            if let currentIndex, !repacked.isEmpty || index != store.blobIndex { otherDeletions.append(currentIndex) }
        }

        /// The counts of what this plan deletes, into `result`.
        func account(into result: inout PruneResult, rewritten: Int64) {
            result.packsDeleted = deletedPacks.count
            result.packBytesDeleted = deletedPacks.reduce(0) { $0 + $1.size }
            result.packsRepacked = repackSources.count
            result.bytesRewritten = rewritten
            result.manifestsDeleted = droppedManifests.count
            result.manifestBytesDeleted = droppedManifests.reduce(0) { $0 + $1.size }
            result.otherObjectsDeleted = otherDeletions.count
            result.otherBytesDeleted = otherDeletions.reduce(0) { $0 + $1.size }
        }
    }

    /// Moves the live blobs of the plan's mostly dead packs into new packs of up to 8 MiB
    /// (each blob checked against its SHA-256 as it is fetched), adding their places to `index`.
    /// - Returns: new packs written and their bytes.
    static func repack(_ plan: Plan, store: RemoteStore, connection: S3Connection, index: inout BlobIndex) throws
        -> (packs: Int, bytes: Int64)
    {
        let location = store.location
        let prefixLength = RemoteLayout.listingPrefix(location).utf8.count
        var pieces: [(digest: SHA256Digest, bytes: [UInt8])] = []
        var size = 0
        var written = (packs: 0, bytes: Int64(0))
        func seal() throws {
            guard !pieces.isEmpty else { return }
            let trailer = PackFormat.trailer(pieces.map { ($0.digest, UInt32($0.bytes.count)) })
            let id = SHA256Digest.of(trailer)
            var body: [UInt8] = []
            body.reserveCapacity(size + trailer.count)
            var offset: UInt32 = 0
            let name = PackName(id)
            for piece in pieces {
                index.locations[piece.digest] = BlobLocation(
                    digest: piece.digest, packName: name, offset: offset, length: UInt32(piece.bytes.count))
                offset += UInt32(piece.bytes.count)
                body += piece.bytes
            }
            body += trailer
            _ = try connection.put(
                bucket: location.bucket, key: RemoteLayout.pack(id, location), body: MemoryBody(body),
                payloadHash: SHA256Digest.of(body), condition: .absent)
            written.packs += 1
            written.bytes += Int64(body.count)
            pieces = []
            size = 0
        }
        for source in plan.repackSources {
            guard
                let pack = objectID(PathOrder.droppingBytes(prefixLength, from: source.key), under: RemoteLayout.packsDirectory)
            else { continue }
            for blob in (plan.liveByPack[pack] ?? []).sorted(by: { $0.offset < $1.offset }) {
                let sink = MemorySink(limit: Int(blob.length))
                let range = Int64(blob.offset)..<(Int64(blob.offset) + Int64(blob.length))
                guard try connection.get(bucket: location.bucket, key: source.key, range: range, into: sink) != nil else {
                    throw RemoteError(
                        .verificationFailed, "object \(source.key) that a kept version uses is missing from the store; nothing was deleted")
                }
                guard SHA256Digest.of(sink.bytes) == blob.digest else {
                    throw RemoteError(
                        .verificationFailed,
                        "object s3://\(location.bucket)/\(source.key) is damaged: the blob at offset \(blob.offset) does not match its SHA-256; nothing was deleted")
                }
                if size + sink.bytes.count > packSize { try seal() }
                pieces.append((blob.digest, sink.bytes))
                size += sink.bytes.count
            }
        }
        try seal()
        return written
    }

    /// Deletes `keys`, `--transfers` at a time.
    static func delete(_ keys: [String], store: RemoteStore) throws {
        guard !keys.isEmpty else { return }
        let workers = store.workers(store.configuration.transport.concurrency)
        let bucket = store.location.bucket
        for key in keys {
            workers.submit { connection in try connection.delete(bucket: bucket, key: key) }
        }
        try workers.finish()
    }

    /// A push's new entries rebased onto a record a prune wrote since the push read `HEAD`:
    /// every blob in a pack the prune deletes takes the place its index gives (the prune
    /// moved it there); one the index does not hold stops the push.
    static func rebase(
        _ entries: [RemoteEntry], store: RemoteStore, packagePath: String, prunesSinceRead: Int, adoptedPacks: Bool
    ) throws(RemoteError) -> [RemoteEntry] {
        // Packs of an interrupted push that a prune before the last one deleted are not
        // listed anywhere now: such a push starts over rather than name one.
        if prunesSinceRead > 1 && adoptedPacks {
            throw RemoteError(
                .conflict,
                "the remote was pruned while pushing: \(store.location) was pruned \(prunesSinceRead) times since this push "
                    + "began; nothing was lost: push '\(packagePath)' again")
        }
        let index = store.blobIndex
        var entries = entries
        for position in entries.indices {
            // Every blob a prune moved (or kept once of two copies) is where the index says.
            var blobs = entries[position].blobs.map(index.place)
            for (number, blob) in blobs.enumerated() where store.isDeleting(blob.pack) {
                guard let moved = index.locations[blob.digest] else {
                    store.cache.dropPending(named: [blob.pack])
                    throw RemoteError(
                        .conflict,
                        "the remote was pruned while pushing: \(store.location) deleted pack \(blob.pack.description.prefix(12)) "
                            + "this push used; nothing was lost: push '\(packagePath)' again")
                }
                blobs[number] = moved
            }
            entries[position].blobs = blobs[...]
        }
        return entries
    }

    /// Runs a pull, and runs it again (at most `maximumAttempts` times) when it failed on an
    /// object gone while the head record changed meanwhile: a prune moved its blobs.
    static func pullingThroughPrunes(
        location: RemoteLocation, options: RemoteOptions, _ pull: (RemoteStore) throws -> PullResult
    ) throws -> PullResult {
        var attempt = 0
        while true {
            attempt += 1
            let store = RemoteStore(location: location, options: options)
            do {
                return try pull(store)
            } catch let error as RemoteError where error.kind == .verificationFailed && attempt < maximumAttempts {
                guard let first = store.firstHeadETag,
                    let now = try? store.connection().getObject(
                        bucket: location.bucket, key: RemoteLayout.head(location), limit: 4 << 20),
                    now.etag != first
                else { throw error }
            }
        }
    }
}
