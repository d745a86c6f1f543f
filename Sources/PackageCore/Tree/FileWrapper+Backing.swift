import FoundationEssentials

/// What saving and the manifest need from a wrapper tree, in one place (the saving itself
/// lives with the engine: `FileWrapperSource`, `FileWrapper.write(to:…)`).
///
/// - `backingFile`: for a regular file read from disk (or written with `.withNameUpdating`)
///   and not replaced since, the file holding its bytes and the `lstat` seen then. While
///   an `fstat` of that path still matches (`DiskRecord.stillDescribes`), the engine may
///   hard-link it or `copy_file_range` it instead of reading it into memory.
/// - `knownContentHash`: the cached hash, settable so the manifest loader can pre-fill the
///   hashes whose stat data still match; setting it invalidates the ancestors' hashes.
/// - `forEachChunk`: a regular file's bytes in 1 MiB chunks, from memory or streamed from disk.
/// - `snapshot()` (public, `FileWrapper+Snapshot.swift`): the tree as a `TreeSnapshot`;
///   `snapshotWithNodes()` also gives each entry's wrapper.
/// - `PackageReservedNames`: top-level names of ours that a package read leaves out.
extension FileWrapper {
    /// The file backing a regular-file wrapper: nil for other kinds, for files made in
    /// memory, and after `read(from:)` found something else there.
    var backingFile: DiskRecord? {
        state.withLock { $0.kind == .regular ? $0.diskRecord : nil }
    }

    /// The stat data seen when this node was read from disk (any kind), or nil.
    var statusAtRead: FileStatus? { diskRecord?.status }

    /// The cached content hash, or nil when it would have to be computed.
    ///
    /// Setting a hash on a leaf or directory asserts that it is the hash of what the node
    /// holds (the manifest's job: only hashes whose stat data still match). The hashes of
    /// the directories above are forgotten, since they were built from the old value.
    var knownContentHash: ContentHash? {
        get { cachedHash }
        set {
            state.withLock { node in
                node.cachedHash = newValue
                node.cachedChunks = nil
                node.generation &+= 1
            }
            invalidateAncestorHashes()
        }
    }

    /// Calls `body` with a regular file's bytes in chunks of at most `buffer.count` bytes
    /// (1 MiB by default), from memory or read from its backing file, which is checked to
    /// be unchanged first. Chunks are valid only during the call.
    ///
    /// - Throws: `FileSystemError` when the backing file vanished or changed, or this is
    ///   not a regular file; whatever `body` throws.
    /// - Complexity: in memory, no copy; on disk, one `read` per chunk and memory for the
    ///   buffer only.
    func forEachChunk(using buffer: ChunkBuffer = ChunkBuffer(), _ body: (UnsafeRawBufferPointer) throws -> Void)
        throws
    {
        let (kind, contents, diskRecord, path) = state.withLock {
            ($0.kind, $0.contents, $0.diskRecord, $0.displayPath)
        }
        guard kind == .regular else {
            throw FileSystemError(.read, path: path, reason: "is a \(kind), not a regular file")
        }
        if let contents {
            try contents.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let end = min(offset + buffer.count, bytes.count)
                    try body(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                    offset = end
                }
            }
            return
        }
        guard let record = diskRecord else { return }
        let file = try FileWrapper.openVerified(record)
        file.adviseSequential()
        var remaining = record.status.size
        while remaining > 0 {
            let wanted = Int(min(Int64(buffer.count), remaining))
            let count = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<wanted]))
            if count == 0 {
                throw FileSystemError(
                    .read, path: record.path, reason: "it changed after the package was opened (it became shorter)")
            }
            try body(UnsafeRawBufferPointer(rebasing: buffer.bytes[..<count]))
            remaining -= Int64(count)
        }
    }
}

/// Top-level names that belong to pkgtool, not to the package's content (the manifest's
/// hidden entry): `FileWrapper(url:)` and the comparisons leave them out of the root.
enum PackageReservedNames {
    /// Compared byte for byte (Specs/manifest.md).
    static let topLevel: [String] = [PackageLayout.metadataDirectoryName]

    static func isReserved(_ name: String) -> Bool {
        topLevel.contains { PathOrder.sameBytes($0, name) }
    }
}
