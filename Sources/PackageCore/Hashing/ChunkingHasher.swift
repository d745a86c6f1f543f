/// What one pass over a file's bytes yields: its content hash, its size and, when it is
/// at least `ChunkingParameters.fileThreshold` long, its chunk list.
package struct ChunkedDigest: Sendable, Hashable {
    package var hash: ContentHash
    package var size: Int64
    package var chunks: ChunkList?

    package init(hash: ContentHash, size: Int64, chunks: ChunkList?) {
        self.hash = hash
        self.size = size
        self.chunks = chunks
    }
}

/// Streams a file's bytes once and computes, in that pass, its XXH3-128 content hash, its
/// content-defined cut points and each chunk's XXH3-128.
///
/// Feed it the bytes in any pieces (`update`), then `finish`: the cut points depend only
/// on the bytes, never on how they were split. Any writer that streams bytes can feed one
/// while copying. The first chunk's hash is the file hash's state read at the first cut,
/// so a file below the threshold costs one XXH3 pass plus the Gear search past the
/// minimum chunk size; later chunks use a second XXH3 state fed the same bytes.
///
/// Non-copyable: it owns two XXH3 states and a 128-byte window buffer.
package struct ChunkingHasher: ~Copyable {
    private let fileHasher = ContentHasher()
    private let chunkHasher = ContentHasher()
    private let search: GearCutSearch
    private var offset: Int64 = 0
    private var chunkStart: Int64 = 0
    private var chunks: [FileChunk] = []
    /// False when the caller said the file is below the threshold: only the hash is computed.
    private var chunking = true

    package init(parameters: ChunkingParameters = .standard) {
        search = GearCutSearch(parameters: parameters)
    }

    package var parameters: ChunkingParameters { search.parameters }

    /// Starts a new file. With `expectedSize` below the threshold no chunk list is computed
    /// (a file that turns out larger then simply gets none).
    package mutating func reset(expectedSize: Int64? = nil) {
        fileHasher.reset()
        chunkHasher.reset()
        offset = 0
        chunkStart = 0
        chunks.removeAll(keepingCapacity: true)
        chunking = expectedSize.map { $0 >= parameters.fileThreshold } ?? true
    }

    /// The bytes fed so far.
    package var count: Int64 { offset }

    /// Feeds the next bytes of the file.
    ///
    /// - Complexity: O(bytes): the Gear search over the bytes past each chunk's minimum
    ///   size, and XXH3 over all of them (twice outside the first chunk).
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        guard chunking else {
            fileHasher.update(bytes)
            offset += Int64(bytes.count)
            return
        }
        var stitched = false
        var position = 0
        while position < bytes.count {
            let cut = search.findCut(in: bytes, from: position, held: Int(offset - chunkStart), stitched: &stitched)
            let end = cut.map { $0 + 1 } ?? bytes.count
            consume(UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
            if cut != nil { closeChunk() }
            position = end
        }
        search.rememberTail(of: bytes)
    }

    /// The file's hash, size and (from the threshold on) chunk list; the hasher is reset
    /// for the next file.
    package mutating func finish() -> ChunkedDigest {
        let hash = fileHasher.digest()
        var list: ChunkList?
        if chunking && offset >= parameters.fileThreshold {
            if offset > chunkStart { closeChunk() }
            list = ChunkList(chunks)
        }
        let digest = ChunkedDigest(hash: hash, size: offset, chunks: list)
        reset()
        return digest
    }

    // MARK: Internals

    private mutating func consume(_ segment: UnsafeRawBufferPointer) {
        fileHasher.update(segment)
        if chunkStart != 0 { chunkHasher.update(segment) }
        offset += Int64(segment.count)
    }

    private mutating func closeChunk() {
        // The first chunk starts the file: the file's state holds exactly its bytes.
        let hash = chunkStart == 0 ? fileHasher.digest() : chunkHasher.digest()
        chunks.append(FileChunk(offset: chunkStart, length: offset - chunkStart, hash: hash))
        chunkStart = offset
        chunkHasher.reset()
    }
}
