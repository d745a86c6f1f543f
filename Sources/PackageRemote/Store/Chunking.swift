import PackageCore

/// How files are cut into the blobs a remote stores: the seam where PackageCore's
/// content-defined chunker plugs in (issue 13, branch `chunks`).
///
/// Until it lands, files above `wholeFileLimit` are cut into fixed pieces of
/// `fixedChunkSize` (1 MiB): a change made in place (a media editor rewriting a header, a
/// track, a tail) then costs the pieces it touches, but an insertion shifts every later
/// piece. Content-defined boundaries fix that without changing anything else here: a
/// remote may hold blobs of both kinds (each blob is named by its own SHA-256), only
/// deduplication across the switch is lost.
public struct Chunking: Sendable, Equatable {
    /// Files up to this size are one blob.
    public var wholeFileLimit: Int64
    public var fixedChunkSize: Int64

    public init(wholeFileLimit: Int64 = 1 << 20, fixedChunkSize: Int64 = 1 << 20) {
        self.wholeFileLimit = wholeFileLimit
        self.fixedChunkSize = fixedChunkSize
    }

    /// The largest piece this policy makes: the least a pack buffer must hold.
    public var maximumPiece: Int64 { max(wholeFileLimit, fixedChunkSize) }

    /// The byte ranges of the file open as `descriptor`, `size` bytes long, in order.
    /// An empty file has none.
    /// - Complexity: no I/O for fixed pieces (a content-defined chunker reads the file once).
    func pieces(of descriptor: borrowing FileDescriptor, size: Int64) throws -> [Range<Int64>] {
        guard size > 0 else { return [] }
        guard size > wholeFileLimit else { return [0..<size] }
        return stride(from: Int64(0), to: size, by: Int(fixedChunkSize)).map { $0..<min($0 + fixedChunkSize, size) }
    }
}
