import PackageCore

/// A version pulled from a remote, as a source for the save engine: the version's tree
/// (from its manifest, checked), and each changed file's bytes from where the pull found
/// them: the staging area (assembled and checked against their content hash), a stream of
/// DEST's unchanged pieces and staged new ones, or another path of DEST.
///
/// Assembled contents are *adopted*: the engine moves the staged file into place instead
/// of writing it again (unless several paths need it).
///
/// The engine then does the rest as for any source: locks DEST, recovers an interrupted
/// save, compares, writes only what differs with its strategy (crash-safe: readers see the
/// old package or the new), hashes each file again as it copies it (refusing one that
/// changed meanwhile), restores modes and times, and records the manifest.
struct RemoteVersionSource: SaveSource {
    let snapshot: TreeSnapshot
    let contents: [ContentOrigin?]
    let rootPermissions: UInt32

    /// - Parameters:
    ///   - origins: where each content DEST lacks at its path comes from, by content (hash and size).
    ///   - chunkLists: the chunk lists of large contents (their pieces on the remote, with the
    ///     XXH3 of each): the engine then writes only the chunks a file changed in, and DEST's
    ///     manifest records them.
    ///   - destination: DEST, whose files serve the contents it already holds at their paths.
    ///   - current: DEST's tree as the pull scanned it (nil when DEST does not exist).
    init(
        _ manifest: VersionManifest, origins: [FileKey: ContentOrigin], chunkLists: [FileKey: ChunkList] = [:],
        destination: String, current: TreeSnapshot?, rootPermissions: UInt32
    ) {
        self.init(
            tree: manifest.snapshot(), origins: origins, chunkLists: chunkLists, destination: destination, current: current,
            rootPermissions: rootPermissions)
    }

    /// The same for any tree whose contents DEST holds at their paths or `origins` provide:
    /// a merge of DEST with a version.
    init(
        tree: TreeSnapshot, origins: [FileKey: ContentOrigin], chunkLists: [FileKey: ChunkList] = [:],
        destination: String, current: TreeSnapshot?, rootPermissions: UInt32
    ) {
        var snapshot = tree
        for index in snapshot.entries.indices where snapshot.entries[index].kind == .regular {
            let entry = snapshot.entries[index]
            if let list = chunkLists[FileKey(entry.hash, entry.size)] { snapshot.entries[index].chunks = list }
        }
        self.snapshot = snapshot
        var currentByPath: [RelativePath: SnapshotEntry] = [:]  // names are bytes
        for entry in current?.entries ?? [] where entry.kind == .regular { currentByPath[RelativePath(trusted: entry.path)] = entry }
        func heldAtPath(_ entry: SnapshotEntry) -> SnapshotEntry? {
            guard let old = currentByPath[RelativePath(trusted: entry.path)], old.hash == entry.hash, old.size == entry.size else { return nil }
            return old
        }
        // A staged file can be moved into place once: a content several new paths need is
        // copied to each instead.
        var uses: [FileKey: Int] = [:]
        for entry in snapshot.entries where entry.kind == .regular && heldAtPath(entry) == nil {
            uses[FileKey(entry.hash, entry.size), default: 0] += 1
        }
        contents = snapshot.entries.map { entry -> ContentOrigin? in
            guard entry.kind == .regular else { return nil }
            if entry.size == 0 { return .bytes([]) }
            // DEST holds it at this very path (the pull checked): only read should the engine
            // find it different after all.
            if let old = heldAtPath(entry) {
                return .file(
                    path: PackageLayout.joined(destination, entry.path),
                    seen: FileStatus(
                        kind: .regular, permissions: old.permissions, size: old.size, modificationTime: old.modificationTime,
                        changeTime: old.changeTime, inode: old.inode, device: old.device))
            }
            let key = FileKey(entry.hash, entry.size)
            guard let origin = origins[key] else { return nil }
            if case .adopt(let path, let verified) = origin, uses[key, default: 0] > 1 {
                return .file(path: path, seen: verified)
            }
            return origin
        }
        self.rootPermissions = rootPermissions
    }

    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        SourceTree(snapshot: snapshot, contents: contents, rootPermissions: rootPermissions)
    }
}
