/// One path that the two sides changed in ways a merge cannot reconcile on its own.
///
/// Conflicts lose nothing: the merged tree keeps local's version at `path` (or other's when
/// local deleted what other changed: a deletion never wins over an edit), and this record
/// carries other's version — `other` and, for a directory the merged tree does not hold,
/// `otherDescendants` — so that the caller can keep it as a conflict copy
/// (`ConflictCopyName`).
public struct MergeConflict: Sendable, Hashable {
    /// What kind of disagreement this is; "local" and "other" name the two sides.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Both sides changed a file's or link's content, differently. Local's is kept.
        case bothModified
        /// Local changed or added it; other deleted it (or a directory above it). Local's is kept.
        case modifiedDeleted
        /// Local deleted it (or a directory above it); other changed or added it. Other's is kept.
        case deletedModified
        /// Both sides added the path, with different kinds, contents or permissions. Local's is kept.
        case addedDifferently
        /// A change of kind (file, directory, link) met another change. Local's is kept,
        /// with everything beneath it.
        case typeChanged
        /// Both sides changed the permission bits, differently; the contents merged (or did
        /// not change). The merged entry has local's permissions.
        case permissionsDiffer
    }

    /// The path both sides disagree on.
    public var path: RelativePath
    /// What kind of disagreement this is.
    public var kind: Kind
    /// The entry at `path` in base; nil when base had none.
    public var base: SnapshotEntry?
    /// The entry at `path` on the local side; nil when local has none.
    public var local: SnapshotEntry?
    /// The entry at `path` on the other side; nil when other has none.
    public var other: SnapshotEntry?
    /// When other's version is a directory and the merged tree keeps local's version of
    /// another kind: every entry of other's beneath `path`, depth-first, so that nothing of
    /// it is lost. Empty otherwise.
    public var otherDescendants: [SnapshotEntry]

    /// A conflict record; `otherDescendants` defaults to none.
    public init(
        path: RelativePath, kind: Kind, base: SnapshotEntry?, local: SnapshotEntry?, other: SnapshotEntry?,
        otherDescendants: [SnapshotEntry] = []
    ) {
        self.path = path
        self.kind = kind
        self.base = base
        self.local = local
        self.other = other
        self.otherDescendants = otherDescendants
    }
}

/// A conflict a resolver settled, and how: kept for logs and for the caller that must
/// provide a resolution's bytes.
public struct ResolvedConflict: Sendable, Hashable {
    /// The conflict as the resolver saw it.
    public var conflict: MergeConflict
    /// What the resolver chose.
    public var resolution: MergeResolution

    /// A conflict and its resolution.
    public init(conflict: MergeConflict, resolution: MergeResolution) {
        self.conflict = conflict
        self.resolution = resolution
    }
}
