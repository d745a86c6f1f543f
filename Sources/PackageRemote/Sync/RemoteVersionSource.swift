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
    let rootPermissions: UInt32

    /// - Parameters:
    ///   - contents: where each content DEST lacks at its path comes from, and the chunk
    ///     lists of large ones (their pieces on the remote, with the XXH3 of each): the
    ///     engine then writes only the chunks a file changed in, and DEST's manifest records
    ///     them. What DEST holds at its path the engine takes from DEST itself.
    init(_ manifest: VersionManifest, contents: PulledContents, rootPermissions: UInt32) {
        self.init(tree: manifest.snapshot(), contents: contents, rootPermissions: rootPermissions)
    }

    /// The same for any tree whose contents DEST holds at their paths or `contents` provide:
    /// a merge of DEST with a version.
    init(tree: TreeSnapshot, contents: PulledContents, rootPermissions: UInt32) {
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
        self.rootPermissions = rootPermissions
    }

    /// Where `entry`'s bytes come from, asked by the engine for each file it writes that
    /// DEST does not hold at its path (those it takes from DEST).
    static func origin(of entry: SnapshotEntry, contents: PulledContents) -> ContentOrigin? {
        entry.size == 0 ? .bytes([]) : contents.origin(FileKey(entry.hash, entry.size))
    }

    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        let contents = contents
        return SourceTree(
            snapshot: snapshot, contentLookup: { entry in Self.origin(of: entry, contents: contents) },
            rootPermissions: rootPermissions)
    }
}
