import PackageCore

/// How files are cut into the blobs a remote stores: PackageCore's content-defined chunks
/// (Specs/hashing.md: FastCDC-style Gear cuts, 256 KiB minimum, about 1 MiB average, 4 MiB
/// maximum, for files of 4 MiB and more); smaller files are one blob.
///
/// The same cuts as the package's manifest records, so a push usually finds them in the scan
/// it made anyway (`SnapshotEntry.chunks`) and reads nothing to cut; an insertion in a media
/// file shifts only the chunks around it, not every later one. Blobs are named by their
/// bytes: a remote may hold blobs cut otherwise (the fixed 1 MiB pieces of the first
/// version of this code), only deduplication across the two is lost.
package struct Chunking: Sendable, Equatable {
    package var parameters: ChunkingParameters

    package init(parameters: ChunkingParameters = .standard) {
        self.parameters = parameters
    }

    /// The largest piece this policy makes: the least a read buffer must hold.
    package var maximumPiece: Int64 { max(parameters.fileThreshold, Int64(parameters.maximumSize)) }

    /// Files below this size are one blob.
    var wholeFileLimit: Int64 { parameters.fileThreshold - 1 }

    /// The byte ranges of the file open as `descriptor`, `size` bytes long, in order. An
    /// empty file has none. `known` is the chunk list a scan or manifest has for the file.
    /// - Complexity: nothing read when the file is small or `known` covers it; otherwise one
    ///   read of the file through the chunker.
    func pieces(of descriptor: borrowing FileDescriptor, size: Int64, known: ChunkList?) throws -> [Range<Int64>] {
        guard size > 0 else { return [] }
        guard size >= parameters.fileThreshold else { return [0..<size] }
        // A scan's lists are cut with the standard parameters; other ones cut afresh.
        if let known, parameters == .standard, known.totalLength == size { return known.map(\.range) }
        var chunker = ChunkingHasher(parameters: parameters)
        let digest = try ContentHash.ofFileWithChunks(
            descriptor, buffer: ChunkBuffer(), expectedSize: size, chunker: &chunker)
        guard let chunks = digest.chunks, chunks.totalLength == size else { return [0..<size] }
        return chunks.map(\.range)
    }
}
