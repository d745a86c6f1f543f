/// A reusable, page-aligned I/O buffer.
///
/// Streaming code allocates one per worker and reuses it for every chunk, so memory
/// stays at one buffer per thread whatever the file sizes. Not thread-safe: one owner.
public final class ChunkBuffer {
    /// The chunk size of every streaming path: 1 MiB. Large enough that the syscall cost
    /// vanishes next to the copy, small enough for many workers and for coarse progress.
    public static let defaultSize = 1 << 20

    public let bytes: UnsafeMutableRawBufferPointer

    public init(size: Int = ChunkBuffer.defaultSize) {
        bytes = .allocate(byteCount: size, alignment: 4096)
    }

    deinit { bytes.deallocate() }

    public var count: Int { bytes.count }
}

extension FileDescriptor {
    /// Reads the file from its current offset to its end in chunks of `buffer.count`,
    /// calling `body` with each chunk (valid only during the call).
    ///
    /// - Complexity: one `read` per chunk; memory is the buffer alone.
    public func forEachChunk(
        using buffer: ChunkBuffer, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        while true {
            let count = try readFully(into: buffer.bytes)
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer.bytes[..<count]))
            if count < buffer.count { return }
        }
    }
}
