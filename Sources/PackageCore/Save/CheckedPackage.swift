/// What a save starts from when its package's manifest cannot be taken as the package's
/// state (copied or received with the package, or marked for a check): the tree a check of
/// the package found, with what only the manifest knows carried over to it.
///
/// The check's tree stands in for the manifest's entries from then on, so the save holds
/// one tree of the package, not two (a copied package of a million files: 121 MB less).
struct CheckedPackage {
    /// The package as checked: every entry with its current stat data and hash, and the
    /// source stamps and chunk lists the manifest recorded where the content is the
    /// recorded one.
    var snapshot: TreeSnapshot
    /// The manifest with its entries replaced by `snapshot` (sharing its storage): the
    /// source stamps for the source's scan, the record times for racy stamps.
    var stamps: PackageManifest
    /// The manifest's head before the check: the tree it recorded, which the save
    /// compares the new tree's root with.
    var recordedHead: PackageManifest.Head
    /// The regular files of `snapshot` the manifest's stat cache vouched for: the others
    /// are recorded afresh even when their content is unchanged.
    var vouched: EntryBits

    /// `snapshot` (the check of a package) joined with `manifest`, the package's record.
    init(checked snapshot: consuming TreeSnapshot, manifest: consuming PackageManifest) {
        recordedHead = manifest.head
        vouched = EntryBits(count: snapshot.entries.count)
        Self.adopt(manifest, into: &snapshot, vouched: &vouched)
        manifest.snapshot = snapshot
        manifest.entryCount = snapshot.entries.count
        self.snapshot = snapshot
        stamps = manifest
    }

    /// One walk of the two trees side by side (O(n)): a checked regular file takes the
    /// recorded source stamp and chunk list only when its content is the recorded one (a
    /// stamp says which source bytes the package holds: carried to other bytes it would
    /// vouch for the wrong ones), and is vouched for when the stat cache matches it.
    /// Written as a loop over the entries in place: a merge handed the array would hold a
    /// second reference to it, and the first stamp written would copy all of it.
    private static func adopt(_ manifest: PackageManifest, into snapshot: inout TreeSnapshot, vouched: inout EntryBits) {
        let recorded = manifest.snapshot.entries
        var old = 0
        for new in snapshot.entries.indices where snapshot.entries[new].kind == .regular {
            let checked = snapshot.entries[new]
            while old < recorded.count && SnapshotEntry.comparePaths(recorded[old], checked) < 0 { old += 1 }
            guard old < recorded.count, SnapshotEntry.comparePaths(recorded[old], checked) == 0 else { continue }
            let record = recorded[old]
            guard record.kind == .regular else { continue }
            if manifest.cachedHash(at: old, status: FileStatus(of: checked)) != nil { vouched.insert(new) }
            if record.hash == checked.hash && record.size == checked.size {
                snapshot.entries[new].source = record.source
                if checked.chunks == nil, let chunks = record.chunks { snapshot.entries[new].chunks = chunks }
            }
        }
    }
}

extension FileStatus {
    /// The stat data a tree entry carries (a check's, or a record's).
    init(of entry: SnapshotEntry) {
        self.init(
            kind: entry.kind, permissions: entry.permissions, size: entry.size,
            modificationTime: entry.modificationTime, changeTime: entry.changeTime, inode: entry.inode,
            device: entry.device)
    }
}
