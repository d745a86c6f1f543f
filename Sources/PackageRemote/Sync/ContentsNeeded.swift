import PackageCore

/// The contents a pull must provide: each content of the wanted entries that DEST does not
/// hold at the same path, once, with where its entry is. Paths are looked up in DEST's
/// tree by binary search on their bytes (twins such as `é` and `e\u{301}` stay two).
///
/// What it keeps of each needed content is a few positions into the wanted entries (4 bytes
/// each), sorted by content for lookups: a fresh pull of a million small files holds no
/// hash table of their keys.
struct ContentsNeeded {
    /// Each needed content, in the order first wanted.
    let order: Keys
    /// The index in the wanted entries of each needed content's first entry.
    let index: Positions
    /// Needed contents DEST holds at another path: that entry's index in DEST's tree.
    private(set) var localByContent: [FileKey: Int] = [:]
    /// DEST's large files whose unchanged pieces may serve a new version of them.
    private(set) var pieceSources: [SnapshotEntry] = []
    /// For each needed content (in `order`), the size of the file DEST holds at its path now
    /// (which the pull replaces), unless DEST holds the content itself elsewhere; -1 for none.
    private var replacedSizes: [Int64] = []

    init(_ wanted: [RemoteEntry], wholeOnly: Set<FileKey>, current: TreeSnapshot?, options: RemoteOptions) {
        // Every wanted file DEST lacks at its path, with the index of what DEST holds there.
        var candidates: [(position: Int32, old: Int32)] = []
        for (position, entry) in wanted.enumerated() where entry.kind == .regular && entry.size > 0 {
            let old = current?.index(of: entry.path).flatMap { current!.entries[$0].kind == .regular ? $0 : nil }
            if let old, current!.entries[old].hash == entry.contentHash, current!.entries[old].size == entry.size { continue }
            candidates.append((Int32(position), Int32(old ?? -1)))
            let key = FileKey(entry.contentHash, entry.size)
            if !wholeOnly.contains(key), let old, current!.entries[old].size > options.chunking.wholeFileLimit,
                entry.size > options.chunking.wholeFileLimit
            {
                pieceSources.append(current!.entries[old])
            }
        }
        // One candidate a content, the first wanted: sorted by content, then position.
        candidates.sort { lhs, rhs in
            let (left, right) = (wanted.key(at: lhs.position), wanted.key(at: rhs.position))
            return left != right ? left < right : lhs.position < rhs.position
        }
        var unique: [(position: Int32, old: Int32)] = []
        for candidate in candidates
        where unique.last.map({ wanted.key(at: $0.position) != wanted.key(at: candidate.position) }) ?? true {
            unique.append(candidate)
        }
        candidates = []
        index = Positions(wanted: wanted, byKey: unique.map(\.position))
        unique.sort { $0.position < $1.position }
        order = Keys(wanted: wanted, positions: unique.map(\.position))
        if let current, !unique.isEmpty {
            for (position, entry) in current.entries.enumerated() where entry.kind == .regular {
                let key = FileKey(entry.hash, entry.size)
                if index[key] != nil { localByContent[key] = position }
            }
        }
        replacedSizes = unique.map { candidate in
            guard candidate.old >= 0, localByContent[wanted.key(at: candidate.position)] == nil else { return -1 }
            return current!.entries[Int(candidate.old)].size
        }
    }

    /// What `PullOperation.requireRoom` weighs: each needed content's size, and the size of
    /// the file it replaces.
    func room() -> [(size: Int64, replacing: Int64?)] {
        zip(order, replacedSizes).map { ($0.size, $1 >= 0 ? $1 : nil) }
    }

    /// The needed contents in the order first wanted, read from the wanted entries.
    struct Keys: RandomAccessCollection {
        fileprivate let wanted: [RemoteEntry]
        fileprivate let positions: [Int32]

        var startIndex: Int { 0 }
        var endIndex: Int { positions.count }
        subscript(offset: Int) -> FileKey { wanted.key(at: positions[offset]) }
    }

    /// Finds the first wanted entry of a needed content by binary search.
    struct Positions {
        fileprivate let wanted: [RemoteEntry]
        /// Positions in the wanted entries, sorted by their content.
        fileprivate let byKey: [Int32]

        /// The position of the first wanted entry of `key`, or nil when it is not needed.
        subscript(key: FileKey) -> Int? {
            var low = 0
            var high = byKey.count
            while low < high {
                let middle = (low + high) / 2
                let found = wanted.key(at: byKey[middle])
                if found == key { return Int(byKey[middle]) }
                if found < key { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }
}

extension FileKey: Comparable {
    /// By hash, then size: any total order serves lookups.
    static func < (lhs: FileKey, rhs: FileKey) -> Bool {
        lhs.hash != rhs.hash ? lhs.hash < rhs.hash : lhs.size < rhs.size
    }
}

extension [RemoteEntry] {
    /// The content key of the entry at `position`.
    fileprivate func key(at position: Int32) -> FileKey {
        let entry = self[Int(position)]
        return FileKey(entry.contentHash, entry.size)
    }
}

extension [FileKey] {
    /// Whether this array, sorted ascending, holds `key` (binary search).
    func containsSorted(_ key: FileKey) -> Bool {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] == key { return true }
            if self[middle] < key { low = middle + 1 } else { high = middle }
        }
        return false
    }
}
