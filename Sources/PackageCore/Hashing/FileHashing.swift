import CSystemShims
import Glibc

extension ContentHash {
    /// Hashes an open file from its current offset to its end in chunks of `buffer.count`
    /// (stopping at `expectedSize` when given: see `FileDescriptor.forEachChunk`).
    ///
    /// - Returns: the hash and the number of bytes read.
    /// - Complexity: one `read` per chunk; memory is `buffer` alone.
    package static func ofFile(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64? = nil,
        hasher: borrowing ContentHasher = ContentHasher()
    ) throws(FileSystemError) -> (hash: ContentHash, size: Int64) {
        hasher.reset()
        let total = try file.forEachChunk(using: buffer, expectedSize: expectedSize) { hasher.update($0) }
        return (hasher.digest(), total)
    }

    /// Hashes what arrives on standard input, to its end (`pkgtool hash -`, as `xxhsum -`):
    /// a pipe, a terminal or a redirected file, through a duplicate of descriptor 0.
    ///
    /// - Returns: the hash and the number of bytes read.
    package static func ofStandardInput(buffer: ChunkBuffer) throws(FileSystemError) -> (hash: ContentHash, size: Int64) {
        let duplicate = pkg_dup_cloexec(0)
        guard duplicate >= 0 else {
            throw FileSystemError(.read, path: "standard input", errno: Errno(rawValue: errno))
        }
        let input = FileDescriptor(adopting: duplicate, path: "standard input")
        return try ofFile(input, buffer: buffer)
    }

    /// Hashes the regular file at `path`, following a symbolic link given as `path` itself
    /// (as `xxhsum` does), and refusing anything that is not a regular file.
    ///
    /// FIFOs are opened non-blocking and refused, so a FIFO never hangs the caller.
    package static func ofFile(
        atPath path: String, relativeTo directory: Int32 = AT_FDCWD, buffer: ChunkBuffer
    ) throws(FileSystemError) -> (hash: ContentHash, status: FileStatus) {
        let file = try FileDescriptor.open(path, relativeTo: directory, options: .nonBlocking)
        let status = try file.status()
        guard status.kind == .regular else {
            throw FileSystemError(.read, path: path, reason: "is a \(status.kind), not a regular file")
        }
        file.adviseSequential()
        let (hash, size) = try ofFile(file, buffer: buffer)
        var observed = status
        observed.size = size
        return (hash, observed)
    }
}

extension ContentHash {
    /// Hashes an open file from its current offset to its end, as `ofFile` does, and in
    /// the same pass finds its chunk list when it is at least the chunking threshold long.
    ///
    /// With `expectedSize` below the threshold the chunk search is skipped altogether. From
    /// 4 MiB on, with the size known and two cores, this thread and the chunker's helper
    /// read alternate 1 MiB pieces with `pread` into two of the helper's slots instead of
    /// `buffer`, and take turns hashing them in order (`ChunkingHasher`); the file offset
    /// is left after the bytes read, as a sequential read leaves it.
    /// - Complexity: one `read` per `buffer.count` bytes (one `pread` per 1 MiB with the
    ///   helper); memory is `buffer` (or the helper's slots) and the list.
    package static func ofFileWithChunks(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64? = nil,
        chunker: inout ChunkingHasher
    ) throws(FileSystemError) -> ChunkedDigest {
        chunker.reset(expectedSize: expectedSize)
        do {
            _ = try chunker.consume(file, buffer: buffer, expectedSize: expectedSize)
        } catch {
            chunker.reset()
            throw error
        }
        return chunker.finish()
    }

    /// `ofFileWithChunks`, for a new version of a file whose `previous` chunk list is known
    /// (a manifest's record): the same hash and list, but where the old chunks recur they
    /// are only hashed, not searched; a chunk that differs is read again (`pread`, from the
    /// page cache) and searched. Rehashing a large file after a small edit then costs about
    /// a hash and a half instead of a full Gear search. Without a usable `previous` list
    /// it is the plain function.
    ///
    /// - Complexity: one sequential read of the file, plus one `pread` of each chunk whose
    ///   expected bytes differ (and of the rest of its piece).
    package static func ofFileWithChunks(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64? = nil,
        chunker: inout ChunkingHasher, previous: ChunkList?
    ) throws(FileSystemError) -> ChunkedDigest {
        try ofFileWithChunks(
            file, buffer: buffer, expectedSize: expectedSize, chunker: &chunker, previous: previous, statistics: nil)
    }

    /// What a hinted chunking did: bytes searched for cuts and bytes read a second time.
    struct HintStatistics {
        var searchedBytes: Int64 = 0
        var rereadBytes: Int64 = 0
    }

    /// `ofFileWithChunks(_:buffer:expectedSize:chunker:previous:)`, reporting its work (tests, benchmarks).
    static func ofFileWithChunks(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64? = nil,
        chunker: inout ChunkingHasher, previous: ChunkList?, statistics: UnsafeMutablePointer<HintStatistics>?
    ) throws(FileSystemError) -> ChunkedDigest {
        let parameters = chunker.parameters
        guard let previous, previous.count > 1, expectedSize.map({ $0 >= parameters.fileThreshold }) ?? true else {
            return try ofFileWithChunks(file, buffer: buffer, expectedSize: expectedSize, chunker: &chunker)
        }
        // A large file on two cores: the helper checks the chunks while this thread reads.
        do {
            if let helped = try chunker.consumeHinted(file, expectedSize: expectedSize, previous: previous) {
                statistics?.pointee = HintStatistics(searchedBytes: helped.searched, rereadBytes: helped.reread)
                return helped.digest
            }
        } catch {
            chunker.reset()
            throw error
        }
        // One thread: the same work, piece by piece on this one.
        let fileHasher = ContentHasher()
        let job = try HintedPieces(parameters: parameters, previous: previous, reading: file)
        let total = try file.forEachChunk(using: buffer, expectedSize: expectedSize) { piece throws(FileSystemError) in
            fileHasher.update(piece)
            job.consume(piece, ahead: nil)
            if let failure = job.failure { throw failure }
        }
        let chunks = try job.finish(total: total)
        statistics?.pointee = HintStatistics(searchedBytes: job.searchedBytes, rereadBytes: job.reread)
        let list = total >= parameters.fileThreshold && !chunks.isEmpty ? ChunkList(chunks) : nil
        return ChunkedDigest(hash: fileHasher.digest(), size: total, chunks: list)
    }

    /// Reads [from, to) again with `pread` and feeds it to `chunks`, moving back again
    /// whenever it asks to (each time to a later chunk start). Returns the bytes read.
    static func feedAgain(
        _ file: borrowing FileDescriptor, from: Int64, to end: Int64, into chunks: inout HintedChunker,
        buffer spare: inout ChunkBuffer?
    ) throws(FileSystemError) -> Int64 {
        let buffer = spare ?? ChunkBuffer()
        spare = buffer
        var read: Int64 = 0
        var offset = from
        while offset < end {
            let count = Int(min(Int64(buffer.count), end - offset))
            let piece = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<count])
            guard try file.readFully(into: piece, at: offset) == count else {
                throw FileSystemError(.read, path: file.path, reason: "the file shrank while it was read")
            }
            read += Int64(count)
            if let again = chunks.consume(UnsafeRawBufferPointer(piece)) {
                offset = again
            } else {
                offset += Int64(count)
            }
        }
        return read
    }

    /// `ofFileWithChunks` for the regular file at `path` (a symbolic link given as `path`
    /// itself is followed, as `ofFile(atPath:)` does).
    package static func ofFileWithChunks(
        atPath path: String, relativeTo directory: Int32 = AT_FDCWD, buffer: ChunkBuffer,
        parameters: ChunkingParameters = .standard
    ) throws(FileSystemError) -> (digest: ChunkedDigest, status: FileStatus) {
        let file = try FileDescriptor.open(path, relativeTo: directory, options: .nonBlocking)
        let status = try file.status()
        guard status.kind == .regular else {
            throw FileSystemError(.read, path: path, reason: "is a \(status.kind), not a regular file")
        }
        file.adviseSequential()
        var chunker = ChunkingHasher(parameters: parameters)
        let digest = try ofFileWithChunks(file, buffer: buffer, chunker: &chunker)
        var observed = status
        observed.size = digest.size
        return (digest, observed)
    }
}
