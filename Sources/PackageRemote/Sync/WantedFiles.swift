import PackageCore

/// The regular files a pull must provide: those of a version (or of a merge's chosen
/// entries) that DEST does not hold at their paths, one record a content.
///
/// A fresh pull of a million small files holds one record for each, so a record is what
/// the gathering needs and no more — the content, the version's permissions and date for
/// the staged file, where its blobs are in one shared array, and which file of DEST its
/// path replaces: 48 bytes, no path. The version's entries themselves are never held: a
/// pull is handed them one at a time as its manifest is decoded (`add(_:blobs:)`).
struct WantedFiles {
    struct File: ContentRecord {
        var key: FileKey
        var modificationTime: Int64
        var permissions: UInt32
        /// Where the file's blobs start in `blobs`, and how many there are.
        var firstBlob: UInt32 = 0
        var blobCount: UInt32 = 0
        /// The index in DEST's tree of the regular file at this path (of other content),
        /// -1 for none.
        var old: Int32
    }

    private var table = ContentRecords<File>()
    /// One record a content, sorted by content once `finish()` ran.
    var files: [File] { table.records }
    /// The wanted files' blobs, each file's together.
    var blobs: [BlobLocation] { table.blobs }
    /// Contents more than one path wants: a staged file moves into place once, so these
    /// are copied to each path instead.
    private(set) var shared: Set<FileKey> = []
    /// DEST's large files that a new content replaces at their path: their unchanged
    /// pieces may serve it.
    private(set) var pieceSources: [SnapshotEntry] = []

    /// DEST's tree as the pull scanned it (nil when DEST does not exist).
    let current: TreeSnapshot?
    /// Contents that must be whole files (never streamed from DEST's pieces): a sync's
    /// conflict versions.
    let wholeOnly: Set<FileKey>
    private let wholeFileLimit: Int64
    /// Where a blob is now (a prune may have moved it: `BlobIndex.place`).
    private let place: @Sendable (BlobLocation) -> BlobLocation

    /// - Parameter wholeFileLimit: the size up to which a file is one piece
    ///   (`ChunkingParameters.wholeFileLimit`): larger ones may take pieces from DEST's file.
    init(
        current: TreeSnapshot?, wholeOnly: Set<FileKey> = [], wholeFileLimit: Int64,
        place: @escaping @Sendable (BlobLocation) -> BlobLocation = { $0 }
    ) {
        self.current = current
        self.wholeOnly = wholeOnly
        self.wholeFileLimit = wholeFileLimit
        self.place = place
    }

    /// The files of `entries` (whose blobs are placed already) that DEST lacks at their paths.
    init(_ entries: [RemoteEntry], current: TreeSnapshot?, wholeOnly: Set<FileKey> = [], wholeFileLimit: Int64) {
        self.init(current: current, wholeOnly: wholeOnly, wholeFileLimit: wholeFileLimit)
        for entry in entries { add(entry, blobs: entry.blobs) }
        finish()
    }

    /// Adds `entry` when it is a non-empty regular file DEST does not hold at its path
    /// (DEST's file there, looked up by the path's bytes, has another content or none).
    mutating func add(_ entry: RemoteEntry, blobs entryBlobs: ArraySlice<BlobLocation>) {
        guard entry.kind == .regular, entry.size > 0 else { return }
        let key = FileKey(entry.contentHash, entry.size)
        var old: Int32 = -1
        if let current, let index = current.index(of: entry.path), current.entries[index].kind == .regular {
            let held = current.entries[index]
            if held.hash == entry.contentHash && held.size == entry.size { return }
            old = Int32(index)
            if !wholeOnly.contains(key), held.size > wholeFileLimit, entry.size > wholeFileLimit {
                pieceSources.append(held)
            }
        }
        table.append(
            File(key: key, modificationTime: entry.modificationTime, permissions: entry.permissions, old: old),
            blobs: entryBlobs.lazy.map(place))
    }

    /// Sorts the files by content and keeps the first wanted of each content, noting the
    /// contents several paths want.
    mutating func finish() {
        table.keepFirstOfEachContent { shared.insert($0) }
    }

    /// The position in `files` of `key`'s record, nil when it is not wanted.
    /// - Complexity: O(log n), by binary search.
    func position(of key: FileKey) -> Int? { table.position(of: key) }

    /// The blobs of the file at `position`, in order.
    func blobs(at position: Int) -> ArraySlice<BlobLocation> { table.blobs(at: position) }
}

/// A pull hands the version's files to its `WantedFiles` as the manifest is decoded.
extension WantedFiles: VersionFileSink {
    mutating func reserve(_ likelyCount: Int) { table.reserve(likelyCount) }
}

extension FileKey: Comparable {
    /// By hash, then size: any total order serves lookups.
    static func < (lhs: FileKey, rhs: FileKey) -> Bool {
        lhs.hash != rhs.hash ? lhs.hash < rhs.hash : lhs.size < rhs.size
    }
}

extension Array where Element: Comparable {
    /// Whether this array, sorted ascending, holds `element` (binary search).
    func containsSorted(_ element: Element) -> Bool {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] == element { return true }
            if self[middle] < element { low = middle + 1 } else { high = middle }
        }
        return false
    }
}
