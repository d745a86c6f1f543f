import FoundationEssentials
import Synchronization

extension FileWrapper {
    /// The content hash of this node (Specs/hashing.md): of a regular file's bytes, of a
    /// link's target text, or the Merkle hash of a directory's children. Identical to what
    /// `TreeScanner` computes for the same tree on disk.
    ///
    /// Computed on first use and cached; changing a node below (adding, removing or
    /// renaming a child, rereading, changing an executable bit) forgets the cached hashes
    /// up to the root.
    /// - Throws: `FileSystemError` when a file read from disk vanished, became unreadable
    ///   or changed since the package was opened.
    /// - Complexity: files not yet hashed are streamed from disk in 1 MiB chunks, on all
    ///   cores when there are several (memory: one buffer per core); nothing is read when
    ///   every hash is cached.
    public var contentHash: ContentHash {
        get throws {
            if let cachedHash { return cachedHash }
            try hashFilesOnDisk()
            return try combinedHash()
        }
    }

    // MARK: Internals

    /// A regular file whose bytes are on disk and whose hash is unknown.
    struct PendingFile {
        var node: FileWrapper
        var record: DiskRecord
        var generation: UInt64
    }

    /// Hashes every regular file below (or at) this node whose bytes are on disk and whose
    /// hash is unknown, in parallel, and caches the results.
    ///
    /// - Parameter isCancelled: asked before each file; true stops with `CancellationError`.
    func hashFilesOnDisk(workers: Int = ProcessInfoCores.active, isCancelled: (@Sendable () -> Bool)? = nil) throws {
        var pending: [PendingFile] = []
        collectUnhashedFilesOnDisk(into: &pending)
        if pending.isEmpty { return }
        let digests = try FileWrapper.hashFiles(pending.map(\.record), workers: workers, isCancelled: isCancelled)
        for (file, digest) in zip(pending, digests) {
            file.node.state.withLock { node in
                if node.generation == file.generation && node.diskRecord == file.record {
                    node.cachedHash = digest.hash
                    node.cachedChunks = digest.chunks
                }
            }
        }
    }

    func collectUnhashedFilesOnDisk(into pending: inout [PendingFile]) {
        // A hashed node (most of a tree being saved again) costs one look under its lock.
        guard
            let (kind, contents, record, generation, children) = state.withLock({ node in
                node.cachedHash != nil
                    ? nil : (node.kind, node.contents, node.diskRecord, node.generation, Array(node.children.values))
            })
        else { return }
        switch kind {
        case .regular:
            if contents == nil, let record {
                pending.append(PendingFile(node: self, record: record, generation: generation))
            }
        case .directory:
            for child in children { child.collectUnhashedFilesOnDisk(into: &pending) }
        default:
            break
        }
    }

    /// The hash from cached leaf hashes and bytes in memory, caching every level whose
    /// state did not change meanwhile. Files on disk should have been hashed
    /// (`hashFilesOnDisk`); one that was not (another thread replaced it) is hashed here.
    func combinedHash() throws -> ContentHash {
        let (kind, cached, generation, contents, target, record) = state.withLock {
            ($0.kind, $0.cachedHash, $0.generation, $0.contents, $0.linkTarget, $0.diskRecord)
        }
        if let cached { return cached }
        let hash: ContentHash
        var chunks: ChunkList?
        switch kind {
        case .directory:
            var builder = TreeHashBuilder()
            for (name, child) in sortedChildren ?? [] {
                builder.add(name: name.string, tag: child.entryTag, hash: try child.combinedHash())
            }
            hash = builder.finish()
        case .symbolicLink:
            hash = ContentHash.of(Array((target ?? "").utf8))
        default:
            if let contents {
                let digest = try FileWrapper.digest(of: contents)
                (hash, chunks) = (digest.hash, digest.chunks)
            } else if let record {
                let digest = try FileWrapper.hashFile(record, worker: ScanWorker())
                (hash, chunks) = (digest.hash, digest.chunks)
            } else {
                hash = ContentHash.of(Data())
            }
        }
        state.withLock { node in
            if node.generation == generation {
                node.cachedHash = hash
                node.cachedChunks = chunks
            }
        }
        return hash
    }

    /// Hashes the files the records describe, verifying each still is what was opened.
    /// Returns the hashes in the records' order.
    ///
    /// - Complexity: one streamed read per file, in batches of up to 64 files or 8 MiB over
    ///   `workers` threads, each with its own 1 MiB buffer.
    static func hashFiles(
        _ records: [DiskRecord], workers: Int, isCancelled: (@Sendable () -> Bool)? = nil
    ) throws -> [ChunkedDigest] {
        if records.count == 1 || workers <= 1 {
            let worker = ScanWorker()
            return try records.map { record in
                if isCancelled?() == true { throw CancellationError() }
                return try hashFile(record, worker: worker)
            }
        }
        let results = Mutex([ChunkedDigest](repeating: ChunkedDigest(hash: .empty, size: 0, chunks: nil), count: records.count))
        var batches: [[Int]] = []
        var batch: [Int] = []
        var batchBytes: Int64 = 0
        for index in records.indices {
            batch.append(index)
            batchBytes += records[index].status.size
            if batch.count >= 64 || batchBytes >= 8 << 20 {
                batches.append(batch)
                batch = []
                batchBytes = 0
            }
        }
        if !batch.isEmpty { batches.append(batch) }
        try WorkQueue<[Int]>.run(
            initial: batches, workers: min(workers, batches.count),
            makeContext: { ScanWorker() },
            process: { indices, worker, _ in
                for index in indices {
                    if isCancelled?() == true { throw CancellationError() }
                    let hash = try hashFile(records[index], worker: worker)
                    results.withLock { $0[index] = hash }
                }
            })
        return results.withLock { $0 }
    }

    /// Streams one file through the worker's buffer and chunking hasher (a chunk list for
    /// a large file, in the same pass).
    static func hashFile(_ record: DiskRecord, worker: ScanWorker) throws -> ChunkedDigest {
        let file = try openVerified(record)
        file.adviseSequential()
        let digest = try ContentHash.ofFileWithChunks(
            file, buffer: worker.buffer, expectedSize: record.status.size, chunker: &worker.chunker)
        guard digest.size == record.status.size else {
            throw FileSystemError(
                .read, path: record.path,
                reason: "it changed after the package was opened (\(record.status.size) bytes expected, \(digest.size) read)")
        }
        return digest
    }

    /// The hash (and, when large enough, the chunk list) of bytes in memory, MiB by MiB so
    /// that a save cancelled meanwhile stops within one (`HashingCancellation`).
    static func digest(of contents: Data) throws -> ChunkedDigest {
        var chunker = ChunkingHasher()
        chunker.reset(expectedSize: Int64(contents.count))
        let piece = 1 << 20
        var offset = 0
        repeat {
            try HashingCancellation.check()
            let end = min(offset + piece, contents.count)
            contents.withUnsafeBytes { bytes in
                chunker.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            }
            offset = end
        } while offset < contents.count
        return chunker.finish()
    }
}
