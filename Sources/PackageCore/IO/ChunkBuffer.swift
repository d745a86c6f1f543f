/// A reusable, page-aligned I/O buffer.
///
/// Streaming code allocates one per worker and reuses it for every chunk, so memory
/// stays at one buffer per thread whatever the file sizes. Not thread-safe: one owner.
package final class ChunkBuffer {
    /// The chunk size of every streaming path: 1 MiB. Large enough that the syscall cost
    /// vanishes next to the copy, small enough for many workers and for coarse progress.
    package static let defaultSize = 1 << 20

    package let bytes: UnsafeMutableRawBufferPointer

    package init(size: Int = ChunkBuffer.defaultSize) {
        bytes = .allocate(byteCount: size, alignment: 4096)
    }

    deinit { bytes.deallocate() }

    package var count: Int { bytes.count }
}

extension FileDescriptor {
    /// Reads the file from its current offset to its end in chunks of `buffer.count`,
    /// calling `body` with each chunk (valid only during the call). Returns the bytes read.
    ///
    /// With `expectedSize` (from a `stat` just taken), reading stops once that many bytes
    /// arrived, as git does, saving the end-of-file probe: one `read` for a small file
    /// instead of two. A file that shrank meanwhile stops early.
    /// - Complexity: one `read` per chunk; memory is the buffer alone.
    @discardableResult
    package func forEachChunk(
        using buffer: ChunkBuffer, expectedSize: Int64? = nil,
        _ body: (UnsafeRawBufferPointer) throws(FileSystemError) -> Void
    ) throws(FileSystemError) -> Int64 {
        var total: Int64 = 0
        while true {
            var wanted = buffer.count
            if let expectedSize {
                if total >= expectedSize { break }
                wanted = Int(min(Int64(buffer.count), expectedSize - total))
            }
            let count = try readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<wanted]))
            if count == 0 { break }
            try body(UnsafeRawBufferPointer(rebasing: buffer.bytes[..<count]))
            total += Int64(count)
            if count < wanted { break }
        }
        return total
    }
}
