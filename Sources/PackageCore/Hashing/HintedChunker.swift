import CSystemShims
import Glibc

/// Chunks a new version of a file whose previous chunk list is known, skipping the Gear
/// search wherever the old chunks recur (the idea of RapidCDC, Ni and Jiang, SoCC 2019).
///
/// After a cut, if the chunk just closed is one of the old chunks, the next new chunk is
/// expected to be the old one that followed it: its bytes are only hashed, and if the hash
/// matches, the cut is taken where the old chunk ended. That is exactly where the cut rule
/// would put it: a chunk's end depends only on its own bytes, and these are the old
/// chunk's bytes, whose end the rule chose. When the hash differs, the chunker asks its
/// driver to feed the bytes again from the chunk's start (`consume` answers the offset) and
/// searches that chunk as usual. The result is the list `ChunkingHasher` gives for the
/// same bytes; only the cost differs (tests compare the two on many edits and on lists
/// that describe another file altogether). The previous list must come from the same
/// parameters (every recorded list uses `ChunkingParameters.standard`).
struct HintedChunker: ~Copyable {
    private let search: GearCutSearch
    private let chunkHasher = ContentHasher()
    private let previous: ChunkList
    /// The first position of each old chunk hash in `previous`.
    private let previousIndex: [ContentHash: Int]
    /// The offset of the next byte `consume` expects.
    private(set) var position: Int64 = 0
    private var chunkStart: Int64 = 0
    private(set) var chunks: [FileChunk] = []
    /// The old chunk expected to start at `chunkStart`; nil while searching.
    private var hint: Int?
    /// Bytes that went through the Gear search (the rest were only hashed).
    private(set) var searchedBytes: Int64 = 0

    init(parameters: ChunkingParameters, previous: ChunkList) {
        search = GearCutSearch(parameters: parameters)
        self.previous = previous
        var index: [ContentHash: Int] = [:]
        index.reserveCapacity(previous.count)
        for (position, chunk) in previous.enumerated() where index[chunk.hash] == nil { index[chunk.hash] = position }
        previousIndex = index
        hint = nil
        hint = usableHint(0)
    }

    /// `index` when that old chunk ended at a cut: the last one ended where the old file
    /// did, which says nothing about where the rule cuts a longer file.
    private func usableHint(_ index: Int) -> Int? { index < previous.count - 1 ? index : nil }

    /// Consumes the next bytes (starting at `position`). Returns nil when it took them all,
    /// or, when an expected chunk turned out different, the offset from which the bytes
    /// must be fed again (the chunker has moved back there and will search that chunk).
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = 0
        var stitched = false
        while index < bytes.count {
            if let expected = hint {
                let end = chunkStart + previous[expected].length
                let take = Int(min(Int64(bytes.count - index), end - position))
                chunkHasher.update(UnsafeRawBufferPointer(rebasing: bytes[index..<index + take]))
                position += Int64(take)
                index += take
                guard position == end else { continue }
                guard chunkHasher.digest() == previous[expected].hash else {
                    hint = nil
                    position = chunkStart
                    chunkHasher.reset()
                    return chunkStart
                }
                closeChunk()
                hint = usableHint(expected + 1)
            } else {
                let cut = search.findCut(in: bytes, from: index, held: Int(position - chunkStart), stitched: &stitched)
                let end = cut.map { $0 + 1 } ?? bytes.count
                chunkHasher.update(UnsafeRawBufferPointer(rebasing: bytes[index..<end]))
                searchedBytes += Int64(end - index)
                position += Int64(end - index)
                index = end
                if cut != nil {
                    let hash = closeChunk()
                    hint = previousIndex[hash].flatMap { usableHint($0 + 1) }
                }
            }
        }
        search.rememberTail(of: bytes)
        return nil
    }

    /// At the end of the file: nil once the last chunk is closed, or the offset to feed
    /// the bytes again from when the last chunk was only expected (the file ended inside
    /// it, so the rule may cut it earlier).
    mutating func finish() -> Int64? {
        if hint != nil && position > chunkStart {
            hint = nil
            position = chunkStart
            chunkHasher.reset()
            return chunkStart
        }
        if position > chunkStart { closeChunk() }
        return nil
    }

    @discardableResult
    private mutating func closeChunk() -> ContentHash {
        let hash = chunkHasher.digest()
        chunks.append(FileChunk(offset: chunkStart, length: position - chunkStart, hash: hash))
        chunkStart = position
        chunkHasher.reset()
        return hash
    }
}

/// A `HintedChunker` fed piece by piece, with what it needs to read a chunk again (`pread`,
/// from its own descriptor) where an expectation fails: fed in turns by the two threads
/// that read the file (`PairedFileReading`), or, on one thread, by the caller between reads.
///
/// The owner creates it and reads its results (`finish`, `failure`) only once both threads
/// are done; the turns order every access in between (hence `@unchecked Sendable`). A read
/// that fails is kept and the pieces after it are ignored; the owner throws it.
final class HintedPieces: PieceConsumer, @unchecked Sendable {
    private var chunks: HintedChunker
    private let file: FileDescriptor
    private var spare: ChunkBuffer?
    /// The fault injector of the task that started the file (debug builds' sweeps): the
    /// helper's reads consult it as the owner's would.
    private let injector: (any IOFaultInjector)?
    private(set) var reread: Int64 = 0
    private(set) var failure: FileSystemError?

    /// Duplicates `source`'s descriptor: the helper reads with its own, whatever the owner
    /// does with the original.
    init(parameters: ChunkingParameters, previous: ChunkList, reading source: borrowing FileDescriptor)
        throws(FileSystemError)
    {
        let duplicate = pkg_dup_cloexec(source.rawValue)
        guard duplicate >= 0 else {
            throw FileSystemError(.open, path: source.path, errno: Errno(rawValue: errno), reason: "duplicating its descriptor")
        }
        file = FileDescriptor(adopting: duplicate, path: source.path)
        chunks = HintedChunker(parameters: parameters, previous: previous)
        injector = IOFaultInjection.injector
    }

    var searchedBytes: Int64 { chunks.searchedBytes }

    func consume(_ piece: UnsafeRawBufferPointer, ahead: SectionMatches?) {
        guard failure == nil else { return }
        IOFaultInjection.withInjector(injector) {
            let end = chunks.position + Int64(piece.count)
            guard let from = chunks.consume(piece) else { return }
            do throws(FileSystemError) {
                reread += try ContentHash.feedAgain(file, from: from, to: end, into: &chunks, buffer: &spare)
            } catch {
                failure = error
            }
        }
    }

    /// After the last piece (the helper drained): closes the last chunk, reading its bytes
    /// again when the file ended inside an expected chunk, and returns the list.
    func finish(total: Int64) throws(FileSystemError) -> [FileChunk] {
        if let failure { throw failure }
        while let from = chunks.finish() {
            reread += try ContentHash.feedAgain(file, from: from, to: total, into: &chunks, buffer: &spare)
        }
        return chunks.chunks
    }
}
