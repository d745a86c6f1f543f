/// One content-defined chunk of a file: where it lies and the XXH3-128 of its bytes.
public struct FileChunk: Sendable, Hashable {
    /// Where the chunk starts in the file.
    public var offset: Int64
    /// The chunk's size in bytes (never 0).
    public var length: Int64
    /// The XXH3-128 of the chunk's bytes.
    public var hash: ContentHash

    /// A chunk at `offset`, `length` bytes long, whose bytes hash to `hash`.
    public init(offset: Int64, length: Int64, hash: ContentHash) {
        self.offset = offset
        self.length = length
        self.hash = hash
    }

    /// The offset just past the chunk.
    public var end: Int64 { offset + length }
    /// The bytes the chunk covers.
    public var range: Range<Int64> { offset..<end }
}

/// A large file's chunks, in order, covering it from offset 0 without gaps.
///
/// One array reference: an entry without a list costs 8 bytes of nil.
public struct ChunkList: Sendable, Hashable, RandomAccessCollection {
    /// The chunks, in file order.
    public let chunks: [FileChunk]

    /// Chunks in order; each must start where the previous one ended, the first at 0.
    public init(_ chunks: [FileChunk]) {
        precondition(Self.isContiguous(chunks), "chunks must cover the file in order, from offset 0")
        self.chunks = chunks
    }

    /// Chunks already known to be contiguous from 0 (a decoder that built the offsets).
    init(contiguous chunks: [FileChunk]) { self.chunks = chunks }

    static func isContiguous(_ chunks: [FileChunk]) -> Bool {
        var expected: Int64 = 0
        for chunk in chunks {
            guard chunk.offset == expected, chunk.length > 0 else { return false }
            expected = chunk.end
        }
        return true
    }

    /// The first chunk's index (0).
    public var startIndex: Int { chunks.startIndex }
    /// One past the last chunk's index.
    public var endIndex: Int { chunks.endIndex }
    /// The chunk at `position`.
    public subscript(position: Int) -> FileChunk { chunks[position] }

    /// The bytes the chunks cover: the file's size.
    public var totalLength: Int64 { chunks.last?.end ?? 0 }
}
