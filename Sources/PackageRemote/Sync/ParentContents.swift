/// The contents a push's parent version holds, for a push to find the files it need not
/// read: each distinct content's key beside the position of an entry holding it, sorted by
/// key (32 bytes a content, found by binary search), rather than a hash table of the
/// entries' blobs (56 bytes a slot, at least a third of them empty).
struct ParentContents {
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

    /// Every blob of the parent's contents, each content's once (a blob two contents
    /// share appears twice: harmless to the table that takes them).
    func allBlobs() -> [BlobLocation] {
        var blobs: [BlobLocation] = []
        blobs.reserveCapacity(keys.count)
        for item in keys { blobs.append(contentsOf: parent!.entries[Int(item.entry)].blobs) }
        return blobs
    }
}
