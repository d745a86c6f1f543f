/// Where a merged entry comes from, so that whoever writes the merged tree knows which
/// input holds its bytes, and which entries need no writing at all.
public enum MergeSource: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No side changed it: base, local and other hold the same entry (kind, content and
    /// permissions; a directory's children are judged on their own). The merged entry is
    /// local's, with local's stat fields.
    case base
    /// Local's entry: a change made only locally, the same change made on both sides, or
    /// local's version kept in a conflict. Read its bytes from local.
    case local
    /// Other's entry: a change made only on the other side, or other's version kept where a
    /// deletion met an edit. Read its bytes from other.
    case other
    /// The entry a conflict resolver supplied (`MergeResolution.use`): its bytes are the
    /// caller's to provide.
    case resolver

    /// "base", "local", "other" or "resolver".
    public var description: String {
        switch self {
        case .base: return "base"
        case .local: return "local"
        case .other: return "other"
        case .resolver: return "resolver"
        }
    }
}
