import Glibc

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
/// while copying.
///
/// From 4 MiB on (known from `reset(expectedSize:)`, or once that much was fed) and with
/// two cores or more, a helper thread (`ChunkingHelper`) takes part. Reading a file
/// (`ContentHash.ofFileWithChunks`), both threads read it, alternate 1 MiB pieces each,
/// and take turns feeding the file hash and the cut search in order
/// (`PairedFileReading`). Fed bytes (`update`), the cut search and the chunk hashes run on
/// the helper while the calling thread hashes the file: pieces of up to 2 MiB are copied
/// into the helper's slots (bounded: six of 1 MiB), larger ones are lent to it until the
/// call returns. The helper thread is created on first use and kept, parked, until the
/// hasher goes away.
///
/// Non-copyable: it owns an XXH3 state, a chunk cutter and maybe a thread.
package struct ChunkingHasher: ~Copyable {
    private let fileHasher = SharedContentHasher()
    private let cutter: ChunkCutter
    private var helper: ChunkingHelper?
    /// Whether the helper takes the current file's pieces.
    private var helped = false
    /// Whether the next file may use the helper thread (true unless the caller says its
    /// other threads keep every core busy; a scan decides it file by file).
    package var mayUseHelper = true
    /// Whether creating the helper failed: not tried again.
    private var helperUnavailable = false
    private var offset: Int64 = 0
    /// False when the caller said the file is below the threshold: only the hash is computed.
    private var chunking = true
    private var expectedSize: Int64?
    let helpFrom: Int64
    /// The helper's slots (`ChunkingHelper.defaultSlotCount` unless a benchmark compares).
    let helperSlots: Int

    /// When a file is large enough for the helper thread to pay (its start, its hand-offs).
    static let defaultHelpFrom: Int64 = 4 << 20
    /// Pieces at least this long are lent to the helper instead of copied.
    static let lendFrom = 2 * ChunkingHelper.slotSize

    package init(parameters: ChunkingParameters = .standard) {
        self.init(parameters: parameters, helpFrom: Self.defaultHelpFrom)
    }

    /// `helperThread: false` keeps all the work on the calling thread: for callers that
    /// already keep every core busy, and for comparisons.
    package init(parameters: ChunkingParameters = .standard, helperThread: Bool) {
        self.init(parameters: parameters, helpFrom: helperThread ? Self.defaultHelpFrom : .max)
    }

    /// `helpFrom`: the size from which the helper thread takes part (`Int64.max`: never);
    /// tests lower it to run small inputs through the helper.
    init(parameters: ChunkingParameters, helpFrom: Int64, helperSlots: Int = ChunkingHelper.defaultSlotCount) {
        cutter = ChunkCutter(parameters: parameters)
        self.helpFrom = ProcessInfoCores.active < 2 ? .max : helpFrom
        self.helperSlots = max(2, helperSlots)
    }

    /// A hasher whose helper thread has `helperSlots` slots of 1 MiB: for benchmarks that
    /// weigh the hand-off buffer.
    package init(parameters: ChunkingParameters = .standard, helperSlots: Int) {
        self.init(parameters: parameters, helpFrom: Self.defaultHelpFrom, helperSlots: helperSlots)
    }

    package var parameters: ChunkingParameters { cutter.parameters }

    /// Starts a new file. With `expectedSize` below the threshold no chunk list is computed
    /// (a file that turns out larger then simply gets none).
    package mutating func reset(expectedSize: Int64? = nil) {
        // A file abandoned half-way (an error) may still have pieces with the helper.
        if helped { helper?.drain() }
        helped = false
        fileHasher.reset()
        cutter.reset()
        offset = 0
        chunking = expectedSize.map { $0 >= parameters.fileThreshold } ?? true
        self.expectedSize = expectedSize
    }

    /// The bytes fed so far.
    package var count: Int64 { offset }

    /// Feeds the next bytes of the file.
    ///
    /// - Complexity: O(bytes): XXH3 over them, and (on the helper thread when the file is
    ///   large) the Gear search over the bytes past each chunk's minimum size and XXH3
    ///   again; a piece below 2 MiB is copied once into the helper's slots.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        offset += Int64(bytes.count)
        guard chunking else {
            fileHasher.update(bytes)
            return
        }
        if !helped { startHelping(atLeast: offset) }
        guard helped, let helper else {
            cutter.consume(bytes)
            fileHasher.update(bytes)
            return
        }
        if bytes.count >= Self.lendFrom {
            helper.lend(bytes)
            fileHasher.update(bytes)
            helper.drain()
            return
        }
        var position = 0
        while position < bytes.count {
            let slot = helper.nextSlot()
            let count = min(slot.count, bytes.count - position)
            slot.baseAddress!.copyMemory(from: bytes.baseAddress! + position, byteCount: count)
            helper.submit(count: count)
            position += count
        }
        fileHasher.update(bytes)
    }

    /// The file's hash, size and (from the threshold on) chunk list; the hasher is reset
    /// for the next file.
    package mutating func finish() -> ChunkedDigest {
        if helped { helper?.drain() }
        let hash = fileHasher.digest()
        var list: ChunkList?
        if chunking && offset >= parameters.fileThreshold {
            list = ChunkList(cutter.finish())
        }
        let digest = ChunkedDigest(hash: hash, size: offset, chunks: list)
        reset()
        return digest
    }

    /// Reads the rest of `file` and feeds every piece, as `FileDescriptor.forEachChunk`
    /// would read it into `buffer`; a large file is read by both threads at once
    /// (`PairedFileReading`). Returns the bytes read. After an error, `reset` before reuse.
    ///
    /// - Complexity: one `read` (or `pread`) per 1 MiB.
    mutating func consume(
        _ file: borrowing FileDescriptor, buffer: ChunkBuffer, expectedSize: Int64?
    ) throws(FileSystemError) -> Int64 {
        if chunking, let expectedSize { startHelping(atLeast: expectedSize) }
        guard helped, let helper, let expectedSize, let start = Self.offset(of: file) else {
            return try file.forEachChunk(using: buffer, expectedSize: expectedSize) { update($0) }
        }
        let total = try readPaired(file, from: start, size: expectedSize, helper: helper, consumer: cutter)
        offset += total
        return total
    }

    /// Reads `size` bytes of `file` from `start` on both threads, feeding the file hash and
    /// `consumer` in order, then leaves the file offset after them (as a sequential read
    /// would). Returns the bytes read: fewer when the file ended early.
    private mutating func readPaired(
        _ file: borrowing FileDescriptor, from start: Int64, size: Int64, helper: ChunkingHelper,
        consumer: any PieceConsumer
    ) throws(FileSystemError) -> Int64 {
        let (buffers, candidates) = helper.pairedBuffers
        let job = PairedFileReading(
            descriptor: file.rawValue, path: file.path, start: start, size: size, buffers: buffers,
            candidates: consumer === cutter ? candidates : nil, parameters: parameters, fileHasher: fileHasher,
            consumer: consumer)
        helper.read(job)
        if let failure = job.failure { throw failure }
        _ = try file.seek(to: start + job.total)
        return job.total
    }

    /// The file's current offset; nil for a file that has none (a pipe), which is then
    /// read sequentially.
    private static func offset(of file: borrowing FileDescriptor) -> Int64? {
        try? file.currentOffset()
    }

    /// Reads all of `file` on both threads and hashes it, while the chunks `previous`
    /// expects are checked (`HintedPieces`): what `ContentHash.ofFileWithChunks(…,
    /// previous:)` does on one thread, on two. Nil, having read nothing, when the helper
    /// does not take part (a small file, one core). After an error, `reset` before reuse.
    mutating func consumeHinted(
        _ file: borrowing FileDescriptor, expectedSize: Int64?, previous: ChunkList
    ) throws(FileSystemError) -> (digest: ChunkedDigest, searched: Int64, reread: Int64)? {
        reset(expectedSize: expectedSize)
        guard chunking, let expectedSize else { return nil }
        startHelping(atLeast: expectedSize)
        guard helped, let helper, let start = Self.offset(of: file) else { return nil }
        let job = try HintedPieces(parameters: parameters, previous: previous, reading: file)
        let total = try readPaired(file, from: start, size: expectedSize, helper: helper, consumer: job)
        let chunks = try job.finish(total: total)
        let hash = fileHasher.digest()
        let list = total >= parameters.fileThreshold && !chunks.isEmpty ? ChunkList(chunks) : nil
        let digest = ChunkedDigest(hash: hash, size: total, chunks: list)
        reset()
        return (digest, job.searchedBytes, job.reread)
    }

    /// Hands the current file to the helper from now on when it is at least `helpFrom`
    /// long (as far as known: `size` bytes), creating the helper on first use.
    private mutating func startHelping(atLeast size: Int64) {
        guard !helped, !helperUnavailable, mayUseHelper, max(size, expectedSize ?? 0) >= helpFrom else { return }
        if helper == nil {
            helper = ChunkingHelper(cutter: cutter, slots: helperSlots)
            helperUnavailable = helper == nil
        }
        helped = helper != nil
    }
}
