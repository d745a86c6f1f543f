import PackageCore

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
    var staged = StagedStamps()
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

/// The stamps of assembled contents: one flat array of 40-byte records, sorted once for
/// lookups by binary search (a hash table of a million of them would take twice the room).
struct StagedStamps: Sendable {
    private var records: [(key: FileKey, stamp: PulledContents.Stamp)] = []
    private var sorted = true

    /// The stamp of `key`, nil when it was not assembled. Setting one adds it (a later
    /// value for the same key wins).
    subscript(key: FileKey) -> PulledContents.Stamp? {
        get {
            guard sorted else { return records.last { $0.key == key }?.stamp }
            return position(of: key).map { records[$0].stamp }
        }
        set {
            guard let newValue else {
                records.removeAll { $0.key == key }
                return
            }
            if let last = records.last, !(last.key < key) { sorted = false }
            records.append((key, newValue))
        }
    }

    /// The number of contents (of distinct ones once sorted).
    var count: Int { records.count }

    /// Where `key`'s record is among the sorted records (0..<count), nil when it was not
    /// assembled: a table parallel to the contents needs no key of its own.
    /// - Precondition: `sortForLookups()` was called since the last change.
    func position(of key: FileKey) -> Int? {
        precondition(sorted, "positions are those of the sorted records")
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            if records[middle].key == key { return middle }
            if records[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Adds the stamps of many contents at once (later values for a key win), taking
    /// `more`'s buffer when there are none yet and leaving `more` empty, with room for
    /// `extra` records added one at a time afterwards.
    mutating func take(_ more: inout [(key: FileKey, stamp: PulledContents.Stamp)], reservingRoomFor extra: Int) {
        if !more.isEmpty { sorted = false }
        if records.isEmpty {
            swap(&records, &more)
        } else {
            records.append(contentsOf: more)
            more = []
        }
        records.reserveCapacity(records.count + extra)
    }

    /// Sorts the records for lookups by binary search (until then a lookup is a linear
    /// scan): called once all contents are assembled.
    mutating func sortForLookups() {
        guard !sorted else { return }
        // Swift's sort is stable: of two records of one key, the later one ends last and is kept.
        records.sort { $0.key < $1.key }
        var kept = 0
        for index in records.indices {
            if kept > 0, records[kept - 1].key == records[index].key {
                records[kept - 1] = records[index]
            } else {
                records.swapAt(kept, index)
                kept += 1
            }
        }
        records.removeSubrange(kept...)
        sorted = true
    }
}
