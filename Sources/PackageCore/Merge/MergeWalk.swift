/// The walk behind `TreeMerge`: the three depth-first entry lists side by side, one path at a
/// time, deciding each path from which sides hold it.
///
/// State beyond the three positions:
/// - `deletion`: the outermost directory one side deleted while the other kept something
///   beneath it. Inside it, an addition on the keeping side is a conflict, not a plain add.
/// - `pending`: directories (outermost first, each inside the previous) that one side
///   deleted and the other left as they were: they reach the merged tree only when
///   something beneath them does, so that kept content always has its parents.
/// - `alignment`: a subtree whose Merkle hash is equal on every side that holds it. Its
///   entries are the same names in the same order on those sides, so they are taken index
///   by index without comparing paths; only permission bits (outside the hash) can differ.
struct MergeWalk {
    enum Side { case base, local, other }

    /// What the merged tree holds at a path, as one side (or a resolver) would have it.
    enum Version {
        /// Nothing: every present side's subtree is skipped.
        case absent
        /// A side's entry with everything beneath it, taken whole.
        case subtree(Side, Int)
        /// One file or link (or a directory replacing a subtree: never built).
        case entry(SnapshotEntry, MergeSource)
        /// A directory now; its children are merged by the walk.
        case directory(SnapshotEntry, MergeSource)
        /// A directory only if the walk keeps something beneath it.
        case pendingDirectory(SnapshotEntry, MergeSource)

        /// Whether the walk goes on into the children (rather than skipping the subtrees).
        var walksChildren: Bool {
            switch self {
            case .directory, .pendingDirectory: return true
            case .absent, .subtree, .entry: return false
            }
        }
    }

    struct Alignment {
        var base: Bool
        var local: Bool
        var other: Bool
        /// The end of the aligned subtree, on the first side it covers.
        var end: Int
    }

    let base: [SnapshotEntry]
    let local: [SnapshotEntry]
    let other: [SnapshotEntry]
    let resolve: (MergeConflict) -> MergeResolution?

    var b = 0
    var l = 0
    var o = 0
    var entries: [SnapshotEntry] = []
    var sources: [MergeSource] = []
    var conflicts: [MergeConflict] = []
    var resolved: [ResolvedConflict] = []
    var pending: [(entry: SnapshotEntry, source: MergeSource)] = []
    var deletion: (root: String, by: Side)?
    var alignment: Alignment?
    /// Whether the path being decided lies in an aligned subtree: its sides then hold the
    /// same names, kinds and contents, and only permission bits are compared.
    var stepIsAligned = false

    init(
        base: [SnapshotEntry], local: [SnapshotEntry], other: [SnapshotEntry],
        resolve: @escaping (MergeConflict) -> MergeResolution?
    ) {
        self.base = base
        self.local = local
        self.other = other
        self.resolve = resolve
        entries.reserveCapacity(max(local.count, other.count))
        sources.reserveCapacity(max(local.count, other.count))
    }

    mutating func run() {
        while b < base.count || l < local.count || o < other.count {
            var atBase: Int?
            var atLocal: Int?
            var atOther: Int?
            stepIsAligned = false
            if let aligned = alignment, (aligned.base ? b : aligned.local ? l : o) < aligned.end {
                stepIsAligned = true
                atBase = aligned.base ? b : nil
                atLocal = aligned.local ? l : nil
                atOther = aligned.other ? o : nil
            } else {
                alignment = nil
                var first: String?
                if b < base.count {
                    first = base[b].path
                    atBase = b
                }
                if l < local.count {
                    let path = local[l].path
                    let order = first.map { PathOrder.compareBytes(path, $0, slashIsLowest: true) } ?? -1
                    if order < 0 {
                        first = path
                        atBase = nil
                    }
                    if order <= 0 { atLocal = l }
                }
                if o < other.count {
                    let path = other[o].path
                    let order = first.map { PathOrder.compareBytes(path, $0, slashIsLowest: true) } ?? -1
                    if order < 0 {
                        atBase = nil
                        atLocal = nil
                    }
                    if order <= 0 { atOther = o }
                }
            }
            let path = atBase.map { base[$0].path } ?? atLocal.map { local[$0].path } ?? other[atOther!].path
            leaveFinishedDirectories(before: path)
            let advance = step(atBase, atLocal, atOther, path: path)
            assert(
                (atBase == nil || advance.base > 0) && (atLocal == nil || advance.local > 0)
                    && (atOther == nil || advance.other > 0), "the merge walk must move on every side at the path")
            b += advance.base
            l += advance.local
            o += advance.other
        }
    }

    /// Drops the pending directories and the deletion that `path` is not beneath: the walk
    /// has left them (depth-first order: a subtree's entries are contiguous).
    mutating func leaveFinishedDirectories(before path: String) {
        while let top = pending.last, !PathOrder.isDescendant(path, of: top.entry.path) {
            pending.removeLast()
        }
        if let deletion, !PathOrder.isDescendant(path, of: deletion.root) {
            self.deletion = nil
        }
    }

    /// Decides one path from the sides that hold it; returns how far to move on each.
    mutating func step(_ atBase: Int?, _ atLocal: Int?, _ atOther: Int?, path: String)
        -> (base: Int, local: Int, other: Int)
    {
        switch (atBase, atLocal, atOther) {
        case let (i?, nil, nil):
            // Deleted on both sides.
            return (base[i].subtreeSpan, 0, 0)
        case let (nil, j?, nil):
            return (0, addedOnOneSide(.local, j, path: path), 0)
        case let (nil, nil, k?):
            return (0, 0, addedOnOneSide(.other, k, path: path))
        case let (nil, j?, k?):
            let (left, right) = addedOnBoth(j, k, path: path)
            return (0, left, right)
        case let (i?, j?, nil):
            let (left, right) = deletedOnOneSide(by: .other, i, j, path: path)
            return (left, right, 0)
        case let (i?, nil, k?):
            let (left, right) = deletedOnOneSide(by: .local, i, k, path: path)
            return (left, 0, right)
        case let (i?, j?, k?):
            return presentOnAll(i, j, k, path: path)
        case (nil, nil, nil):
            preconditionFailure("the merge walk found no side at a path")
        }
    }

    // MARK: The cases

    /// A path only `side` holds: its addition, taken whole — a conflict when the other side
    /// deleted a directory above it (the addition is kept all the same).
    mutating func addedOnOneSide(_ side: Side, _ index: Int, path: String) -> Int {
        let entry = list(side)[index]
        if let deletion, deletion.by != side {
            let version = Version.subtree(side, index)
            _ = conflict(
                side == .local ? .modifiedDeleted : .deletedModified, path: path, base: nil,
                local: side == .local ? index : nil, other: side == .other ? index : nil,
                localVersion: side == .local ? version : .absent, otherVersion: side == .other ? version : .absent,
                keep: side)
        } else {
            emitSubtree(side, index)
        }
        return entry.subtreeSpan
    }

    /// A path both sides added.
    mutating func addedOnBoth(_ j: Int, _ k: Int, path: String) -> (Int, Int) {
        let mine = local[j]
        let theirs = other[k]
        if mine.kind != theirs.kind {
            _ = conflict(
                .addedDifferently, path: path, base: nil, local: j, other: k,
                localVersion: .subtree(.local, j), otherVersion: .subtree(.other, k), keep: .local)
            return (mine.subtreeSpan, theirs.subtreeSpan)
        }
        if mine.kind != .directory {
            if same(mine, theirs) {
                emit(mine, .local)
            } else {
                _ = conflict(
                    .addedDifferently, path: path, base: nil, local: j, other: k,
                    localVersion: .entry(mine, .local), otherVersion: .entry(theirs, .other), keep: .local)
            }
            return (1, 1)
        }
        alignIfEqual(local: j, other: k)
        return newDirectoryOnBoth(.addedDifferently, base: nil, j, k, path: path)
    }

    /// A directory both sides now have where base had none (or had a file or link): its
    /// entry now, its children by the walk.
    mutating func newDirectoryOnBoth(_ kind: MergeConflict.Kind, base i: Int?, _ j: Int, _ k: Int, path: String)
        -> (Int, Int)
    {
        let mine = local[j]
        let theirs = other[k]
        if mine.permissions == theirs.permissions {
            emit(mine, .local)
            return (1, 1)
        }
        let walks = conflict(
            kind, path: path, base: i, local: j, other: k,
            localVersion: .directory(mine, .local), otherVersion: .directory(theirs, .other), keep: .local)
        return walks ? (1, 1) : (mine.subtreeSpan, theirs.subtreeSpan)
    }

    /// A path base and one side hold, which the other side (`deleter`) deleted, itself or
    /// with a directory above it. Unchanged on the keeping side: deleted. Changed: a
    /// conflict, and the keeping side's version stays (a deletion never wins over an edit).
    mutating func deletedOnOneSide(by deleter: Side, _ i: Int, _ index: Int, path: String) -> (Int, Int) {
        let keeper: Side = deleter == .other ? .local : .other
        let source: MergeSource = keeper == .local ? .local : .other
        let kind: MergeConflict.Kind = keeper == .local ? .modifiedDeleted : .deletedModified
        let old = base[i]
        let kept = list(keeper)[index]
        let localIndex = keeper == .local ? index : nil
        let otherIndex = keeper == .other ? index : nil

        func versions(_ keeping: Version, _ deleting: Version) -> (local: Version, other: Version) {
            keeper == .local ? (keeping, deleting) : (deleting, keeping)
        }

        if old.kind != kept.kind {
            let (mine, theirs) = versions(.subtree(keeper, index), .absent)
            _ = conflict(
                kind, path: path, base: i, local: localIndex, other: otherIndex, localVersion: mine,
                otherVersion: theirs, keep: keeper)
            return (old.subtreeSpan, kept.subtreeSpan)
        }
        if old.kind != .directory {
            if !same(old, kept) {
                let (mine, theirs) = versions(.entry(kept, source), .absent)
                _ = conflict(
                    kind, path: path, base: i, local: localIndex, other: otherIndex, localVersion: mine,
                    otherVersion: theirs, keep: keeper)
            }
            return (1, 1)
        }
        if alignment == nil, old.hash == kept.hash, old.descendantCount == kept.descendantCount {
            alignment = Alignment(base: true, local: keeper == .local, other: keeper == .other, end: i + old.subtreeSpan)
        }
        if deletion == nil { deletion = (path, deleter) }
        if old.permissions == kept.permissions {
            pending.append((kept, source))
            return (1, 1)
        }
        let (mine, theirs) = versions(.directory(kept, source), .pendingDirectory(kept, source))
        let walks = conflict(
            kind, path: path, base: i, local: localIndex, other: otherIndex, localVersion: mine, otherVersion: theirs,
            keep: keeper)
        return walks ? (1, 1) : (old.subtreeSpan, kept.subtreeSpan)
    }

    /// A path all three hold.
    mutating func presentOnAll(_ i: Int, _ j: Int, _ k: Int, path: String) -> (base: Int, local: Int, other: Int) {
        let old = base[i]
        let mine = local[j]
        let theirs = other[k]
        let spans = (old.subtreeSpan, mine.subtreeSpan, theirs.subtreeSpan)
        if old.kind == mine.kind, mine.kind == theirs.kind {
            if old.kind == .directory {
                if alignment == nil, old.hash == mine.hash, mine.hash == theirs.hash,
                    old.descendantCount == mine.descendantCount, mine.descendantCount == theirs.descendantCount
                {
                    alignment = Alignment(base: true, local: true, other: true, end: i + old.subtreeSpan)
                }
                return directoryOnAll(i, j, k, path: path) ? (1, 1, 1) : spans
            }
            fileOnAll(i, j, k, path: path)
            return (1, 1, 1)
        }
        // A change of kind on at least one side: taken when the other side left the whole
        // subtree as it was, a conflict otherwise.
        if mine.kind == old.kind, sameSubtree(base, i, local, j) {
            emitSubtree(.other, k)
            return spans
        }
        if theirs.kind == old.kind, sameSubtree(base, i, other, k) {
            emitSubtree(.local, j)
            return spans
        }
        if mine.kind == theirs.kind {
            // The same new kind on both sides.
            if mine.kind != .directory {
                if mine.sameForMerge(as: theirs) {
                    emit(mine, .local)
                } else {
                    _ = conflict(
                        .typeChanged, path: path, base: i, local: j, other: k, localVersion: .entry(mine, .local),
                        otherVersion: .entry(theirs, .other), keep: .local)
                }
                return spans
            }
            // Both replaced a file or link with a directory: base has nothing beneath it.
            alignIfEqual(local: j, other: k)
            let (left, right) = newDirectoryOnBoth(.typeChanged, base: i, j, k, path: path)
            return (1, left, right)
        }
        _ = conflict(
            .typeChanged, path: path, base: i, local: j, other: k, localVersion: .subtree(.local, j),
            otherVersion: .subtree(.other, k), keep: .local)
        return spans
    }

    /// A directory all three hold: its permission bits merge; the walk goes on into its
    /// children unless a resolver replaced it. Returns whether the walk goes on.
    mutating func directoryOnAll(_ i: Int, _ j: Int, _ k: Int, path: String) -> Bool {
        let old = base[i]
        let mine = local[j]
        let theirs = other[k]
        let localChanged = mine.permissions != old.permissions
        let otherChanged = theirs.permissions != old.permissions
        switch (localChanged, otherChanged) {
        case (false, false): emit(mine, .base)
        case (true, false): emit(mine, .local)
        case (false, true): emit(theirs, .other)
        case (true, true):
            if mine.permissions == theirs.permissions {
                emit(mine, .local)
            } else {
                return conflict(
                    .permissionsDiffer, path: path, base: i, local: j, other: k,
                    localVersion: .directory(mine, .local), otherVersion: .directory(theirs, .other), keep: .local)
            }
        }
        return true
    }

    /// A file or link all three hold with one kind: content and permission bits merge
    /// independently.
    mutating func fileOnAll(_ i: Int, _ j: Int, _ k: Int, path: String) {
        let old = base[i]
        let mine = local[j]
        let theirs = other[k]
        let localContent = !sameContent(old, mine)
        let otherContent = !sameContent(old, theirs)
        if localContent, otherContent, !sameContent(mine, theirs) {
            _ = conflict(
                .bothModified, path: path, base: i, local: j, other: k, localVersion: .entry(mine, .local),
                otherVersion: .entry(theirs, .other), keep: .local)
            return
        }
        let localMode = mine.permissions != old.permissions
        let otherMode = theirs.permissions != old.permissions
        if !localContent, !otherContent, !localMode, !otherMode {
            emit(mine, .base)
            return
        }
        // Whose bytes: the side that changed them (local when both made the same change).
        let contentSide: MergeSource? = localContent ? .local : otherContent ? .other : nil
        let carrier = contentSide == .other ? theirs : mine
        if localMode, otherMode, mine.permissions != theirs.permissions {
            var withMine = carrier
            withMine.permissions = mine.permissions
            var withTheirs = contentSide == .local ? mine : theirs
            withTheirs.permissions = theirs.permissions
            _ = conflict(
                .permissionsDiffer, path: path, base: i, local: j, other: k,
                localVersion: .entry(withMine, contentSide ?? .local),
                otherVersion: .entry(withTheirs, contentSide ?? .other), keep: .local)
            return
        }
        var merged: SnapshotEntry
        let source: MergeSource
        if let contentSide {
            merged = carrier
            source = contentSide
        } else if localMode {
            merged = mine
            source = .local
        } else {
            merged = theirs
            source = .other
        }
        merged.permissions = localMode ? mine.permissions : otherMode ? theirs.permissions : old.permissions
        emit(merged, source)
    }

    // MARK: Conflicts

    /// Records a conflict, asks the resolver, and applies the chosen version (`keep`'s when
    /// the resolver has none). Returns whether the walk goes on into the children.
    mutating func conflict(
        _ kind: MergeConflict.Kind, path: String, base i: Int?, local j: Int?, other k: Int?,
        localVersion: Version, otherVersion: Version, keep: Side
    ) -> Bool {
        var descendants: [SnapshotEntry] = []
        if keep == .local, case .subtree(.other, let index) = otherVersion, other[index].kind == .directory {
            descendants = Array(other[(index + 1)..<(index + other[index].subtreeSpan)])
        }
        let record = MergeConflict(
            path: RelativePath(trusted: path), kind: kind, base: i.map { base[$0] }, local: j.map { local[$0] },
            other: k.map { other[$0] }, otherDescendants: descendants)
        var chosen = keep == .local ? localVersion : otherVersion
        switch resolve(record) {
        case nil:
            conflicts.append(record)
        case .takeLocal:
            chosen = localVersion
            resolved.append(ResolvedConflict(conflict: record, resolution: .takeLocal))
        case .takeOther:
            chosen = otherVersion
            resolved.append(ResolvedConflict(conflict: record, resolution: .takeOther))
        case .use(var entry):
            if entry.kind == .regular || entry.kind == .symbolicLink {
                entry.path = path
                entry.descendantCount = 0
                chosen = .entry(entry, .resolver)
                resolved.append(ResolvedConflict(conflict: record, resolution: .use(entry)))
            } else {
                conflicts.append(record)
            }
        }
        apply(chosen)
        return chosen.walksChildren
    }

    mutating func apply(_ version: Version) {
        switch version {
        case .absent: break
        case .subtree(let side, let index): emitSubtree(side, index)
        case .entry(let entry, let source), .directory(let entry, let source): emit(entry, source)
        case .pendingDirectory(let entry, let source): pending.append((entry, source))
        }
    }

    // MARK: Output

    /// Appends `entry`, after the pending directories above it (all of them are: the walk
    /// drops those it has left).
    mutating func emit(_ entry: SnapshotEntry, _ source: MergeSource) {
        for directory in pending {
            entries.append(directory.entry)
            sources.append(directory.source)
        }
        pending.removeAll(keepingCapacity: true)
        entries.append(entry)
        sources.append(source)
    }

    /// Appends `side`'s entry at `index` and everything beneath it.
    mutating func emitSubtree(_ side: Side, _ index: Int) {
        let list = list(side)
        emit(list[index], MergeWalk.source(side))
        let end = index + list[index].subtreeSpan
        entries.append(contentsOf: list[(index + 1)..<end])
        sources.append(contentsOf: repeatElement(MergeWalk.source(side), count: end - index - 1))
    }

    // MARK: Helpers

    /// `sameForMerge`, or only the permission bits in an aligned subtree.
    func same(_ a: SnapshotEntry, _ c: SnapshotEntry) -> Bool {
        stepIsAligned ? a.permissions == c.permissions : a.sameForMerge(as: c)
    }

    /// `sameContentForMerge`, known true in an aligned subtree.
    func sameContent(_ a: SnapshotEntry, _ c: SnapshotEntry) -> Bool {
        stepIsAligned || a.sameContentForMerge(as: c)
    }

    func list(_ side: Side) -> [SnapshotEntry] {
        switch side {
        case .base: return base
        case .local: return local
        case .other: return other
        }
    }

    static func source(_ side: Side) -> MergeSource {
        switch side {
        case .base: return .base
        case .local: return .local
        case .other: return .other
        }
    }

    /// Starts an aligned walk of two new directories with one Merkle hash.
    mutating func alignIfEqual(local j: Int, other k: Int) {
        if alignment == nil, local[j].hash == other[k].hash, local[j].descendantCount == other[k].descendantCount {
            alignment = Alignment(base: false, local: true, other: true, end: j + local[j].subtreeSpan)
        }
    }

    /// Whether two subtrees are equal for a merge: one Merkle hash (names, kinds,
    /// executable bits, contents) and the same permission bits entry by entry.
    ///
    /// - Complexity: O(1) for files and links, O(subtree) for directories.
    func sameSubtree(_ left: [SnapshotEntry], _ i: Int, _ right: [SnapshotEntry], _ j: Int) -> Bool {
        let a = left[i]
        let c = right[j]
        guard a.kind == c.kind else { return false }
        guard a.kind == .directory else { return a.sameForMerge(as: c) }
        guard a.hash == c.hash, a.descendantCount == c.descendantCount, a.permissions == c.permissions else {
            return false
        }
        for offset in 1..<a.subtreeSpan where left[i + offset].permissions != right[j + offset].permissions {
            return false
        }
        return true
    }
}
