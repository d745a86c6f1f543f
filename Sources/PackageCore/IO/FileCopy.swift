import Glibc

/// Streams bytes from one open file to another: in the kernel with `copy_file_range`
/// when the bytes need not pass through us, or through a reused buffer when they must be
/// hashed on the way.
public enum FileCopy {
    /// What a copy moved.
    public struct Outcome: Sendable {
        public var bytes: Int64
        /// The hash of the bytes copied, when asked for.
        public var hash: ContentHash?
        /// Whether the kernel copied in place (`copy_file_range`) rather than through the buffer.
        public var inKernel: Bool
    }

    /// Copies from `source`'s current offset to its end into `destination` at its offset,
    /// in chunks of `buffer.count`, calling `chunkCompleted` after each chunk.
    ///
    /// - Parameters:
    ///   - hashing: hash the bytes in the same pass (forces the buffered path).
    ///   - expectedSize: stop after this many bytes (the size a `stat` promised).
    /// - Complexity: one `copy_file_range`, or one `read` and one `write`, per chunk;
    ///   memory is `buffer` alone.
    public static func copy(
        from source: borrowing FileDescriptor, to destination: borrowing FileDescriptor, buffer: ChunkBuffer,
        hashing: Bool, expectedSize: Int64? = nil, chunkCompleted: ((Int64) -> Void)? = nil
    ) throws(FileSystemError) -> Outcome {
        if !hashing {
            if let outcome = try copyInKernel(
                from: source, to: destination, chunk: buffer.count, expectedSize: expectedSize,
                chunkCompleted: chunkCompleted)
            {
                return outcome
            }
        }
        let hasher = ContentHasher()
        let total = try source.forEachChunk(using: buffer, expectedSize: expectedSize) {
            (chunk) throws(FileSystemError) in
            if hashing { hasher.update(chunk) }
            try destination.write(chunk)
            chunkCompleted?(Int64(chunk.count))
        }
        return Outcome(bytes: total, hash: hashing ? hasher.digest() : nil, inKernel: false)
    }

    /// `copy_file_range` in chunks; nil (nothing copied) when the kernel or file system
    /// cannot, so that the caller falls back to the buffer.
    private static func copyInKernel(
        from source: borrowing FileDescriptor, to destination: borrowing FileDescriptor, chunk: Int,
        expectedSize: Int64?, chunkCompleted: ((Int64) -> Void)?
    ) throws(FileSystemError) -> Outcome? {
        var sourceOffset = try source.seek(to: 0, from: SEEK_CUR)
        var destinationOffset = try destination.seek(to: 0, from: SEEK_CUR)
        let start = sourceOffset
        while true {
            var wanted = chunk
            if let expectedSize {
                if sourceOffset - start >= expectedSize { break }
                wanted = Int(min(Int64(chunk), expectedSize - (sourceOffset - start)))
            }
            let count: Int
            do {
                count = try Syscall.copyFileRange(
                    source.rawValue, &sourceOffset, destination.rawValue, &destinationOffset, wanted,
                    path: destination.path)
            } catch {
                let unsupported: Set<Errno> = [.crossDevice, .notSupported, .notImplemented, .invalidArgument]
                if sourceOffset == start && unsupported.contains(error) { return nil }
                throw FileSystemError(.copy, path: source.path, destination: destination.path, errno: error)
            }
            if count == 0 { break }
            chunkCompleted?(Int64(count))
        }
        // copy_file_range with explicit offsets leaves the descriptors' offsets alone.
        try source.seek(to: sourceOffset)
        try destination.seek(to: destinationOffset)
        return Outcome(bytes: sourceOffset - start, hash: nil, inKernel: true)
    }
}

extension FileCopy {
    /// Copies `length` bytes from `source` at `sourceOffset` to `destination` at
    /// `destinationOffset`, leaving both descriptors' offsets alone, so that several threads
    /// can fill disjoint ranges of one file at once. In the kernel (`copy_file_range`) where
    /// possible, else through `buffer` with `pread` and `pwrite`.
    ///
    /// Takes raw descriptors (owned elsewhere, kept open by the caller for the call's
    /// duration) and their paths for messages.
    /// - Complexity: one `copy_file_range` per `buffer.count` bytes, or one `pread` and one
    ///   `pwrite`; memory is `buffer` alone.
    public static func copyRange(
        from source: Int32, path sourcePath: String, at sourceOffset: Int64,
        to destination: Int32, path destinationPath: String, at destinationOffset: Int64,
        length: Int64, buffer: ChunkBuffer
    ) throws(FileSystemError) {
        var input = sourceOffset
        var output = destinationOffset
        let end = sourceOffset + length
        var inKernel = true
        while input < end {
            let wanted = Int(min(Int64(buffer.count), end - input))
            if inKernel {
                do {
                    let count = try Syscall.copyFileRange(source, &input, destination, &output, wanted, path: destinationPath)
                    if count == 0 {
                        throw FileSystemError(.copy, path: sourcePath, destination: destinationPath, reason: "the source ended early")
                    }
                    continue
                } catch let error as Errno {
                    let unsupported: Set<Errno> = [.crossDevice, .notSupported, .notImplemented, .invalidArgument]
                    guard unsupported.contains(error) else {
                        throw FileSystemError(.copy, path: sourcePath, destination: destinationPath, errno: error)
                    }
                    inKernel = false
                } catch let error as FileSystemError {
                    throw error
                } catch {
                    throw FileSystemError(.copy, path: sourcePath, destination: destinationPath, reason: "\(error)")
                }
            }
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<wanted])
            var filled = 0
            while filled < wanted {
                let count: Int
                do {
                    count = try Syscall.pread(
                        source, UnsafeMutableRawBufferPointer(rebasing: chunk[filled...]), input + Int64(filled), path: sourcePath)
                } catch { throw FileSystemError(.read, path: sourcePath, errno: error) }
                if count == 0 {
                    throw FileSystemError(.copy, path: sourcePath, destination: destinationPath, reason: "the source ended early")
                }
                filled += count
            }
            var written = 0
            while written < wanted {
                do {
                    written += try Syscall.pwrite(
                        destination, UnsafeRawBufferPointer(rebasing: chunk[written..<wanted]), output + Int64(written),
                        path: destinationPath)
                } catch { throw FileSystemError(.write, path: destinationPath, errno: error) }
            }
            input += Int64(wanted)
            output += Int64(wanted)
        }
    }
}
