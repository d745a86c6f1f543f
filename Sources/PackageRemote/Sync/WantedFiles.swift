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
    struct File {
        var key: FileKey
        var modificationTime: Int64
        var permissions: UInt32
        /// Where the file's blobs start in `blobs`, and how many there are.
        var firstBlob: UInt32
        var blobCount: UInt32
        /// The index in DEST's tree of the regular file at this path (of other content),
        /// -1 for none.
        var old: Int32
    }

    /// One record a content, sorted by content once `finish()` ran.
    private(set) var files: [File] = []
    /// The wanted files' blobs, each file's together.
    private(set) var blobs: [BlobLocation] = []
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
        // A blob record takes dozens of the manifest body's bytes, whose size is bounded
        // (`VersionManifest.maximumBodySize`): the counts fit 32 bits.
        files.append(
            File(
                key: key, modificationTime: entry.modificationTime, permissions: entry.permissions,
                firstBlob: UInt32(blobs.count), blobCount: UInt32(entryBlobs.count), old: old))
        blobs.append(contentsOf: entryBlobs.lazy.map(place))
    }

    /// Sorts the files by content and keeps the first wanted of each content, noting the
    /// contents several paths want.
    mutating func finish() {
        // Swift's sort is stable: of one content's files, the first wanted comes first.
        files.sort { $0.key < $1.key }
        var kept = 0
        for index in files.indices {
            if kept > 0, files[kept - 1].key == files[index].key {
                shared.insert(files[index].key)
            } else {
                files.swapAt(kept, index)
                kept += 1
            }
        }
        files.removeSubrange(kept...)
    }

    /// The position in `files` of `key`'s record, nil when it is not wanted.
    /// - Complexity: O(log n), by binary search.
    func position(of key: FileKey) -> Int? {
        var low = 0
        var high = files.count
        while low < high {
            let middle = (low + high) / 2
            let found = files[middle].key
            if found == key { return middle }
            if found < key { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The blobs of the file at `position`, in order.
    func blobs(at position: Int) -> ArraySlice<BlobLocation> {
        let file = files[position]
        return blobs[Int(file.firstBlob)..<Int(file.firstBlob + file.blobCount)]
    }
}

/// A pull hands the version's files to its `WantedFiles` as the manifest is decoded; the
/// directories and links stay the tree's.
extension WantedFiles: TreeEntrySink {
    mutating func enter(_ entry: SnapshotEntry) {}
    mutating func finishDirectory(hash: ContentHash) {}

    /// Room for as many files and blobs as the manifest's bytes can hold (not as its header
    /// claims): the arrays are then never regrown, which would hold two copies at once.
    mutating func reserve(_ likelyCount: Int) {
        files.reserveCapacity(likelyCount)
        blobs.reserveCapacity(likelyCount)
    }
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
