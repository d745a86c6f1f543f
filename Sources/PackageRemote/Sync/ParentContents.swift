/// The contents a push's parent version holds, for a push to find the files it need not
/// read: each distinct content's key beside the position of an entry holding it, sorted by
/// key (32 bytes a content, found by binary search), rather than a hash table of the
/// entries' blobs (56 bytes a slot, at least a third of them empty).
struct ParentContents: Sendable {
    private let parent: VersionManifest?
    private let keys: [(key: FileKey, entry: Int32)]

    init(_ parent: VersionManifest?) {
        self.parent = parent
        var keys: [(key: FileKey, entry: Int32)] = []
        for (position, entry) in (parent?.entries ?? []).enumerated() where entry.kind == .regular {
            keys.append((FileKey(entry.contentHash, entry.size), Int32(position)))
        }
        keys.sort { $0.key < $1.key }
        // One position a content: the first entry of each run of equal keys.
        var distinct: [(key: FileKey, entry: Int32)] = []
        distinct.reserveCapacity(keys.count)
        for item in keys where distinct.last?.key != item.key { distinct.append(item) }
        self.keys = distinct
    }

    /// The blobs of the content `key`, when the parent holds it.
    func blobs(of key: FileKey) -> ArraySlice<BlobLocation>? {
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle].key == key { return parent!.entries[Int(keys[middle].entry)].blobs }
            if keys[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Every blob of the parent's contents, each content's once, numbered in turn; then
    /// `extra` (a blob two contents share appears twice: harmless to the table that takes
    /// them). Four bytes a content, not a copy of the blobs.
    func knownBlobs(extra: [BlobLocation] = []) -> KnownBlobs {
        var starts: [UInt32] = [0]
        starts.reserveCapacity(keys.count + 1)
        for item in keys { starts.append(starts.last! + UInt32(parent!.entries[Int(item.entry)].blobs.count)) }
        return KnownBlobs(contents: self, starts: starts, extra: extra)
    }

    /// The blobs of the `position`th distinct content.
    fileprivate func blobs(ofContent position: Int) -> ArraySlice<BlobLocation> {
        parent!.entries[Int(keys[position].entry)].blobs
    }
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
