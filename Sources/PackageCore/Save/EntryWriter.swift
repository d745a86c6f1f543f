import Glibc

/// Writes the entries a save creates: regular files streamed in 1 MiB chunks (hashed in
/// the same pass when their hash is not yet known), symbolic links and directories.
///
/// One per saving thread: it owns the reused buffer.
final class EntryWriter {
    let buffer = ChunkBuffer()
    let durability: Durability
    let progress: SaveProgressTracker

    init(durability: Durability, progress: SaveProgressTracker) {
        self.durability = durability
        self.progress = progress
    }

    /// What writing a file produced.
    struct Written {
        var status: FileStatus
        var hash: ContentHash
        var size: Int64
    }

    /// Creates the regular file `name` in `directory` (never replacing an existing name)
    /// with the bytes of `origin`, the given permissions and modification time, and
    /// fsyncs it when durability asks. When `expected` is given, the bytes written must
    /// match its size (and its hash when hashing was needed): a source that changed under
    /// the save fails it instead of saving something no one saw.
    ///
    /// - Complexity: one chunked copy (`copy_file_range` from a file, or `write` from memory).
    func writeFile(
        _ origin: ContentOrigin, named name: String, in directory: Int32, displayPath: String,
        permissions: UInt32, modificationTime: Int64?, expected: (hash: ContentHash, size: Int64)?
    ) throws -> Written {
        let file = try FileDescriptor.open(
            name, relativeTo: directory, access: .writeOnly, options: [.create, .exclusive, .noFollow],
            permissions: 0o600, displayPath: displayPath)
        var hash: ContentHash
        var size: Int64
        switch origin {
        case .file(let path, let seen):
            let source = try FileDescriptor.open(path, options: [.noFollow, .nonBlocking])
            let sourceStatus = try source.status()
            guard sourceStatus.kind == .regular else {
                throw FileSystemError(.read, path: path, reason: "is a \(sourceStatus.kind), not a regular file")
            }
            if let seen,
                seen.inode != sourceStatus.inode || seen.size != sourceStatus.size
                    || seen.modificationTime != sourceStatus.modificationTime
            {
                throw SaveRefusal("'\(path)' changed while it was being saved; save again")
            }
            let hashing = expected == nil
            let outcome = try FileCopy.copy(
                from: source, to: file, buffer: buffer, hashing: hashing,
                expectedSize: expected?.size ?? sourceStatus.size
            ) { [progress] bytes in progress.chunkWritten(bytes) }
            size = outcome.bytes
            hash = outcome.hash ?? expected?.hash ?? .empty
            if let expected, size != expected.size || hash != expected.hash {
                throw SaveRefusal(
                    "'\(path)' changed while it was being saved (expected \(expected.size) bytes, read \(size)); save again")
            }
        case .bytes(let bytes):
            let hasher = ContentHasher()
            var offset = 0
            try bytes.withUnsafeBytes { raw in
                repeat {
                    let end = min(raw.count, offset + buffer.count)
                    let chunk = UnsafeRawBufferPointer(rebasing: raw[offset..<end])
                    hasher.update(chunk)
                    try file.write(chunk)
                    progress.chunkWritten(Int64(chunk.count))
                    offset = end
                } while offset < raw.count
            }
            hash = hasher.digest()
            size = Int64(bytes.count)
        }
        try file.setPermissions(permissions)
        if let modificationTime { try file.setModificationTime(modificationTime) }
        if durability == .full { try file.sync() }
        let status = try file.status()
        try file.close()
        progress.fileWritten()
        return Written(status: status, hash: hash, size: size)
    }

    /// Creates a symbolic link `name` in `directory` pointing at `target`.
    func writeSymbolicLink(target: String, named name: String, in directory: Int32) throws -> FileStatus {
        try FileSystem.makeSymbolicLink(name, target: target, relativeTo: directory)
        progress.fileWritten()
        return try FileSystem.status(name, relativeTo: directory)
    }
}

/// Counts coarse progress (files and 1 MiB chunks) and reports it to the caller.
final class SaveProgressTracker: @unchecked Sendable {
    // @unchecked: mutated only by the saving thread; the callback receives value copies.
    private var state = SaveProgress(
        totalUnits: 0, completedUnits: 0, totalFiles: 0, completedFiles: 0, totalBytes: 0, completedBytes: 0)
    private var pendingBytes: Int64 = 0
    private let report: (@Sendable (SaveProgress) -> Void)?

    init(report: (@Sendable (SaveProgress) -> Void)?) { self.report = report }

    /// Sets the totals: each file is a unit, and so is each 1 MiB of bytes to write.
    func plan(files: Int, bytes: Int64) {
        state.totalFiles = files
        state.totalBytes = bytes
        state.totalUnits = files + Int((bytes + Int64(ChunkBuffer.defaultSize) - 1) / Int64(ChunkBuffer.defaultSize))
        report?(state)
    }

    func chunkWritten(_ bytes: Int64) {
        state.completedBytes += bytes
        pendingBytes += bytes
        let chunk = Int64(ChunkBuffer.defaultSize)
        if pendingBytes >= chunk {
            state.completedUnits = min(state.totalUnits, state.completedUnits + Int(pendingBytes / chunk))
            pendingBytes %= chunk
            report?(state)
        }
    }

    func fileWritten() {
        state.completedFiles += 1
        state.completedUnits = min(state.totalUnits, state.completedUnits + 1)
        report?(state)
    }

    /// Several files done at once (linked on other threads): one report.
    func filesWritten(_ count: Int) {
        guard count > 0 else { return }
        state.completedFiles += count
        state.completedUnits = min(state.totalUnits, state.completedUnits + count)
        report?(state)
    }

    func finish() {
        state.completedUnits = state.totalUnits
        state.completedFiles = state.totalFiles
        state.completedBytes = max(state.completedBytes, state.totalBytes)
        report?(state)
    }
}
