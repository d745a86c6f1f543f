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
struct RemoteVersionSource: EditedPartsSource {
    /// The version's whole tree, or how to build it when the engine asks for it (a pull
    /// that gives the parts it changes then never holds it).
    private let tree: () throws -> TreeSnapshot
    let contents: PulledContents
    let rootPermissions: UInt32
    /// Where DEST and the version differ, when the pull compared them.
    let parts: ChangedParts?

    /// DEST and the version pruned to where they differ (`StreamedComparison`, permission
    /// bits included), with the state of DEST's manifest they were compared against.
    struct ChangedParts {
        var manifest: TreePackageState
        var current: [SnapshotEntry]
        var new: [SnapshotEntry]
        var newRootHash: ContentHash
        var newEntryCount: Int
    }

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
        let snapshot = Self.withChunkLists(tree, contents)
        self.tree = { snapshot }
        self.contents = contents
        self.rootPermissions = rootPermissions
        parts = nil
    }

    /// A version compared with DEST already: the engine saves `parts` while DEST's manifest
    /// is still the one they were compared against, and otherwise the whole tree, which
    /// `loadTree` builds then.
    init(
        parts: ChangedParts, loadTree: @escaping () throws -> TreeSnapshot, contents: PulledContents,
        rootPermissions: UInt32
    ) {
        self.tree = { Self.withChunkLists(try loadTree(), contents) }
        self.parts = parts
        self.contents = contents
        self.rootPermissions = rootPermissions
    }

    /// `tree` with the chunk lists of the large contents pulled. The tree is not written to
    /// (and so not copied) when there are none.
    private static func withChunkLists(_ tree: TreeSnapshot, _ contents: PulledContents) -> TreeSnapshot {
        guard !contents.chunkLists.isEmpty else { return tree }
        var snapshot = tree
        snapshot.entries = withChunkLists(snapshot.entries, contents)
        return snapshot
    }

    private static func withChunkLists(_ entries: [SnapshotEntry], _ contents: PulledContents) -> [SnapshotEntry] {
        guard !contents.chunkLists.isEmpty else { return entries }
        var entries = entries
        for index in entries.indices where entries[index].kind == .regular {
            let entry = entries[index]
            if let list = contents.chunkLists[FileKey(entry.hash, entry.size)] { entries[index].chunks = list }
        }
        return entries
    }

    /// Where `entry`'s bytes come from, asked by the engine for each file it writes that
    /// DEST does not hold at its path (those it takes from DEST).
    static func origin(of entry: SnapshotEntry, contents: PulledContents) -> ContentOrigin? {
        entry.size == 0 ? .bytes([]) : contents.origin(FileKey(entry.hash, entry.size))
    }

    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        let contents = contents
        return SourceTree(
            snapshot: try tree(), contentLookup: { entry in Self.origin(of: entry, contents: contents) },
            rootPermissions: rootPermissions)
    }

    /// The parts where DEST and the version differ, while DEST's manifest is still the one
    /// they were compared against (the engine asks under DEST's lock); nil otherwise, and
    /// the engine compares whole trees.
    func changedParts(in context: SaveSourceContext) throws -> PartialSourceTree? {
        guard let parts, let head = parts.manifest.currentHead(packagePath: context.package.path),
            !PackageManifest(head: head).needsCompaction
        else { return nil }
        let new = Self.withChunkLists(parts.new, contents)
        return PartialSourceTree(
            head: head, current: parts.current, new: new,
            contents: new.map { $0.kind == .regular ? Self.origin(of: $0, contents: contents) : nil },
            newRootHash: parts.newRootHash, newEntryCount: parts.newEntryCount, rootPermissions: rootPermissions)
    }
}
