import Glibc

extension ContentHash {
    /// Hashes an open file from its current offset to its end in chunks of `buffer.count`
    /// (stopping at `expectedSize` when given: see `FileDescriptor.forEachChunk`).
    ///
    /// - Returns: the hash and the number of bytes read.
    /// - Complexity: one `read` per chunk; memory is `buffer` alone.
    public static func ofFile(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64? = nil,
        hasher: borrowing ContentHasher = ContentHasher()
    ) throws(FileSystemError) -> (hash: ContentHash, size: Int64) {
        hasher.reset()
        let total = try file.forEachChunk(using: buffer, expectedSize: expectedSize) { hasher.update($0) }
        return (hasher.digest(), total)
    }

    /// Hashes the regular file at `path`, following a symbolic link given as `path` itself
    /// (as `xxhsum` does), and refusing anything that is not a regular file.
    ///
    /// FIFOs are opened non-blocking and refused, so a FIFO never hangs the caller.
    public static func ofFile(
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
    /// With `expectedSize` below the threshold the chunk search is skipped altogether.
    /// - Complexity: one `read` per `buffer.count` bytes; memory is `buffer` and the list.
    public static func ofFileWithChunks(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64? = nil,
        chunker: inout ChunkingHasher
    ) throws(FileSystemError) -> ChunkedDigest {
        chunker.reset(expectedSize: expectedSize)
        do {
            try file.forEachChunk(using: buffer, expectedSize: expectedSize) { chunker.update($0) }
        } catch {
            chunker.reset()
            throw error
        }
        return chunker.finish()
    }

    /// `ofFileWithChunks` for the regular file at `path` (a symbolic link given as `path`
    /// itself is followed, as `ofFile(atPath:)` does).
    public static func ofFileWithChunks(
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
