/// How the engine turns the entries a source described (`SourceTree(entries:…)`) into the
/// tree it compares and writes: checked, in `PathOrder`, every file hashed, every folder's
/// Merkle hash computed (`TreeSnapshot.assemble`), as a scan or a `FileWrapper` gives it.
extension SourceTree {
    /// This tree with its `described` entries checked, ordered and hashed into `snapshot`
    /// and `contents`; itself when it was built whole.
    ///
    /// - Throws: `SaveRefusal` (`.malformedTree`) for a path given twice (as bytes), an
    ///   entry whose parent is not a folder of the tree, the root or the top-level
    ///   `.pkgtool` as an entry, a link with an empty target; `FileSystemError` when a file
    ///   origin cannot be read; `CancellationError` when the save is cancelled while hashing.
    /// - Complexity: O(n log n) to order; one streamed read of each file whose hash is not
    ///   given (files on disk on `workers` threads, as `FileWrapper` hashes them).
    func assembled(in context: SaveSourceContext) throws -> SourceTree {
        guard let described else { return self }
        let order = described.indices.sorted { described[$0].path < described[$1].path }
        try Self.checkShape(order.map { described[$0] }, package: context.package)
        var entries: [SnapshotEntry] = []
        var origins: [ContentOrigin?] = []
        entries.reserveCapacity(order.count)
        origins.reserveCapacity(order.count)
        var unhashed: [Int] = []
        // Siblings share their folder's path, as in a scan's entries (Specs/manifest.md, "Memory").
        var folders = FolderInterner()
        let now = FileClock.upperBound()
        for index in order {
            let given = described[index]
            let path = given.path.string
            var entry = SnapshotEntry(
                storedPath: folders.path(path), kind: .directory, permissions: given.permissions, size: 0, hash: .empty,
                modificationTime: given.modificationTime ?? now)
            var origin: ContentOrigin?
            switch given.kind {
            case .directory:
                break
            case .symbolicLink(let target):
                entry.kind = .symbolicLink
                entry.linkTarget = target
                entry.size = Int64(target.utf8.count)
                entry.hash = ContentHash.of(target.utf8)
            case .file(let source):
                entry.kind = .regular
                origin = source
                if let hash = given.contentHash {
                    guard let size = given.size ?? source.statedSize else {
                        throw SaveRefusal(
                            path: context.package.inside(path),
                            reason: .malformedTree("its content hash is given without its size"))
                    }
                    entry.hash = hash
                    entry.size = size
                } else {
                    unhashed.append(entries.count)
                }
            }
            entries.append(entry)
            origins.append(origin)
        }
        var tree = self
        (tree.filesHashed, tree.bytesHashed) = try Self.hash(unhashed, of: &entries, origins: &origins, context: context)
        tree.snapshot = TreeSnapshot.assemble(entries)
        tree.contents = origins
        tree.described = nil
        return tree
    }

    /// Refuses entries (in path order) that do not make a tree a package can hold: the
    /// same path twice (bytes), a parent that is not a folder of the tree (`TreeShapeCheck`),
    /// the root or the reserved top-level `.pkgtool` as an entry, a link with an empty target
    /// or a NUL.
    ///
    /// - Complexity: O(n).
    static func checkShape(_ entries: [SourceEntry], package: PackageLocation) throws {
        var shape = TreeShapeCheck()
        for entry in entries {
            let path = entry.path
            let refuse = { (detail: String) in
                SaveRefusal(path: package.inside(path.string), reason: .malformedTree(detail))
            }
            if path.isRoot { throw refuse("the package root cannot be an entry of its own tree") }
            if path.parent.isRoot && PackageReservedNames.isReserved(path.string) {
                throw refuse("'\(path)' is reserved for pkgtool's own state")
            }
            switch shape.admit(path.string) {
            case .repeated?, .outOfOrder?: throw refuse("the tree names this path twice")
            case .noParentFolder(let parent)?: throw refuse("its parent folder '\(parent)' is not a folder of the tree")
            case nil: break
            }
            switch entry.kind {
            case .directory: shape.admitFolder(path.string)
            case .symbolicLink(let target) where target.isEmpty || target.utf8.contains(0):
                throw refuse("a symbolic link needs a target without NUL bytes")
            default: break
            }
        }
    }

    /// Hashes the regular files at `indices` from their origins, filling their hash, size
    /// and (for large files) chunk list: files on disk on all the save's workers,
    /// verified against the stat data they were given or found with; bytes in memory and
    /// streams on this thread. A file origin without stat data gets the stat data it was
    /// hashed with, so that writing it refuses a file changed since.
    ///
    /// - Returns: the files hashed and their bytes, for the statistics.
    static func hash(
        _ indices: [Int], of entries: inout [SnapshotEntry], origins: inout [ContentOrigin?], context: SaveSourceContext
    ) throws -> (files: Int, bytes: Int64) {
        var onDisk: [(index: Int, record: DiskRecord)] = []
        var bytes: Int64 = 0
        for index in indices {
            let digest: ChunkedDigest
            switch origins[index] {
            case .file(let path, let seen):
                let status = try seen ?? FileSystem.status(path)
                guard status.kind == .regular else {
                    throw SaveRefusal(path: path, reason: .sourceChanged("it is a \(status.kind), not a regular file"))
                }
                origins[index] = .file(path: path, seen: status)
                onDisk.append((index, DiskRecord(path: path, status: status)))
                continue
            case .adopt(let path, let verified):
                onDisk.append((index, DiskRecord(path: path, status: verified)))
                continue
            case .bytes(let data):
                digest = try data.withUnsafeBytes { raw in try digestOfPieces { body in try body(raw) } }
            case .stream(let stream):
                digest = try digestOfPieces { piece in try stream.forEachPiece(piece) }
            case nil:
                throw SaveRefusal(path: context.package.inside(entries[index].path), reason: .missingContent)
            }
            entries[index].hash = digest.hash
            entries[index].size = digest.size
            entries[index].chunks = digest.chunks
            bytes += digest.size
        }
        guard !onDisk.isEmpty else { return (indices.count, bytes) }
        let cancellation = context.options.cancellation
        let digests = try FileWrapper.hashFiles(
            onDisk.map(\.record), workers: context.options.workers, isCancelled: { cancellation?.isCancelled == true })
        for (file, digest) in zip(onDisk, digests) {
            entries[file.index].hash = digest.hash
            entries[file.index].size = digest.size
            entries[file.index].chunks = digest.chunks
            bytes += digest.size
        }
        return (indices.count, bytes)
    }

    /// The digest of the bytes `produce` hands to its body, piece by piece, checking for
    /// cancellation between pieces (`HashingCancellation`), as the engine hashes elsewhere.
    private static func digestOfPieces(
        _ produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void
    ) throws -> ChunkedDigest {
        var chunker = ChunkingHasher()
        chunker.reset()
        try produce { piece in
            var offset = 0
            repeat {
                try HashingCancellation.check()
                let end = min(piece.count, offset + ChunkBuffer.defaultSize)
                chunker.update(UnsafeRawBufferPointer(rebasing: piece[offset..<end]))
                offset = end
            } while offset < piece.count
        }
        return chunker.finish()
    }
}

extension ContentOrigin {
    /// The size the origin states without being read: bytes in memory, a file with the stat
    /// data seen; nil for a stream or a file without it.
    var statedSize: Int64? {
        switch self {
        case .bytes(let bytes): Int64(bytes.count)
        case .file(_, let seen): seen?.size
        case .adopt(_, let verified): verified.size
        case .stream: nil
        }
    }
}
