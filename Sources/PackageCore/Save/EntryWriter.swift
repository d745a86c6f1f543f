import Glibc

/// Writes the entries a save creates: regular files streamed in 1 MiB chunks and hashed in
/// the same pass, symbolic links and directories.
///
/// One per saving thread: it owns the reused buffer and hash state. Large files get their
/// content-defined chunk list in the same pass (`ChunkingHasher`), for the manifest.
final class EntryWriter {
    let buffer = ChunkBuffer()
    var hasher = ChunkingHasher()
    let durability: Durability
    let progress: SaveProgressTracker
    /// Called between chunks: throws to stop the save (cancellation).
    let checkpoint: () throws -> Void
    /// Set by a save that writes many files: they are not fsynced one by one, and the save
    /// makes them durable together (syncfs) before its commit (`SaveContext.makeDurable`).
    var defersFileSync = false

    init(durability: Durability, progress: SaveProgressTracker, checkpoint: @escaping () throws -> Void) {
        self.durability = durability
        self.progress = progress
        self.checkpoint = checkpoint
    }

    /// What writing a file produced.
    struct Written {
        var status: FileStatus
        var size: Int64
        /// The chunk list of what was written (files of at least 4 MiB).
        var chunks: ChunkList? = nil
    }

    /// Creates the regular file `name` in `directory` (never replacing an existing name)
    /// with the bytes of `origin`, the given permissions and modification time, and fsyncs
    /// it when durability asks.
    ///
    /// The bytes are hashed as they are written; unless they are exactly `expected` (size and
    /// hash), the save is refused: the source changed between the moment it was described
    /// and the moment it was copied. A file origin is also checked against the stat data seen
    /// then, and before and after the copy (size, modification and change time): a file
    /// rewritten in place during the copy — even to the same size — is refused, not saved as
    /// a mix of two versions. `displayPath` names the entry in the package for messages.
    ///
    /// - Complexity: one streamed copy in chunks of `buffer.count` (holes of a sparse file
    ///   skipped), one `fchmod`, `futimens`, `fsync` and `fstat`.
    func writeFile(
        _ origin: ContentOrigin, named name: String, in directory: Int32, displayPath: String,
        permissions: UInt32, modificationTime: Int64?, expected: (hash: ContentHash, size: Int64)
    ) throws -> Written {
        if case .adopt(let path, let verified) = origin,
            let adopted = try adopt(
                path, verified: verified, as: name, in: directory, displayPath: displayPath, permissions: permissions,
                modificationTime: modificationTime, expectedSize: expected.size)
        {
            return adopted
        }
        let file = try FileDescriptor.open(
            name, relativeTo: directory, access: .writeOnly, options: [.create, .exclusive, .noFollow],
            permissions: 0o600, displayPath: displayPath)
        hasher.reset(expectedSize: expected.size)
        let size = try copy(origin, into: file, expectedSize: expected.size)
        let digest = hasher.finish()
        let hash = digest.hash
        guard size == expected.size, hash == expected.hash else {
            throw SaveRefusal(
                path: origin.displayName ?? displayPath,
                reason: .sourceChanged("expected \(expected.size) bytes hashing \(expected.hash), read \(size) bytes hashing \(hash)"))
        }
        try file.setPermissions(permissions)
        if let modificationTime { try file.setModificationTime(modificationTime) }
        if durability == .full && !defersFileSync { try file.sync() }
        let status = try file.status()
        try file.close()
        progress.fileWritten()
        return Written(status: status, size: size, chunks: digest.chunks)
    }

    /// Copies the bytes of `origin` (anything but an adopted file on the same file system)
    /// into `file` through the hasher, reporting each chunk and checking cancellation after
    /// it; returns the number of bytes copied.
    private func copy(_ origin: ContentOrigin, into file: borrowing FileDescriptor, expectedSize: Int64) throws -> Int64 {
        var size: Int64 = 0
        let chunkDone: (Int64) throws -> Void = { [progress, checkpoint] bytes in
            progress.chunkWritten(bytes)
            try checkpoint()
        }
        switch origin {
        case .file(let path, let seen):
            size = try copyFile(path, seen: seen, expectedSize: expectedSize, into: file, chunkDone: chunkDone)
        case .adopt(let path, let verified):
            // Another file system: copied, and checked like any file.
            size = try copyFile(path, seen: verified, expectedSize: expectedSize, into: file, chunkDone: chunkDone)
        case .bytes(let bytes):
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let end = min(raw.count, offset + buffer.count)
                    let chunk = UnsafeRawBufferPointer(rebasing: raw[offset..<end])
                    hasher.update(chunk)
                    try file.write(chunk)
                    offset = end
                    try chunkDone(Int64(chunk.count))
                }
            }
            size = Int64(bytes.count)
        case .stream(let stream):
            try stream.forEachPiece { piece in
                self.hasher.update(piece)
                try file.write(piece)
                size += Int64(piece.count)
                try chunkDone(Int64(piece.count))
            }
        }
        return size
    }

    /// Moves the source's own file at `path` into place as `name` in `directory` and gives it
    /// its permissions and date; nil (nothing moved) when it is on another file system.
    /// A file that has them already and needs no fsync of its own (a pull stages its files
    /// so) costs a rename and a stat.
    private func adopt(
        _ path: String, verified: FileStatus, as name: String, in directory: Int32, displayPath: String,
        permissions: UInt32, modificationTime: Int64?, expectedSize: Int64
    ) throws -> Written? {
        do throws(FileSystemError) {
            try FileSystem.renameNoReplace(path, to: name, toDirectory: directory)
        } catch {
            if error.errno == .crossDevice { return nil }
            throw error
        }
        let moved = try FileSystem.status(name, relativeTo: directory)
        guard moved.kind == .regular, moved.inode == verified.inode, moved.device == verified.device,
            moved.size == expectedSize
        else {
            throw SaveRefusal(path: path, reason: .sourceChanged("after it was staged for this save"))
        }
        let syncs = durability == .full && !defersFileSync
        if !syncs, moved.permissions == permissions & 0o7777,
            modificationTime.map({ $0 == moved.modificationTime }) ?? true
        {
            progress.chunkWritten(expectedSize)
            progress.fileWritten()
            return Written(status: moved, size: expectedSize)
        }
        let file = try FileDescriptor.open(name, relativeTo: directory, access: .writeOnly, options: [.noFollow], displayPath: displayPath)
        let status = try file.status()
        guard status.kind == .regular, status.inode == verified.inode, status.size == expectedSize else {
            throw SaveRefusal(path: path, reason: .sourceChanged("after it was staged for this save"))
        }
        try file.setPermissions(permissions)
        if let modificationTime { try file.setModificationTime(modificationTime) }
        if durability == .full && !defersFileSync { try file.sync() }
        let final = try file.status()
        try file.close()
        progress.chunkWritten(expectedSize)
        progress.fileWritten()
        return Written(status: final, size: expectedSize)
    }

    /// Copies the source file at `path` into `file`, hashing it in the same pass, and
    /// checks it did not change before or during the copy. Returns the bytes copied.
    private func copyFile(
        _ path: String, seen: FileStatus?, expectedSize: Int64, into file: borrowing FileDescriptor,
        chunkDone: (Int64) throws -> Void
    ) throws -> Int64 {
        let source = try FileDescriptor.open(path, options: [.noFollow, .nonBlocking])
        let (before, allocated) = try source.statusAndAllocation()
        guard before.kind == .regular else {
            throw SaveRefusal(path: path, reason: .sourceChanged("it is now a \(before.kind), not a regular file"))
        }
        if let seen,
            seen.inode != before.inode || seen.device != before.device || seen.size != before.size
                || seen.modificationTime != before.modificationTime
        {
            throw SaveRefusal(path: path, reason: .sourceChanged(FileStatus.describeChange(from: seen, to: before)))
        }
        guard before.size == expectedSize else {
            throw SaveRefusal(path: path, reason: .sourceChanged("size \(expectedSize) → \(before.size) bytes"))
        }
        source.adviseSequential()
        do {
            try FileCopy.copyHashing(
                from: source, size: before.size, sparse: allocated < before.size, to: file, buffer: buffer,
                hash: { self.hasher.update($0) }, chunkCompleted: chunkDone)
        } catch let error as FileSystemError where error.path == source.path && error.reason != nil {
            throw SaveRefusal(path: path, reason: .sourceChanged("\(error.reason!)"))
        }
        let after = try source.status()
        if after.size != before.size || after.modificationTime != before.modificationTime
            || after.changeTime != before.changeTime
        {
            throw SaveRefusal(path: path, reason: .sourceChanged(FileStatus.describeChange(from: before, to: after)))
        }
        return before.size
    }

    /// Creates a symbolic link `name` in `directory` pointing at `target`.
    func writeSymbolicLink(target: String, named name: String, in directory: Int32, displayPath: String) throws -> FileStatus {
        do {
            try FileSystem.makeSymbolicLink(name, target: target, relativeTo: directory)
        } catch {
            var named = error
            named.path = displayPath
            throw named
        }
        progress.fileWritten()
        return try FileSystem.status(name, relativeTo: directory)
    }
}

extension ContentOrigin {
    /// The source path, for messages.
    var displayName: String? {
        switch self {
        case .file(let path, _), .adopt(let path, _): return path
        default: return nil
        }
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
