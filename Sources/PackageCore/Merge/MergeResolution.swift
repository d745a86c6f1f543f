/// How a resolver settles one conflict, for apps that can merge a file's contents
/// themselves (a `metadata.json` whose two versions they can combine).
///
/// A resolver is a plain synchronous closure `(MergeConflict) -> MergeResolution?`; nil
/// leaves the conflict to the default rule (local's version kept, other's recorded).
public enum MergeResolution: Sendable, Hashable {
    /// Local's version at the path, whatever it is (its whole subtree; nothing when local
    /// deleted it, which accepts local's deletion over other's edit).
    case takeLocal
    /// Other's version at the path (its whole subtree; nothing when other deleted it).
    case takeOther
    /// A new file or symbolic link at the path, whose bytes the caller will provide: its
    /// kind, permissions, content hash and size (and a link's target). The entry's path is
    /// set to the conflict's. A directory entry is refused (a directory is its children):
    /// the conflict then stays unresolved.
    case use(SnapshotEntry)
}
