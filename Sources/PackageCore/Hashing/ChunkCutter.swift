/// The chunk half of `ChunkingHasher`: the cut search and the chunk hashes over a stream
/// of bytes that arrives in pieces (Specs/hashing.md, "Cut rule" and "Chunk hash").
///
/// A class so that the hasher's helper thread and its owner can share it: the owner
/// mutates it only while the helper is idle (drained), the helper only between taking a
/// piece and handing it back, and those hand-offs are semaphore operations, which order
/// every access; hence `@unchecked Sendable`.
final class ChunkCutter: PieceConsumer, @unchecked Sendable {
    private let search: GearCutSearch
    private let chunkHasher = ContentHasher()
    /// The bytes consumed so far.
    private(set) var offset: Int64 = 0
    private var chunkStart: Int64 = 0
    private var chunks: [FileChunk] = []

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
    /// `ahead` holds the matches the reading thread computed for some sections of this
    /// piece (a helper slot's), which are then only scanned.
    ///
    /// - Complexity: O(bytes): the Gear search over the bytes past each chunk's minimum
    ///   size (but in sections computed ahead), and XXH3 over all of them.
    func consume(_ bytes: UnsafeRawBufferPointer, ahead: SectionMatches? = nil) {
        guard !bytes.isEmpty else { return }
        var stitched = false
        var position = 0
        let sectionSize = SectionMatches.sectionSize
        while position < bytes.count {
            // A section at a time, so that the chunk hash reads what the search just read,
            // from a near cache, instead of a whole piece again from further out.
            let section = position / sectionSize
            let limit = min(bytes.count, (section + 1) * sectionSize)
            let held = Int(offset - chunkStart)
            let cut: Int?
            if let ahead, let matches = ahead.take(section) {
                cut = search.findCut(matches: matches, limit: limit, from: position, held: held)
            } else {
                let view = UnsafeRawBufferPointer(rebasing: bytes[..<limit])
                cut = search.findCut(in: view, from: position, held: held, stitched: &stitched)
            }
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
