/// Chunk-level saves of large files (Specs/save.md, "Changed bytes, not changed files"):
/// when a file of at least 4 MiB changed and both its old and new content-defined chunk
/// lists are known, a save writes the changed chunks instead of the whole file —
/// `journaled` patches the package's file in place through its redo journal, the staged
/// strategies clone the old version (a reflink, where the file system has them) and write
/// the changed chunks into the clone.
struct ChunkPatch {
    /// The new file's chunks and how they differ from the old one's.
    let comparison: ChunkComparison
    let newChunks: ChunkList
    /// The package's file now (the old version): its path in the package, inode and device.
    let oldPath: String
    let oldInode: UInt64
    let oldDevice: UInt64

    /// The chunks of the new file that are not already in place.
    var changedChunks: [FileChunk] {
        zip(newChunks, comparison.statuses).compactMap { chunk, status in status == .unchanged ? nil : chunk }
    }
}

extension SaveContext {
    /// Whether new entry `index` may be saved as a chunk patch: a regular file with a chunk
    /// list, whose old version at the same path has one too, differing in at most half its
    /// bytes. `inPlace` (journaled): the package's file must also not be shared with anything
    /// (link count 1: no kept previous version, no hard link), since it will be written.
    func chunkPatch(for index: Int, inPlace: Bool) -> ChunkPatch? {
        let entry = plan.new.entries[index]
        guard entry.kind == .regular, let newChunks = entry.chunks, plan.origin(at: index) != nil,
            let oldIndex = plan.old.index(of: entry.path)
        else { return nil }
        let old = plan.old.entries[oldIndex]
        guard old.kind == .regular, let oldChunks = old.chunks else { return nil }
        let comparison = ChunkComparison(old: oldChunks, new: newChunks)
        guard !comparison.isIdentical, comparison.patchPays() else { return nil }
        // The package's file must still be the version the chunk list describes.
        guard let status = try? FileSystem.status(package.inside(entry.path)), status.kind == .regular,
            status.inode == old.inode, status.size == old.size, status.modificationTime == old.modificationTime
        else { return nil }
        // Written in place: not shared with anything, and writable by its owner.
        if inPlace && (status.linkCount != 1 || status.permissions & 0o200 == 0) { return nil }
        return ChunkPatch(
            comparison: comparison, newChunks: newChunks, oldPath: entry.path, oldInode: status.inode,
            oldDevice: status.device)
    }

    /// Calls `body` with the bytes of each changed chunk of new entry `index`, read from its
    /// origin in pieces of at most 1 MiB (`offset` is the piece's offset in the new file),
    /// and checks each chunk's bytes against its hash: a source that changed since it was
    /// described refuses the save.
    ///
    /// - Complexity: reads the changed chunks only for a file or memory origin; a stream is
    ///   read through, its unchanged bytes skipped.
    func forEachChangedPiece(
        of index: Int, patch: ChunkPatch, _ body: (_ offset: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let chunks = patch.changedChunks
        let entry = plan.new.entries[index]
        let shown = package.inside(entry.path)
        let origin = plan.origin(at: index)
        switch origin {
        case .file(let path, let seen)?:
            try forEachChangedPiece(ofFile: path, seen: seen, size: entry.size, chunks: chunks, body)
        case .adopt(let path, let verified)?:
            try forEachChangedPiece(ofFile: path, seen: verified, size: entry.size, chunks: chunks, body)
        case .bytes(let bytes)?:
            try forEachChangedPiece(of: bytes, shownAs: shown, size: entry.size, chunks: chunks, body)
        case .stream(let stream)?:
            try forEachChangedPiece(of: stream, shownAs: shown, size: entry.size, chunks: chunks, body)
        case nil:
            throw SaveRefusal(path: shown, reason: .missingContent)
        }
    }

    /// The refusal of a source (`path`, as the source names it) whose bytes are not those
    /// it described.
    private static func sourceChanged(_ path: String) -> SaveRefusal {
        SaveRefusal(path: path, reason: .sourceChanged(""))
    }

    /// `forEachChangedPiece` from a file at `path`: only the changed chunks are read, and
    /// the file must be the one described (`seen`, `size`) before and unchanged after —
    /// a file rewritten in place meanwhile is refused, not patched from two versions.
    private func forEachChangedPiece(
        ofFile path: String, seen: FileStatus?, size: Int64, chunks: [FileChunk],
        _ body: (_ offset: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let hasher = ContentHasher()
        let source = try FileDescriptor.open(path, options: [.noFollow, .nonBlocking])
        let before = try source.status()
        guard before.kind == .regular, before.size == size,
            seen.map({ $0.inode == before.inode && $0.modificationTime == before.modificationTime }) ?? true
        else { throw Self.sourceChanged(path) }
        let buffer = writer.buffer
        for chunk in chunks {
            hasher.reset()
            var offset = chunk.offset
            while offset < chunk.end {
                try checkCancellation()
                let wanted = Int(min(Int64(buffer.count), chunk.end - offset))
                let piece = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<wanted])
                guard try source.readFully(into: piece, at: offset) == wanted else { throw Self.sourceChanged(path) }
                hasher.update(UnsafeRawBufferPointer(piece))
                try body(offset, UnsafeRawBufferPointer(piece))
                progress.chunkWritten(Int64(wanted))
                offset += Int64(wanted)
            }
            guard hasher.digest() == chunk.hash else { throw Self.sourceChanged(path) }
        }
        let after = try source.status()
        guard after.size == before.size, after.modificationTime == before.modificationTime,
            after.changeTime == before.changeTime
        else { throw Self.sourceChanged(path) }
    }

    /// `forEachChangedPiece` from bytes in memory: each changed chunk whole.
    private func forEachChangedPiece(
        of bytes: [UInt8], shownAs shown: String, size: Int64, chunks: [FileChunk],
        _ body: (_ offset: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try bytes.withUnsafeBytes { raw in
            guard raw.count == size else { throw Self.sourceChanged(shown) }
            for chunk in chunks {
                let piece = UnsafeRawBufferPointer(rebasing: raw[Int(chunk.offset)..<Int(chunk.end)])
                guard ContentHash.of(piece) == chunk.hash else { throw Self.sourceChanged(shown) }
                try checkCancellation()
                try body(chunk.offset, piece)
                progress.chunkWritten(chunk.length)
            }
        }
    }

    /// `forEachChangedPiece` from a stream: read through, the pieces inside changed chunks
    /// passed on, its unchanged bytes skipped.
    private func forEachChangedPiece(
        of stream: any ContentStream, shownAs shown: String, size: Int64, chunks: [FileChunk],
        _ body: (_ offset: Int64, _ bytes: UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let hasher = ContentHasher()
        var position: Int64 = 0
        var next = 0
        hasher.reset()
        try stream.forEachPiece { piece in
            var start = 0
            while start < piece.count, next < chunks.count {
                let chunk = chunks[next]
                let here = position + Int64(start)
                if here < chunk.offset {
                    start += Int(min(chunk.offset - here, Int64(piece.count - start)))
                    continue
                }
                let length = Int(min(chunk.end - here, Int64(piece.count - start)))
                let slice = UnsafeRawBufferPointer(rebasing: piece[start..<(start + length)])
                hasher.update(slice)
                try body(here, slice)
                progress.chunkWritten(Int64(length))
                start += length
                if here + Int64(length) == chunk.end {
                    guard hasher.digest() == chunk.hash else { throw Self.sourceChanged(shown) }
                    hasher.reset()
                    next += 1
                    try checkCancellation()
                }
            }
            position += Int64(piece.count)
        }
        guard next == chunks.count, position == size else { throw Self.sourceChanged(shown) }
    }

    /// The package-side stat a patched file will have once the journal applied it: the same
    /// inode, the new size and date (its change time moves while the journal is applied,
    /// which the relink window records).
    func patchedStatus(_ index: Int, patch: ChunkPatch) -> FileStatus {
        let entry = plan.new.entries[index]
        let old = plan.old.index(of: entry.path).map { plan.old.entries[$0] }
        return FileStatus(
            kind: .regular, permissions: entry.permissions, size: entry.size, modificationTime: entry.modificationTime,
            changeTime: old?.changeTime ?? 0, inode: patch.oldInode, device: patch.oldDevice)
    }

    /// `staged`: a clone of the package's old version of new entry `index` (FICLONE) with
    /// the changed chunks written into it, truncated or extended to the new size, given its
    /// permissions and date, fsynced. Returns what was written; nil (and nothing left behind)
    /// when the file system has no reflinks — then the caller writes the file whole.
    func writeClonePatched(
        _ index: Int, patch: ChunkPatch, named name: String, in directory: Int32
    ) throws -> EntryWriter.Written? {
        let entry = plan.new.entries[index]
        let shown = package.inside(entry.path)
        let old = try FileDescriptor.open(package.inside(patch.oldPath), options: [.noFollow, .nonBlocking])
        guard try old.status().inode == patch.oldInode else { return nil }
        let file = try FileDescriptor.open(
            name, relativeTo: directory, access: .writeOnly, options: [.create, .exclusive, .noFollow], permissions: 0o600,
            displayPath: shown)
        guard try FileCopy.cloneIfPossible(from: old, to: file) else {
            try? FileSystem.remove(name, relativeTo: directory)
            return nil
        }
        try forEachChangedPiece(of: index, patch: patch) { offset, bytes in try file.write(bytes, at: offset) }
        if entry.size != patch.comparison.oldSize { try file.truncate(to: entry.size) }
        try file.setPermissions(entry.permissions)
        try file.setModificationTime(entry.modificationTime)
        if durable { try file.sync() }
        let status = try file.status()
        try file.close()
        progress.fileWritten()
        return EntryWriter.Written(status: status, size: patch.comparison.changedBytes, chunks: patch.newChunks)
    }
}
