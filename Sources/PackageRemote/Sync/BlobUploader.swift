import Dispatch
import Glibc
import PackageCore
import Synchronization

/// The sending half of a push: reads the files the remote lacks, cuts them into blobs,
/// plans packs of the blobs the remote does not hold yet, and uploads each pack as soon as
/// it is planned, in parallel.
///
/// Files are read twice: once here, to name each blob (SHA-256) and to check the whole file
/// against the content hash the scan found (a file edited during the push is refused, not
/// sent half old, half new), and once by the upload, which streams each pack from the files
/// and checks every blob again on the way. Memory is one chunk buffer per reader thread,
/// libcurl's buffers and the lists of blobs of the packs waiting for a transfer thread,
/// whatever the pack size, chunk size or file sizes, plus about 70 bytes a blob for where
/// it is (`run`); the second read usually comes from the page cache.
final class BlobUploader: Sendable {
    /// The files to send: entries of a scan, by index (ascending), with the path, size,
    /// content hash and chunk list the scan found. Nothing is copied per file.
    struct Work: Sendable {
        var snapshot: TreeSnapshot
        var indices: [Int32]

        var count: Int { indices.count }
        subscript(position: Int) -> SnapshotEntry { snapshot.entries[Int(indices[position])] }
    }

    /// Each sent file's blobs, in the order of `Work`: the blobs of file `k` are
    /// `blobs[starts[k]..<starts[k + 1]]`, slices of one array rather than an array a file.
    struct Sent: Sendable {
        var blobs: [BlobLocation] = []
        var starts: [Int32] = [0]

        /// The blobs of the `position`th file sent.
        subscript(position: Int) -> ArraySlice<BlobLocation> {
            blobs[Int(starts[position])..<Int(starts[position + 1])]
        }
    }

    /// A blob of a pack this push plans: its digest, the pack's serial, its offset and length.
    struct Planned: Sendable {
        var digest: SHA256Digest
        var serial: UInt32
        var offset: UInt32
        var length: UInt32
    }

    /// Every blob named so far, held by the remote or planned into a pack: a reference `r`
    /// is `stored[r]` below `stored.count`, else `planned[r - stored.count]`. Looked up by
    /// the digest's first 64 bits (12 bytes a slot, not the 48 of a digest-keyed table); a
    /// blob whose first bits another blob has already is simply not found (packed again, a
    /// harmless duplicate), never taken for the other.
    struct Blobs {
        var index: [UInt64: UInt32] = [:]
        var planned: [Planned] = []

        func digest(of reference: UInt32, stored: KnownBlobs) -> SHA256Digest {
            Int(reference) < stored.count ? stored[Int(reference)].digest : planned[Int(reference) - stored.count].digest
        }
    }

    /// Each file's blobs as references into `Blobs`, in the order each file was finished:
    /// file `k`'s are `references[spans[k].start...]`, `spans[k].count` of them.
    struct FileBlobs {
        var references: [UInt32] = []
        var spans: [(start: UInt32, count: UInt32)] = []
    }

    struct Statistics: Sendable {
        var filesRead = 0
        var bytesRead: Int64 = 0
        var blobsUploaded = 0
        var packsUploaded = 0
        var bytesUploaded: Int64 = 0
    }

    private let store: RemoteStore
    private let options: RemoteOptions
    private let packagePath: String
    /// The blobs the remote held when the push began.
    private let stored: KnownBlobs
    private let blobs: Mutex<Blobs>
    private let packNames = Mutex<[Int: SHA256Digest]>([:])
    private let results = Mutex(FileBlobs())
    private let statistics = Mutex(Statistics())
    private let nextFile = Atomic<Int>(0)
    private let nextSerial = Atomic<Int>(0)
    private let progress: ProgressManager?

    /// - Parameter known: the blobs the remote holds (the parent version's, the pending
    ///   packs'); a blob listed twice is found once.
    init(
        store: RemoteStore, options: RemoteOptions, packagePath: String, known stored: KnownBlobs,
        progress: ProgressManager?
    ) {
        self.store = store
        self.options = options
        self.packagePath = packagePath
        var table = Blobs()
        table.index.reserveCapacity(stored.count)
        for reference in 0..<stored.count {
            let key = stored[reference].digest.words.0
            if table.index[key] == nil { table.index[key] = UInt32(reference) }
        }
        self.stored = stored
        self.blobs = Mutex(table)
        self.progress = progress
    }

    /// Progress units of a file: one, plus one per 64 KiB (read, for bytes the remote holds;
    /// sent, for the others).
    static func units(_ size: Int64) -> Int { 1 + Int(size >> 16) }

    /// Sends what `files` need and returns each file's blobs, in the order of `files`.
    /// - Complexity: every byte of `files` read and hashed (SHA-256, XXH3), the new blobs'
    ///   bytes read and hashed again as they go out; one PUT per pack of new blobs (8 MiB);
    ///   memory: `readers` chunk buffers, as many planned packs as transfer threads waiting,
    ///   and about 70 bytes a blob (its place, then its location).
    func run(_ files: Work) throws -> (blobs: Sent, statistics: Statistics) {
        // Packs planned but not yet sent wait for a transfer thread, each holding its list of
        // blobs (a pack of small files lists thousands): as many wait as there are threads,
        // so the readers never run far ahead of the network.
        let concurrency = store.configuration.transport.concurrency
        let workers = store.workers(concurrency, queueLimit: concurrency)
        let root = try OpenDirectory(packagePath)
        let readers = min(options.readers, max(1, files.count))
        // Room for a blob a file up front: the tables never double while the readers wait on them.
        blobs.withLock {
            $0.index.reserveCapacity($0.index.count + files.count)
            $0.planned.reserveCapacity(files.count)
        }
        results.withLock {
            $0.references.reserveCapacity(files.count)
            $0.spans = Array(repeating: (0, 0), count: files.count)
        }
        DispatchQueue.concurrentPerform(iterations: readers) { _ in
            do {
                try self.readFiles(files, root: root, workers: workers)
            } catch {
                workers.fail(error)
            }
        }
        try workers.finish()
        withExtendedLifetime(root) {}
        return (locations(), statistics.withLock { $0 })
    }

    /// Every file's blobs, where they are now that every pack has its name; the tables the
    /// readers used are emptied first.
    private func locations() -> Sent {
        // One shared name a pack, not a digest in every location.
        let names = packNames.withLock { $0 }.mapValues(PackName.init)
        let table = blobs.withLock { blobs in
            blobs.index = [:]
            return blobs.planned
        }
        let placed = results.withLock { results in
            defer { results = FileBlobs() }
            return results
        }
        var sent = Sent()
        sent.blobs.reserveCapacity(placed.references.count)
        sent.starts.reserveCapacity(placed.spans.count + 1)
        for span in placed.spans {
            for reference in placed.references[Int(span.start)..<Int(span.start + span.count)] {
                if Int(reference) < stored.count {
                    sent.blobs.append(stored[Int(reference)])
                } else {
                    let blob = table[Int(reference) - stored.count]
                    sent.blobs.append(
                        BlobLocation(
                            digest: blob.digest, packName: names[Int(blob.serial)]!, offset: blob.offset, length: blob.length))
                }
            }
            sent.starts.append(Int32(sent.blobs.count))
        }
        return sent
    }

    /// The reference of the blob `digest`, and whether the remote holds it or a pack plans
    /// it already; else it is recorded as `planned` and is new.
    private func place(_ digest: SHA256Digest, planned: Planned) -> (reference: UInt32, isKnown: Bool) {
        blobs.withLock { table in
            let key = digest.words.0
            if let reference = table.index[key], table.digest(of: reference, stored: stored) == digest {
                return (reference, true)
            }
            let reference = UInt32(stored.count + table.planned.count)
            table.planned.append(planned)
            if table.index[key] == nil { table.index[key] = reference }
            return (reference, false)
        }
    }

    /// One reader thread: takes files until none is left, planning its own packs.
    private func readFiles(_ files: Work, root: OpenDirectory, workers: TransferWorkers) throws {
        let hasher = SHA256Hasher()
        let fileHasher = ContentHasher()
        let buffer = ChunkBuffer(size: Int(options.chunking.maximumPiece))
        var pack = PackPlan(serial: nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue)
        var references: [UInt32] = []  // the current file's blobs
        while !workers.hasFailed {
            let index = nextFile.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < files.count else { break }
            let work = files[index]
            let path = RelativePath(trusted: work.path)  // a scan's entry: normalised
            let shown = PackageLayout.joined(packagePath, path.string)
            let file = try FileDescriptor.openWithoutSymlinks(path.string, relativeTo: root.rawValue, displayPath: shown)
            let status = try file.status()
            guard status.kind == .regular, status.size == work.size else { throw Self.changed(shown) }
            references.removeAll(keepingCapacity: true)
            var alreadyHeld: Int64 = 0  // bytes the remote holds: done as soon as read
            fileHasher.reset()
            for piece in try options.chunking.pieces(of: file, size: work.size, known: work.chunks) {
                let length = Int(piece.count)
                let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<length])
                guard try file.readFully(into: bytes, at: piece.lowerBound) == length else { throw Self.changed(shown) }
                fileHasher.update(UnsafeRawBufferPointer(bytes))
                hasher.reset()
                hasher.update(UnsafeRawBufferPointer(bytes))
                let digest = hasher.finish()
                if pack.size > 0 && pack.size + length > options.packSize {
                    send(pack, root: root, workers: workers)
                    pack = PackPlan(serial: nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue)
                }
                let (reference, isKnown) = place(
                    digest,
                    planned: Planned(digest: digest, serial: UInt32(pack.serial), offset: UInt32(pack.size), length: UInt32(length)))
                references.append(reference)
                if isKnown {
                    alreadyHeld += Int64(length)
                } else {
                    _ = pack.append(
                        PackPlan.Piece(path: path, offset: piece.lowerBound, length: length, digest: digest))
                }
            }
            guard fileHasher.digest() == work.hash else { throw Self.changed(shown) }
            results.withLock {
                $0.spans[index] = (UInt32($0.references.count), UInt32(references.count))
                $0.references.append(contentsOf: references)
            }
            statistics.withLock {
                $0.filesRead += 1
                $0.bytesRead += work.size
            }
            // Bytes the remote holds are done once read; new ones when their pack has been
            // sent (`send`): together, the file's size, which the total counted.
            progress?.withProperties {
                $0.completedByteCount += UInt64(alreadyHeld)
                $0.completedFileCount += 1
                $0.completedCount += Self.units(alreadyHeld)
            }
        }
        if !pack.isEmpty && !workers.hasFailed { send(pack, root: root, workers: workers) }
    }

    /// Names a planned pack and queues its upload.
    private func send(_ pack: PackPlan, root: OpenDirectory, workers: TransferWorkers) {
        let (trailer, id) = pack.sealed()
        packNames.withLock { $0[pack.serial] = id }
        let store = self.store
        let packagePath = self.packagePath
        workers.submit { [self] connection in
            // Bytes count as they go out: a large pack moves the line while it travels.
            var counting: (@Sendable (Int) -> Void)?
            if let manager = self.progress {
                counting = { bytes in
                    manager.withProperties { (values: inout ProgressManager.Values) in
                        values.completedByteCount += UInt64(bytes)
                    }
                }
            }
            let body = PackBody(
                plan: pack, trailer: trailer, root: root.rawValue, packagePath: packagePath, progress: counting)
            let outcome = try withExtendedLifetime(root) {
                try connection.put(
                    bucket: store.location.bucket, key: RemoteLayout.pack(id, store.location), body: body, payloadHash: nil)
            }
            guard case .stored = outcome else {
                throw RemoteError(.server, "the store refused pack \(id.description.prefix(12))")
            }
            var offset: UInt32 = 0
            var blobs: [(digest: SHA256Digest, offset: UInt32, length: UInt32)] = []
            for piece in pack.pieces {
                blobs.append((piece.digest, offset, UInt32(piece.length)))
                offset += UInt32(piece.length)
            }
            // Recorded once it arrived: a push interrupted after this will not send it again.
            try? store.cache.appendPending(LocalCache.PendingPack(id: id, blobs: blobs))
            statistics.withLock {
                $0.packsUploaded += 1
                $0.blobsUploaded += blobs.count
                $0.bytesUploaded += body.length
            }
            if let progress {
                // The blobs' bytes (the files' bytes they carry), not the pack's with its
                // trailer: the total counted the files. Most were counted as they went out.
                let rest = UInt64(max(0, pack.size - body.reported))
                let units = Int(pack.size >> 16)
                progress.withProperties {
                    $0.completedByteCount += rest
                    $0.completedCount += units
                }
            }
        }
    }

    static func changed(_ path: String) -> RemoteError {
        RemoteError(.localChange, "'\(path)' changed while it was being pushed; push again")
    }
}
