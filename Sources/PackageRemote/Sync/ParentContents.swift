import PackageCore

/// The contents a push's parent version holds, for a push to find the files it need not
/// read: each distinct content's key beside where its blobs are in one array, sorted by key
/// (32 bytes a content, found by binary search), rather than the version's entries (112
/// bytes each) or a hash table of their blobs. A push is handed the parent's files as its
/// manifest is decoded (`add(_:blobs:)`): the version's entries are never held.
struct ParentContents: Sendable {
    fileprivate struct Content: ContentRecord {
        var key: FileKey
        var firstBlob: UInt32 = 0
        var blobCount: UInt32 = 0
    }

    /// One record a content once `finish()` ran, sorted by key.
    private var table = ContentRecords<Content>()
    /// Where a blob is now (a prune may have moved it: `BlobIndex.place`).
    private let place: @Sendable (BlobLocation) -> BlobLocation

    /// Contents to be added (`add`, then `finish`).
    init(place: @escaping @Sendable (BlobLocation) -> BlobLocation = { $0 }) {
        self.place = place
    }

    /// The contents of `parent` (nil: none), whose blobs are placed already.
    init(_ parent: VersionManifest?) {
        self.init()
        for entry in parent?.entries ?? [] { add(entry, blobs: entry.blobs) }
        finish()
    }

    /// Adds `entry`'s content when it is a regular file.
    mutating func add(_ entry: RemoteEntry, blobs entryBlobs: ArraySlice<BlobLocation>) {
        guard entry.kind == .regular else { return }
        table.append(Content(key: FileKey(entry.contentHash, entry.size)), blobs: entryBlobs.lazy.map(place))
    }

    /// Sorts the contents by key and keeps one record a content (the first added).
    mutating func finish() { table.keepFirstOfEachContent() }

    /// The blobs of the content `key`, when the parent holds it.
    func blobs(of key: FileKey) -> ArraySlice<BlobLocation>? {
        table.position(of: key).map { table.blobs(at: $0) }
    }

    /// Every blob of the parent's contents, each content's once, numbered in turn; then
    /// `extra` (a blob two contents share appears twice: harmless to the table that takes
    /// them). Four bytes a content, not a copy of the blobs.
    func knownBlobs(extra: [BlobLocation] = []) -> KnownBlobs {
        var starts: [UInt32] = [0]
        starts.reserveCapacity(table.records.count + 1)
        for content in table.records { starts.append(starts.last! + content.blobCount) }
        return KnownBlobs(contents: self, starts: starts, extra: extra)
    }

    /// The blobs of the `position`th distinct content.
    fileprivate func blobs(ofContent position: Int) -> ArraySlice<BlobLocation> {
        table.blobs(at: position)
    }
}

/// A push hands its parent's files to `ParentContents` as the manifest is decoded.
extension ParentContents: VersionFileSink {
    mutating func reserve(_ likelyCount: Int) { table.reserve(likelyCount) }
}

/// The blobs a remote holds when a push begins, numbered `0..<count`: its parent's, each
/// distinct content's in turn, then those of the packs an interrupted push left.
struct KnownBlobs: Sendable {
    fileprivate let contents: ParentContents
    /// Where each content's blobs start in the numbering; the last is their total.
    fileprivate let starts: [UInt32]
    var extra: [BlobLocation]

    var count: Int { Int(starts.last!) + extra.count }

    /// The blob numbered `ordinal`.
    subscript(ordinal: Int) -> BlobLocation {
        let parentCount = Int(starts.last!)
        if ordinal >= parentCount { return extra[ordinal - parentCount] }
        // The content whose range holds `ordinal`: the last start at or below it.
        var low = 0
        var high = starts.count - 1
        while high - low > 1 {
            let middle = (low + high) / 2
            if Int(starts[middle]) <= ordinal { low = middle } else { high = middle }
        }
        let blobs = contents.blobs(ofContent: low)
        return blobs[blobs.startIndex + ordinal - Int(starts[low])]
    }
}
