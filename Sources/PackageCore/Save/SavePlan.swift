/// Where the bytes of a file to be written come from.
public enum ContentOrigin: Sendable {
    /// A regular file on disk (in the source directory, or a file a tree was read from),
    /// with the stat data seen when its hash was taken: if its inode, size or modification
    /// time differ when it is copied, the save fails rather than store unseen bytes.
    case file(path: String, seen: FileStatus?)
    /// Bytes in memory (a FileWrapper's contents).
    case bytes([UInt8])
}

/// What a save must do to turn the package's current tree (`old`) into the new one
/// (`new`): the output of comparing them, consumed by every strategy.
struct SavePlan {
    let old: TreeSnapshot
    let new: TreeSnapshot
    /// Where each new regular file's bytes come from (parallel to `new.entries`).
    let origins: [ContentOrigin?]
    /// New entries to create or replace, in depth-first order (parents first).
    var creations: [Int] = []
    /// Old subtree roots to remove: deleted paths, and paths whose kind changed.
    var removals: [Int] = []
    /// New entries whose content is unchanged but whose permission bits differ.
    var permissionChanges: [Int] = []
    /// For each new entry with unchanged content at the same path, the old entry's index.
    var unchangedOld: [Int?]
    /// New entries with unchanged content whose recorded stat data (source stamp, or the
    /// package file's own stat) should be refreshed in the manifest.
    var refreshes: [Int] = []

    /// Compares every entry of both trees (O(n)): content by tag and hash, permission bits,
    /// and the source stamps the manifest keeps.
    ///
    /// `reread`: files of `new` whose hash had to be recomputed (their source's stat cache
    /// entry no longer vouched for them, racy ones included); unchanged ones among them are
    /// recorded afresh, so they are not reread at every save.
    init(
        old: TreeSnapshot, new: TreeSnapshot, origins: [ContentOrigin?], recorded: PackageManifest? = nil,
        reread: Set<FileName> = []
    ) {
        self.old = old
        self.new = new
        self.origins = origins
        self.unchangedOld = Array(repeating: nil, count: new.entries.count)
        let before = old.entries
        let after = new.entries
        var i = 0
        var j = 0
        func createSubtree(_ root: Int) {
            for index in root..<(root + after[root].subtreeSpan) { creations.append(index) }
        }
        while i < before.count || j < after.count {
            if j == after.count {
                removals.append(i)
                i += before[i].subtreeSpan
                continue
            }
            if i == before.count {
                createSubtree(j)
                j += after[j].subtreeSpan
                continue
            }
            let order = PathOrder.compareBytes(before[i].path, after[j].path, slashIsLowest: true)
            if order < 0 {
                removals.append(i)
                i += before[i].subtreeSpan
                continue
            }
            if order > 0 {
                createSubtree(j)
                j += after[j].subtreeSpan
                continue
            }
            let was = before[i]
            let now = after[j]
            if was.kind != now.kind {
                removals.append(i)
                createSubtree(j)
                i += was.subtreeSpan
                j += now.subtreeSpan
                continue
            }
            switch now.kind {
            case .directory:
                if was.permissions != now.permissions { permissionChanges.append(j) }
            case .symbolicLink:
                if was.hash == now.hash { unchangedOld[j] = i } else { creations.append(j) }
            default:
                if was.hash == now.hash && was.size == now.size {
                    unchangedOld[j] = i
                    if was.permissions != now.permissions {
                        permissionChanges.append(j)
                    } else if was.source != now.source || (!reread.isEmpty && reread.contains(FileName(now.path))) {
                        refreshes.append(j)
                    }
                } else {
                    creations.append(j)
                }
            }
            i += 1
            j += 1
        }
        // Package files the manifest's stat cache no longer vouches for (a save's own
        // renames move ctimes; racy entries): record them afresh so they are not reread
        // next time.
        if let recorded {
            for (index, entry) in after.enumerated() where entry.kind == .regular {
                guard let oldIndex = unchangedOld[index] else { continue }
                let current = before[oldIndex]
                let status = FileStatus(
                    kind: .regular, permissions: current.permissions, size: current.size,
                    modificationTime: current.modificationTime, changeTime: current.changeTime, inode: current.inode,
                    device: current.device)
                if recorded.cachedHash(for: current.path, status: status) == nil, !refreshes.contains(index) {
                    refreshes.append(index)
                }
            }
        }
    }

    /// Whether the package already holds exactly the new tree.
    var isEmpty: Bool { creations.isEmpty && removals.isEmpty && permissionChanges.isEmpty }

    /// Removed entries, counting every entry of removed subtrees.
    var removedEntryCount: Int { removals.reduce(0) { $0 + old.entries[$1].subtreeSpan } }
}
