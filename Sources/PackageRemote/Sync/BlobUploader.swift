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
/// and checks every blob again on the way. Memory is one chunk buffer per reader thread and
/// libcurl's buffers, whatever the pack size, chunk size or file sizes; the second read
/// usually comes from the page cache.
final class BlobUploader: Sendable {
    /// A file to send.
    struct Work: Sendable {
        var relativePath: String
        var size: Int64
        var contentHash: ContentHash
        /// The chunk list the scan found (files of 4 MiB or more), if any.
        var chunks: ChunkList?
    }

    /// Where a blob is, or will be once its pack has a name: 16 bytes, beside its digest
    /// in the table of known blobs (a push of a million small files holds a million).
    enum Place: Sendable {
        /// One of the blobs the remote held when the push began: an index into `stored`.
        case stored(UInt32)
        /// A blob of a pack this push plans: the pack's serial, the blob's offset and length.
        case packed(serial: UInt32, offset: UInt32, length: UInt32)
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
    private let stored: [BlobLocation]
    /// Every blob named so far: held by the remote, or planned into a pack.
    private let known: Mutex<[SHA256Digest: Place]>
    private let packNames = Mutex<[Int: SHA256Digest]>([:])
    /// Each file's blobs in order, by their digest (`known` says where each is).
    private let results = Mutex<[[SHA256Digest]]>([])
    private let statistics = Mutex(Statistics())
    private let nextFile = Atomic<Int>(0)
    private let nextSerial = Atomic<Int>(0)
    private let progress: ProgressManager?

    /// - Parameter known: the blobs the remote holds (the parent version's, the pending packs').
    init(
        store: RemoteStore, options: RemoteOptions, packagePath: String, known: [SHA256Digest: BlobLocation],
        progress: ProgressManager?
    ) {
        self.store = store
        self.options = options
        self.packagePath = packagePath
        let stored = Array(known.values)
        var places: [SHA256Digest: Place] = [:]
        places.reserveCapacity(stored.count)
        for (index, location) in stored.enumerated() { places[location.digest] = .stored(UInt32(index)) }
        self.stored = stored
        self.known = Mutex(places)
        self.progress = progress
    }

    /// Progress units of a file: one, plus one per 64 KiB (read, for bytes the remote holds;
    /// sent, for the others).
    static func units(_ size: Int64) -> Int { 1 + Int(size >> 16) }

    /// Sends what `files` need and returns each file's blobs, by index into `files`.
    /// - Complexity: every byte of `files` read and hashed (SHA-256, XXH3), the new blobs'
    ///   bytes read and hashed again as they go out; one PUT per pack of new blobs (8 MiB);
    ///   memory: `readers` chunk buffers.
    func run(_ files: [Work]) throws -> (blobs: [[BlobLocation]], statistics: Statistics) {
        let workers = store.workers(store.configuration.transport.concurrency)
        let root = try OpenDirectory(packagePath)
        let readers = min(options.readers, max(1, files.count))
        // Room for a blob a file up front: the table never doubles while the readers wait on it.
        known.withLock { $0.reserveCapacity($0.count + files.count) }
        results.withLock { $0 = Array(repeating: [], count: files.count) }
        DispatchQueue.concurrentPerform(iterations: readers) { _ in
            do {
                try self.readFiles(files, root: root, workers: workers)
            } catch {
                workers.fail(error)
            }
        }
        try workers.finish()
        withExtendedLifetime(root) {}
        let names = packNames.withLock { $0 }
        let placed = results.withLock { $0 }
        let places = known.withLock { $0 }
        var blobs: [[BlobLocation]] = []
        blobs.reserveCapacity(files.count)
        for digests in placed {
            blobs.append(
                digests.map { digest in
                    switch places[digest]! {
                    case .stored(let index): return stored[Int(index)]
                    case .packed(let serial, let offset, let length):
                        return BlobLocation(digest: digest, pack: names[Int(serial)]!, offset: offset, length: length)
                    }
                })
        }
        return (blobs, statistics.withLock { $0 })
    }

    /// One reader thread: takes files until none is left, planning its own packs.
    private func readFiles(_ files: [Work], root: OpenDirectory, workers: TransferWorkers) throws {
        let hasher = SHA256Hasher()
        let fileHasher = ContentHasher()
        let buffer = ChunkBuffer(size: Int(options.chunking.maximumPiece))
        var pack = PackPlan(serial: nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue)
        while !workers.hasFailed {
            let index = nextFile.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < files.count else { break }
            let work = files[index]
            let shown = PackageLayout.joined(packagePath, work.relativePath)
            let file = try FileDescriptor.openWithoutSymlinks(work.relativePath, relativeTo: root.rawValue, displayPath: shown)
            let status = try file.status()
            guard status.kind == .regular, status.size == work.size else { throw Self.changed(shown) }
            var digests: [SHA256Digest] = []
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
                let serial = pack.serial
                let offset = UInt32(pack.size)
                let isKnown = known.withLock { known in
                    if known[digest] != nil { return true }
                    known[digest] = .packed(serial: UInt32(serial), offset: offset, length: UInt32(length))
                    return false
                }
                digests.append(digest)
                if isKnown {
                    alreadyHeld += Int64(length)
                } else {
                    _ = pack.append(
                        PackPlan.Piece(path: work.relativePath, offset: piece.lowerBound, length: length, digest: digest))
                }
            }
            guard fileHasher.digest() == work.contentHash else { throw Self.changed(shown) }
            results.withLock { $0[index] = digests }
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
