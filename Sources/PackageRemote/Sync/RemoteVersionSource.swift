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
    let contents: PulledContents
    let destination: String
    let current: TreeSnapshot?
    let rootPermissions: UInt32

    /// - Parameters:
    ///   - contents: where each content DEST lacks at its path comes from, and the chunk
    ///     lists of large ones (their pieces on the remote, with the XXH3 of each): the
    ///     engine then writes only the chunks a file changed in, and DEST's manifest records
    ///     them.
    ///   - destination: DEST, whose files serve the contents it already holds at their paths.
    ///   - current: DEST's tree as the pull scanned it (nil when DEST does not exist).
    init(
        _ manifest: VersionManifest, contents: PulledContents, destination: String, current: TreeSnapshot?,
        rootPermissions: UInt32
    ) {
        self.init(
            tree: manifest.snapshot(), contents: contents, destination: destination, current: current,
            rootPermissions: rootPermissions)
    }

    /// The same for any tree whose contents DEST holds at their paths or `contents` provide:
    /// a merge of DEST with a version.
    init(
        tree: TreeSnapshot, contents: PulledContents, destination: String, current: TreeSnapshot?,
        rootPermissions: UInt32
    ) {
        var snapshot = tree
        // Large files only: the tree is not written to (and so not copied) for the others.
        if !contents.chunkLists.isEmpty {
            for index in snapshot.entries.indices where snapshot.entries[index].kind == .regular {
                let entry = snapshot.entries[index]
                if let list = contents.chunkLists[FileKey(entry.hash, entry.size)] { snapshot.entries[index].chunks = list }
            }
        }
        self.snapshot = snapshot
        self.contents = contents
        self.destination = destination
        self.current = current
        self.rootPermissions = rootPermissions
    }

    /// DEST's entry at `entry`'s path when it holds the same content there.
    static func heldAtPath(_ entry: SnapshotEntry, in current: TreeSnapshot?) -> SnapshotEntry? {
        guard let current, let index = current.index(of: entry.path) else { return nil }
        let old = current.entries[index]
        guard old.kind == .regular, old.hash == entry.hash, old.size == entry.size else { return nil }
        return old
    }

    /// Where `entry`'s bytes come from, asked by the engine for each file it writes.
    static func origin(
        of entry: SnapshotEntry, contents: PulledContents, destination: String, current: TreeSnapshot?
    ) -> ContentOrigin? {
        if entry.size == 0 { return .bytes([]) }
        // DEST holds it at this very path (the pull checked): only read should the engine
        // find it different after all.
        if let old = heldAtPath(entry, in: current) {
            return .file(
                path: PackageLayout.joined(destination, entry.path),
                seen: FileStatus(
                    kind: .regular, permissions: old.permissions, size: old.size, modificationTime: old.modificationTime,
                    changeTime: old.changeTime, inode: old.inode, device: old.device))
        }
        return contents.origin(FileKey(entry.hash, entry.size))
    }

    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        let (contents, destination, current) = (contents, destination, current)
        return SourceTree(
            snapshot: snapshot,
            contentLookup: { entry in Self.origin(of: entry, contents: contents, destination: destination, current: current) },
            rootPermissions: rootPermissions)
    }
}
