import PackageCore

/// The contents a pull must provide: each content of the wanted entries that DEST does not
/// hold at the same path, once, with where its entry is. Paths are looked up in DEST's
/// tree by binary search on their bytes (twins such as `é` and `e\u{301}` stay two), so the
/// tables grow with the contents needed, not with DEST.
struct ContentsNeeded {
    /// Each needed content, in the order first wanted.
    private(set) var order: [FileKey] = []
    /// The index in the wanted entries of each needed content's first entry.
    private(set) var index: [FileKey: Int] = [:]
    /// Needed contents DEST holds at another path: that entry's index in DEST's tree.
    private(set) var localByContent: [FileKey: Int] = [:]
    /// DEST's large files whose unchanged pieces may serve a new version of them.
    private(set) var pieceSources: [SnapshotEntry] = []
    /// For each needed content, the size of the file DEST holds at its path now (which the
    /// pull replaces), unless DEST holds the content itself elsewhere.
    private var replacedSizes: [Int64?] = []

    init(_ wanted: [RemoteEntry], wholeOnly: Set<FileKey>, current: TreeSnapshot?, options: RemoteOptions) {
        var atPath: [Int?] = []
        for (position, entry) in wanted.enumerated() where entry.kind == .regular && entry.size > 0 {
            let key = FileKey(entry.contentHash, entry.size)
            let old = current?.index(of: entry.path).flatMap { current!.entries[$0].kind == .regular ? $0 : nil }
            if let old, current!.entries[old].hash == entry.contentHash, current!.entries[old].size == entry.size { continue }
            if index[key] == nil {
                index[key] = position
                order.append(key)
                atPath.append(old)
            }
            if !wholeOnly.contains(key), let old, current!.entries[old].size > options.chunking.wholeFileLimit,
                entry.size > options.chunking.wholeFileLimit
            {
                pieceSources.append(current!.entries[old])
            }
        }
        if let current, !index.isEmpty {
            for (position, entry) in current.entries.enumerated() where entry.kind == .regular {
                let key = FileKey(entry.hash, entry.size)
                if index[key] != nil { localByContent[key] = position }
            }
        }
        replacedSizes = zip(order, atPath).map { key, old in
            localByContent[key] == nil ? old.map { current!.entries[$0].size } : nil
        }
    }

    /// What `PullOperation.requireRoom` weighs: each needed content's size, and the size of
    /// the file it replaces.
    func room() -> [(size: Int64, replacing: Int64?)] {
        zip(order, replacedSizes).map { ($0.size, $1) }
    }
}

/// Where a pull found each content DEST lacks at its path, asked one content at a time by
/// `RemoteVersionSource`: DEST's own files at other paths and streams of DEST's pieces as
/// origins; files assembled in the staging area by the stat data seen once they were
/// checked, their path made from the content when asked (a pull of a million small files
/// keeps 16 bytes of each, not an origin with its path).
struct PulledContents: Sendable {
    /// The stat data of an assembled file that the engine checks before moving it into place.
    struct Stamp: Sendable {
        var inode: UInt64
        var modificationTime: Int64

        init(_ status: FileStatus) {
            inode = status.inode
            modificationTime = status.modificationTime
        }
    }

    /// Origins given outright: DEST's files at other paths, streams, bytes in memory.
    var origins: [FileKey: ContentOrigin] = [:]
    /// Contents assembled in `readyDirectory`, named by `PullStaging.name(_:)`.
    var staged: [FileKey: Stamp] = [:]
    /// The staging area's folder of assembled contents, ending in "/".
    let readyDirectory: String
    /// The device of the staging area's file system.
    var device: UInt64 = 0
    /// The chunk lists of large contents (their pieces on the remote, with the XXH3 of each).
    var chunkLists: [FileKey: ChunkList] = [:]

    init(readyDirectory: String) {
        self.readyDirectory = readyDirectory
    }

    /// Where `key`'s bytes are, nil when the pull did not gather it.
    func origin(_ key: FileKey) -> ContentOrigin? {
        if let origin = origins[key] { return origin }
        guard let stamp = staged[key] else { return nil }
        return .adopt(
            path: readyDirectory + PullStaging.name(key),
            verified: FileStatus(
                kind: .regular, permissions: 0o600, size: key.size, modificationTime: stamp.modificationTime,
                changeTime: 0, inode: stamp.inode, device: device))
    }
}
