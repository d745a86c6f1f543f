import Synchronization

/// One large file hashed and chunked by two threads that both read it: the owner takes the
/// even 1 MiB pieces, the chunking helper's thread the odd ones, each with `pread` into its
/// own buffer. Each thread computes its piece's cut candidates (`SectionMatches`), then,
/// in file order, feeds it to the file hash and to the chunk consumer (the cut search and
/// chunk hashes, or a hinted chunker). Two turn-passing semaphore pairs keep that order:
/// piece n waits for piece n − 1 to have been hashed, and then consumed.
///
/// Why two readers rather than one reader and a consumer: copying a piece out of the page
/// cache is the larger part of hashing it, and every byte then sits in the cache of the
/// core that read it, where all its other work happens. With one reader handing pieces to
/// a helper, the reader's copy and hash were the critical path and the helper's second
/// read of every byte, from the other core, slowed it by a fifth on a fast host.
///
/// The order of the ordered steps is what makes the result the single-threaded one: the
/// file hash and the consumer see the pieces exactly as one sequential read would give
/// them. A read that fails, or a file that ends early, stops the pass at that piece: the
/// pieces before it are still hashed and consumed in order, none after it.
///
/// The owner creates it, the helper runs its half between taking it and signalling
/// `helperFinished`, and the owner reads the results after waiting for that signal; the
/// ordered state (`fileHasher`, `consumer`, `total`) is touched only between a turn's
/// `wait` and the next turn's `signal`. Hence `@unchecked Sendable`.
final class PairedFileReading: @unchecked Sendable {
    static let pieceSize = ChunkingHelper.slotSize

    private let descriptor: Int32
    private let path: String
    /// The file offset of the first byte, and how many bytes to read from there.
    private let start: Int64
    private let size: Int64
    private let pieceCount: Int
    /// Reader 0's (the owner's) and reader 1's (the helper's) piece buffers.
    private let buffers: [UnsafeMutableRawBufferPointer]
    /// Per reader, the cut candidates computed for its piece; nil when the consumer does
    /// not use them (a hinted chunker mostly only hashes).
    private let candidates: [SectionMatches]?
    private let parameters: ChunkingParameters
    private let fileHasher: SharedContentHasher
    private let consumer: any PieceConsumer
    /// Per reader: its turn to feed the file hash, and its turn to feed the consumer.
    private let hashTurn = [SpinningSemaphore(value: 1), SpinningSemaphore(value: 0)]
    private let consumeTurn = [SpinningSemaphore(value: 1), SpinningSemaphore(value: 0)]
    /// The last piece that counts: lowered by a read that failed (to the piece before) or
    /// came up short (to that piece).
    private let lastPiece: Atomic<Int>
    /// The first piece that came up short: the file ends there, so a read failing past it
    /// is one a sequential read would never have made.
    private let firstShortPiece = Atomic<Int>(Int.max)
    private let firstFailure = Mutex<(piece: Int, error: FileSystemError)?>(nil)
    /// The fault injector of the owner's task (debug builds' sweeps): the helper's reads
    /// consult it as the owner's do.
    let injector: (any IOFaultInjector)?
    /// Signalled by the helper when its half is done.
    let helperFinished = SpinningSemaphore(value: 0)
    /// Bytes hashed, in order.
    private(set) var total: Int64 = 0

    /// Reads `size` bytes of `descriptor` from `start` (`path` names it in errors) into
    /// `buffers` (two of `pieceSize` bytes), feeding `fileHasher` and `consumer`.
    init(
        descriptor: Int32, path: String, start: Int64, size: Int64,
        buffers: [UnsafeMutableRawBufferPointer], candidates: [SectionMatches]?,
        parameters: ChunkingParameters, fileHasher: SharedContentHasher, consumer: any PieceConsumer
    ) {
        precondition(buffers.count == 2 && buffers.allSatisfy { $0.count >= Self.pieceSize })
        self.descriptor = descriptor
        self.path = path
        self.start = start
        self.size = size
        pieceCount = Int((size + Int64(Self.pieceSize) - 1) / Int64(Self.pieceSize))
        self.buffers = buffers
        self.candidates = candidates
        self.parameters = parameters
        self.fileHasher = fileHasher
        self.consumer = consumer
        lastPiece = Atomic(Int.max)
        injector = IOFaultInjection.injector
    }

    /// The first read error, by piece, unless the file ended before it: what the owner
    /// throws once both halves are done.
    var failure: FileSystemError? {
        firstFailure.withLock { failed in
            guard let failed, failed.piece <= firstShortPiece.load(ordering: .relaxed) else { return nil }
            return failed.error
        }
    }

    /// Runs reader `reader`'s half (0: the owner, 1: the helper): pieces reader, reader + 2, …
    func run(reader: Int) {
        let buffer = buffers[reader]
        let other = 1 - reader
        var piece = reader
        while piece < pieceCount {
            let offset = Int64(piece) * Int64(Self.pieceSize)
            let wanted = Int(min(Int64(Self.pieceSize), size - offset))
            var count = 0
            // Relaxed: a stale value only costs a read whose bytes are then not used.
            if piece <= lastPiece.load(ordering: .relaxed) {
                do throws(FileSystemError) {
                    count = try FileDescriptor.readFully(
                        descriptor, path: path, into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted]),
                        at: start + offset)
                    if count < wanted {
                        firstShortPiece.min(piece, ordering: .relaxed)
                        lastPiece.min(piece, ordering: .relaxed)
                    }
                } catch {
                    firstFailure.withLock { if $0 == nil || $0!.piece > piece { $0 = (piece, error) } }
                    lastPiece.min(piece - 1, ordering: .relaxed)
                }
            }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            candidates?[reader].reset()
            // Every piece before this one lowered `lastPiece`, if it did, before it passed
            // the turn on: after the wait, whether this piece counts is settled.
            waitComputingAhead(hashTurn[reader], piece: bytes, reader: reader)
            let counts = piece <= lastPiece.load(ordering: .relaxed)
            if counts && count > 0 {
                fileHasher.update(bytes)
                total += Int64(count)
            }
            hashTurn[other].signal()
            waitComputingAhead(consumeTurn[reader], piece: bytes, reader: reader)
            if counts && count > 0 { consumer.consume(bytes, ahead: candidates?[reader]) }
            consumeTurn[other].signal()
            guard counts && count == wanted else { return }
            piece += 2
        }
    }

    /// Takes `turn`, computing the piece's cut candidates a section at a time until it comes
    /// (one section before the first look, which keeps a little search off the ordered
    /// turns even when they come at once): time spent waiting becomes search work the
    /// consumer then skips. The
    /// sections not computed by then are searched in the consumer's turn, which skips each
    /// chunk's first 256 KiB, so on a host where the turns come quickly the search stays
    /// at the bytes the rule needs.
    private func waitComputingAhead(_ turn: SpinningSemaphore, piece: UnsafeRawBufferPointer, reader: Int) {
        if let candidates, !piece.isEmpty {
            while candidates[reader].computeNext(of: piece, parameters: parameters) {
                if turn.tryWait() { return }
            }
        }
        turn.wait()
    }
}

/// A `ContentHasher` that two threads can take turns feeding (a class: the hasher itself is
/// non-copyable and cannot be shared). Whoever feeds it must be ordered after the previous
/// feeder, as `PairedFileReading`'s turns order them; hence `@unchecked Sendable`.
final class SharedContentHasher: @unchecked Sendable {
    private let hasher = ContentHasher()

    func reset() { hasher.reset() }
    func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bytes) }
    func digest() -> ContentHash { hasher.digest() }
}
