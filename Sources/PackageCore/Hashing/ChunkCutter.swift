/// The chunk half of `ChunkingHasher`: the cut search and the chunk hashes over a stream
/// of bytes that arrives in pieces (Specs/hashing.md, "Cut rule" and "Chunk hash").
///
/// A class so that the hasher's helper thread and its owner can share it: the owner
/// mutates it only while the helper is idle (drained), the helper only between taking a
/// piece and handing it back, and those hand-offs are semaphore operations, which order
/// every access; hence `@unchecked Sendable`.
final class ChunkCutter: @unchecked Sendable {
    private let search: GearCutSearch
    private let chunkHasher = ContentHasher()
    /// The bytes consumed so far.
    private(set) var offset: Int64 = 0
    private var chunkStart: Int64 = 0
    private var chunks: [FileChunk] = []

    /// Bytes searched, then hashed, at a time: well inside a core's second-level cache.
    static let sectionSize = 64 << 10

    init(parameters: ChunkingParameters) {
        search = GearCutSearch(parameters: parameters)
    }

    var parameters: ChunkingParameters { search.parameters }

    /// Forgets the current file.
    func reset() {
        chunkHasher.reset()
        offset = 0
        chunkStart = 0
        chunks.removeAll(keepingCapacity: true)
    }

    /// Consumes the next bytes of the file: finds the cuts among them and hashes each
    /// chunk's bytes as its cut is found, section by section while they are in cache.
    ///
    /// - Complexity: O(bytes): the Gear search over the bytes past each chunk's minimum
    ///   size, and XXH3 over all of them.
    func consume(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        var stitched = false
        var position = 0
        while position < bytes.count {
            // A section at a time, so that the chunk hash reads what the search just read,
            // from a near cache, instead of a whole piece again from further out.
            let limit = min(bytes.count, position + Self.sectionSize)
            let section = UnsafeRawBufferPointer(rebasing: bytes[..<limit])
            let cut = search.findCut(in: section, from: position, held: Int(offset - chunkStart), stitched: &stitched)
            let end = cut.map { $0 + 1 } ?? limit
            chunkHasher.update(UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
            offset += Int64(end - position)
            if cut != nil { closeChunk() }
            position = end
        }
        search.rememberTail(of: bytes)
    }

    /// The chunks of the whole file: closes the last one. Call `reset` before the next file.
    func finish() -> [FileChunk] {
        if offset > chunkStart { closeChunk() }
        return chunks
    }

    private func closeChunk() {
        chunks.append(FileChunk(offset: chunkStart, length: offset - chunkStart, hash: chunkHasher.digest()))
        chunkStart = offset
        chunkHasher.reset()
    }
}
