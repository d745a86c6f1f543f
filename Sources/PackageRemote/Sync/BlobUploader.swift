import Dispatch
import Glibc
import PackageCore
import Synchronization

/// The sending half of a push: reads the files the remote lacks, cuts them into blobs,
/// keeps the blobs the remote does not hold yet in pack buffers, and uploads each pack as
/// it fills, in parallel.
///
/// Each file is read once: straight into a pack buffer, where SHA-256 names each blob and
/// XXH3 checks the whole file against the content hash the scan found (a file edited during
/// the push is refused, not sent half old, half new). `readers` threads read and hash
/// while the transfer threads send; the pool of pack buffers bounds memory and how far
/// reading runs ahead of sending.
final class BlobUploader: Sendable {
    /// A file to send.
    struct Work: Sendable {
        var relativePath: String
        var size: Int64
        var contentHash: ContentHash
    }

    /// Where a blob is, or will be once its pack has a name.
    enum Place: Sendable {
        case stored(BlobLocation)
        case packed(serial: Int, digest: SHA256Digest, offset: UInt32, length: UInt32)
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
    private let known: Mutex<[SHA256Digest: Place]>
    private let packNames = Mutex<[Int: SHA256Digest]>([:])
    private let results = Mutex<[Int: [Place]]>([:])
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
        self.known = Mutex(known.mapValues { .stored($0) })
        self.progress = progress
    }

    /// Progress units of a file: one, plus one per 64 KiB.
    static func units(_ size: Int64) -> Int { 1 + Int(size >> 16) }

    /// Sends what `files` need and returns each file's blobs, by index into `files`.
    /// - Complexity: every byte of `files` read once and hashed twice (SHA-256, XXH3); one
    ///   PUT per pack of new blobs; memory `packBuffers × packSize`.
    func run(_ files: [Work]) throws -> (blobs: [[BlobLocation]], statistics: Statistics) {
        let workers = store.workers(store.configuration.transport.concurrency)
        let pool = PackBufferPool(count: options.packBuffers, capacity: options.packSize)
        let root = try FileDescriptor.openDirectory(packagePath)
        let rootDescriptor = root.rawValue
        let readers = min(options.readers, max(1, files.count))
        DispatchQueue.concurrentPerform(iterations: readers) { _ in
            do {
                try self.readFiles(files, root: rootDescriptor, pool: pool, workers: workers)
            } catch {
                workers.fail(error)
            }
        }
        try workers.finish()
        withExtendedLifetime(root) {}
        let names = packNames.withLock { $0 }
        let placed = results.withLock { $0 }
        var blobs: [[BlobLocation]] = []
        blobs.reserveCapacity(files.count)
        for index in files.indices {
            blobs.append(
                (placed[index] ?? []).map { place in
                    switch place {
                    case .stored(let location): return location
                    case .packed(let serial, let digest, let offset, let length):
                        return BlobLocation(digest: digest, pack: names[serial]!, offset: offset, length: length)
                    }
                })
        }
        return (blobs, statistics.withLock { $0 })
    }

    /// One reader thread: takes files until none is left, filling its own pack buffer.
    private func readFiles(_ files: [Work], root: Int32, pool: PackBufferPool, workers: TransferWorkers) throws {
        let hasher = SHA256Hasher()
        let fileHasher = ContentHasher()
        var buffer: PackBuffer?
        defer {
            if let buffer {
                if buffer.isEmpty || workers.hasFailed { pool.release(buffer) } else { send(buffer, pool: pool, workers: workers) }
            }
        }
        while !workers.hasFailed {
            let index = nextFile.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < files.count else { return }
            let work = files[index]
            let shown = PackageLayout.joined(packagePath, work.relativePath)
            let file = try FileDescriptor.openWithoutSymlinks(work.relativePath, relativeTo: root, displayPath: shown)
            let status = try file.status()
            guard status.kind == .regular, status.size == work.size else { throw Self.changed(shown) }
            var places: [Place] = []
            fileHasher.reset()
            for piece in try options.chunking.pieces(of: file, size: work.size) {
                let length = Int(piece.count)
                if buffer == nil || buffer!.free < length {
                    if let full = buffer { send(full, pool: pool, workers: workers) }
                    buffer = nil
                    guard let fresh = pool.acquire(stop: { workers.hasFailed }) else { return }
                    fresh.reset(serial: nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue)
                    buffer = fresh
                }
                let pack = buffer!
                let tail = pack.tail(length)
                guard try file.readFully(into: tail, at: piece.lowerBound) == length else { throw Self.changed(shown) }
                let bytes = UnsafeRawBufferPointer(tail)
                fileHasher.update(bytes)
                hasher.reset()
                hasher.update(bytes)
                let digest = hasher.finish()
                let offset = UInt32(pack.used)
                let existing: Place? = known.withLock { known in
                    if let place = known[digest] { return place }
                    known[digest] = .packed(serial: pack.serial, digest: digest, offset: offset, length: UInt32(length))
                    return nil
                }
                if let existing {
                    places.append(existing)
                } else {
                    _ = pack.commit(digest, length: length)
                    places.append(.packed(serial: pack.serial, digest: digest, offset: offset, length: UInt32(length)))
                }
            }
            guard fileHasher.digest() == work.contentHash else { throw Self.changed(shown) }
            results.withLock { $0[index] = places }
            statistics.withLock {
                $0.filesRead += 1
                $0.bytesRead += work.size
            }
            progress?.complete(count: Self.units(work.size))
        }
    }

    /// Names a full pack and queues its upload; the buffer returns to the pool once sent.
    private func send(_ buffer: PackBuffer, pool: PackBufferPool, workers: TransferWorkers) {
        let id = buffer.seal()
        packNames.withLock { $0[buffer.serial] = id }
        let store = self.store
        workers.submit { [self] connection in
            let outcome = try connection.put(
                bucket: store.location.bucket, key: RemoteLayout.pack(id, store.location), body: buffer, payloadHash: id)
            guard case .stored = outcome else {
                throw RemoteError(.server, "the store refused pack \(id.description.prefix(12))")
            }
            var offset: UInt32 = 0
            var blobs: [(digest: SHA256Digest, offset: UInt32, length: UInt32)] = []
            for blob in buffer.blobs {
                blobs.append((blob.digest, offset, blob.length))
                offset += blob.length
            }
            // Recorded once it arrived: a push interrupted after this will not send it again.
            try? store.cache.appendPending(LocalCache.PendingPack(id: id, blobs: blobs))
            statistics.withLock {
                $0.packsUploaded += 1
                $0.blobsUploaded += blobs.count
                $0.bytesUploaded += buffer.length
            }
            if let progress {
                let sent = UInt64(buffer.length)
                progress.withProperties { $0.completedByteCount += sent }
            }
            pool.release(buffer)
        }
    }

    static func changed(_ path: String) -> RemoteError {
        RemoteError(.localChange, "'\(path)' changed while it was being pushed; push again")
    }
}
