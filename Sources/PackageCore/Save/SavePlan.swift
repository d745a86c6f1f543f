/// Where the bytes of a file to be written come from.
///
/// Whatever the origin, the engine hashes the bytes in the same pass that writes them and
/// refuses the save when they are not the bytes the source described (their hash or size
/// differ): what a package holds is always what its manifest says.
public enum ContentOrigin: Sendable {
    /// A regular file on disk (in the source directory, or a file a tree was read from),
    /// with the stat data seen when its hash was taken: if its inode, size, modification or
    /// change time differ when it is copied, or move during the copy, the save is refused
    /// ("changed while it was being saved") rather than store bytes it never saw whole.
    case file(path: String, seen: FileStatus?)
    /// Bytes in memory (a FileWrapper's contents).
    case bytes([UInt8])
    /// Bytes produced on demand (a version being pulled from a remote, assembled from
    /// verified pieces).
    case stream(any ContentStream)
    /// A file the source wrote itself for this save, whose bytes it vouches for (it checked
    /// them as it wrote them: a pulled version assembled from verified objects), with the
    /// stat data seen then. On the package's file system it is *moved* into place — no
    /// second write — after checking it is still that file (inode, size); elsewhere it is
    /// copied and hashed like `.file`. The source must not touch it afterwards.
    case adopt(path: String, verified: FileStatus)
}

/// A file's bytes, produced in order on demand: for sources whose bytes are neither a local
/// file nor in memory.
public protocol ContentStream: Sendable {
    /// Calls `body` with every byte of the file, in order, in pieces of any size (the engine
    /// copies each piece before the next call). Throws to abort the save.
    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws
}

/// What a save must do to turn the package's current tree (`old`) into the new one
/// (`new`): the output of comparing them, consumed by every strategy.
struct SavePlan {
    let old: TreeSnapshot
    let new: TreeSnapshot
    /// Where each new regular file's bytes come from (parallel to `new.entries`, or empty);
    /// see `origin(at:)`.
    let origins: [ContentOrigin?]
    /// Where files without an origin are, at their paths (`SourceTree.contentDirectory`).
    let contentDirectory: String?
    /// Asked for files without an origin, before `contentDirectory` (`SourceTree.contentLookup`).
    let contentLookup: ContentLookup?
    /// New entries to create or replace, in depth-first order (parents first).
    var creations = EntryIndices()
    /// Old subtree roots to remove: deleted paths, and paths whose kind changed.
    var removals = EntryIndices()
    /// New entries whose content is unchanged but whose permission bits differ.
    var permissionChanges = EntryIndices()
    /// For each new entry with unchanged content at the same path, the old entry's index.
    var unchangedOld: OptionalEntryIndices
    /// New entries with unchanged content whose recorded stat data (source stamp, or the
    /// package file's own stat) should be refreshed in the manifest.
    var refreshes = EntryIndices()

    /// Compares every entry of both trees (O(n)): content by tag, size and hash, permission
    /// bits, and the source stamps the manifest keeps.
    ///
    /// `racyStamps`: the manifest whose source stamps `new` was described against, by a
    /// source that reread every file whose stamp still matched but was racy there
    /// (`SourceTree.rereadsRacySourceStamps`); unchanged ones are recorded afresh, so they
    /// are not reread at every save. `unknownOldContent`: paths of `old` files whose content
    /// is not known (a partial comparison): always rewritten.
    init(
        old: TreeSnapshot, new: TreeSnapshot, origins: [ContentOrigin?], contentDirectory: String? = nil,
        contentLookup: ContentLookup? = nil, vouched: EntryBits? = nil, racyStamps: PackageManifest? = nil,
        unknownOldContent: Set<RelativePath> = []
    ) {
        self.old = old
        self.new = new
        self.origins = origins
        self.contentDirectory = contentDirectory
        self.contentLookup = contentLookup
        // Filled by the comparison, which owns the one copy while it works.
        self.unchangedOld = OptionalEntryIndices(count: 0)
        var comparison = Comparison(before: old.entries, after: new.entries, racyStamps: racyStamps)
        comparison.compareEntries(unknownOldContent: unknownOldContent)
        if let vouched { comparison.refreshUnvouched(by: vouched) }
        self.creations = comparison.creations
        self.removals = comparison.removals
        self.permissionChanges = comparison.permissionChanges
        self.refreshes = comparison.refreshes
        self.unchangedOld = comparison.unchangedOld
    }

    /// The comparison of two trees' entries, as it builds the plan's lists.
    private struct Comparison {
        let before: [SnapshotEntry]
        let after: [SnapshotEntry]
        /// See `SavePlan.init`'s `racyStamps`.
        let racyStamps: PackageManifest?
        var unchangedOld: OptionalEntryIndices
        var creations = EntryIndices()
        var removals = EntryIndices()
        var permissionChanges = EntryIndices()
        var refreshes = EntryIndices()

        init(before: [SnapshotEntry], after: [SnapshotEntry], racyStamps: PackageManifest?) {
            self.before = before
            self.after = after
            self.racyStamps = racyStamps
            self.unchangedOld = OptionalEntryIndices(count: after.count)
        }

        /// One merge of the two path-sorted lists: a path on one side only is removed or
        /// created with its subtree; on both, compared by kind, then content and bits.
        mutating func compareEntries(unknownOldContent: Set<RelativePath>) {
            PathOrder.mergeJoin(before, after) { step in
                switch step {
                case .left(let i):
                    removals.append(i)
                    return (before[i].subtreeSpan, 0)
                case .right(let j):
                    createSubtree(j)
                    return (0, after[j].subtreeSpan)
                case .both(let i, let j):
                    let was = before[i]
                    let now = after[j]
                    if was.kind != now.kind {
                        removals.append(i)
                        createSubtree(j)
                        return (was.subtreeSpan, now.subtreeSpan)
                    }
                    compare(was, i, with: now, j, unknownOldContent: unknownOldContent)
                    return (1, 1)
                }
            }
        }

        private mutating func createSubtree(_ root: Int) {
            for index in root..<(root + after[root].subtreeSpan) { creations.append(index) }
        }

        /// Old entry `i` and new entry `j` at one path, of one kind. Unchanged means equal
        /// content hash and size, never a date alone.
        private mutating func compare(
            _ was: SnapshotEntry, _ i: Int, with now: SnapshotEntry, _ j: Int, unknownOldContent: Set<RelativePath>
        ) {
            switch now.kind {
            case .directory:
                if was.permissions != now.permissions { permissionChanges.append(j) }
            case .symbolicLink:
                if was.hash == now.hash { unchangedOld[j] = i } else { creations.append(j) }
            default:
                let known = unknownOldContent.isEmpty || !unknownOldContent.contains(RelativePath(trusted: was.path))
                if known && was.hash == now.hash && was.size == now.size {
                    unchangedOld[j] = i
                    if was.permissions != now.permissions {
                        permissionChanges.append(j)
                    } else if was.source != now.source || racyStamps?.hasRacySourceStamp(was) == true {
                        // A new stamp, or one the source reread because its record was racy.
                        refreshes.append(j)
                    }
                } else {
                    creations.append(j)
                }
            }
        }

        /// Package files the manifest's stat cache no longer vouches for (a save's own
        /// renames move ctimes; racy entries): recorded afresh so they are not reread next
        /// time.
        mutating func refreshUnvouched(by vouched: EntryBits) {
            // The refreshes so far are in index order (one walk): stepped through beside the
            // entries, not put in a set (a copied package refreshes every file).
            let compared = refreshes.count
            var next = 0
            for (index, entry) in after.enumerated() where entry.kind == .regular {
                guard let oldIndex = unchangedOld[index] else { continue }
                while next < compared && refreshes[next] < index { next += 1 }
                if next < compared && refreshes[next] == index { continue }
                if !vouched.contains(oldIndex) { refreshes.append(index) }
            }
        }
    }

    /// Whether the package already holds exactly the new tree.
    var isEmpty: Bool { creations.isEmpty && removals.isEmpty && permissionChanges.isEmpty }

    /// Removed entries, counting every entry of removed subtrees.
    var removedEntryCount: Int { removals.reduce(0) { $0 + old.entries[$1].subtreeSpan } }
}

extension SavePlan {
    /// Where new entry `index`'s bytes come from: its origin, what `contentLookup` says, or
    /// for a regular file in `contentDirectory` that file, with the stat data its entry
    /// carries as seen.
    func origin(at index: Int) -> ContentOrigin? {
        if index < origins.count, let origin = origins[index] { return origin }
        let entry = new.entries[index]
        guard entry.kind == .regular else { return nil }
        if let contentLookup, let origin = contentLookup(entry) { return origin }
        guard let contentDirectory else { return nil }
        return .file(
            path: RelativePath.join(contentDirectory, entry.path),
            seen: FileStatus(
                kind: .regular, permissions: entry.permissions, size: entry.size,
                modificationTime: entry.modificationTime, changeTime: entry.changeTime, inode: entry.inode,
                device: entry.device))
    }
}
