import CSystemShims
import Glibc

/// Streams bytes from one open file to another: in the kernel with `copy_file_range`
/// when the bytes need not pass through us, or through a reused buffer when they must be
/// hashed on the way.
package enum FileCopy {
    /// What a copy moved.
    package struct Outcome: Sendable {
        package var bytes: Int64
        /// The hash of the bytes copied, when asked for.
        package var hash: ContentHash?
        /// Whether the kernel copied in place (`copy_file_range`) rather than through the buffer.
        package var inKernel: Bool
    }

    /// Copies from `source`'s current offset to its end into `destination` at its offset,
    /// in chunks of `buffer.count`, calling `chunkCompleted` after each chunk.
    ///
    /// - Parameters:
    ///   - hashing: hash the bytes in the same pass (forces the buffered path).
    ///   - expectedSize: stop after this many bytes (the size a `stat` promised).
    /// - Complexity: one `copy_file_range`, or one `read` and one `write`, per chunk;
    ///   memory is `buffer` alone.
    package static func copy(
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
        var sourceOffset = try source.currentOffset()
        var destinationOffset = try destination.currentOffset()
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
    package static func copyRange(
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

extension FileCopy {
    /// Streams the first `size` bytes of `source` into the empty `destination`, both from
    /// offset 0, feeding every byte to `hash` in the same pass: the hash describes exactly
    /// what was written, never a second read of a file that may have changed meanwhile.
    ///
    /// With `sparse` (the source holds fewer blocks than its size says), holes are found
    /// with `SEEK_DATA`/`SEEK_HOLE` and left as holes in the copy (as `cp --sparse=auto`
    /// does); they hash as the zeros they read as.
    ///
    /// - Parameter chunkCompleted: after each chunk of at most `buffer.count` bytes (data or
    ///   hole), with its length; may throw to stop the copy (cancellation).
    /// - Throws: `FileSystemError`; with reason "it became shorter while it was being
    ///   copied" when the source ends before `size`.
    /// - Complexity: one `pread`, one `pwrite` and one hash update per chunk of data; two
    ///   `lseek` per data segment of a sparse file; memory is `buffer` alone.
    package static func copyHashing(
        from source: borrowing FileDescriptor, size: Int64, sparse: Bool, to destination: borrowing FileDescriptor,
        buffer: ChunkBuffer, hash: (UnsafeRawBufferPointer) -> Void, chunkCompleted: (Int64) throws -> Void
    ) throws {
        var offset: Int64 = 0
        var endsInHole = false
        while offset < size {
            var dataStart = offset
            var dataEnd = size
            if sparse {
                dataStart = try nextData(in: source, from: offset) ?? size
                dataEnd = dataStart < size ? min(size, try nextHole(in: source, from: dataStart)) : size
            }
            // The hole before the data: zeros to the hash, nothing written.
            while offset < dataStart {
                let length = Int(min(Int64(ZeroBytes.count), dataStart - offset))
                hash(UnsafeRawBufferPointer(rebasing: ZeroBytes.buffer[..<length]))
                offset += Int64(length)
                endsInHole = true
                try chunkCompleted(Int64(length))
            }
            while offset < dataEnd {
                let wanted = Int(min(Int64(buffer.count), dataEnd - offset))
                let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<wanted])
                let count = try source.readFully(into: chunk, at: offset)
                guard count == wanted else {
                    throw FileSystemError(.read, path: source.path, reason: "it became shorter while it was being copied")
                }
                let bytes = UnsafeRawBufferPointer(chunk)
                hash(bytes)
                try destination.write(bytes, at: offset)
                offset += Int64(count)
                endsInHole = false
                try chunkCompleted(Int64(count))
            }
        }
        // A trailing hole: the size comes from the length, not from a write.
        if endsInHole { try destination.truncate(to: size) }
    }

    /// The offset of the first data at or after `offset`, nil when only a hole follows.
    private static func nextData(in file: borrowing FileDescriptor, from offset: Int64) throws(FileSystemError) -> Int64? {
        do throws(Errno) { return try Syscall.lseek(file.rawValue, offset, PKG_SEEK_DATA) } catch {
            if error == Errno(rawValue: ENXIO) { return nil }
            throw FileSystemError(.seek, path: file.path, errno: error)
        }
    }

    /// The offset of the first hole at or after `offset` (the end of the file counts as one).
    private static func nextHole(in file: borrowing FileDescriptor, from offset: Int64) throws(FileSystemError) -> Int64 {
        do throws(Errno) { return try Syscall.lseek(file.rawValue, offset, PKG_SEEK_HOLE) } catch {
            throw FileSystemError(.seek, path: file.path, errno: error)
        }
    }
}

/// One MiB of zeros, shared and never written: what holes of sparse files hash as.
enum ZeroBytes {
    static let count = 1 << 20
    nonisolated(unsafe) static let buffer: UnsafeMutableRawBufferPointer = {
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 4096)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        return zeros
    }()
}

extension FileCopy {
    /// Makes the empty `destination` a clone of `source` (`ioctl(FICLONE)`): on XFS and btrfs
    /// the two share every extent and no data is written; later writes to either copy only
    /// the blocks they touch. Returns false, changing nothing, where the file system has no
    /// reflinks (ext4: EOPNOTSUPP; another file system: EXDEV; EINVAL, ENOTTY).
    ///
    /// - Complexity: one `ioctl`, in proportion to the file's extents, not its bytes.
    package static func cloneIfPossible(
        from source: borrowing FileDescriptor, to destination: borrowing FileDescriptor
    ) throws(FileSystemError) -> Bool {
        do {
            try Syscall.ficlone(destination.rawValue, from: source.rawValue, path: destination.path)
            return true
        } catch {
            let unsupported: Set<Errno> = [.notSupported, .crossDevice, .invalidArgument, Errno(rawValue: ENOTTY), .notPermitted]
            if unsupported.contains(error) { return false }
            throw FileSystemError(.copy, path: source.path, destination: destination.path, errno: error, reason: "FICLONE")
        }
    }
}
