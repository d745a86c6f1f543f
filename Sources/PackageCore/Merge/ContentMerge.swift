/// An app's own merge of a file's contents, for the files it knows how to combine (a
/// `metadata.json` listing pages, a settings file): where both sides changed such a file,
/// the app gets the bytes of base (when known), local and other, and returns the merged
/// bytes — or nil to leave it to the file-level rule (local's version kept, other's kept as
/// a conflict version). Sync and the document host both apply it, through `TreeMerge`'s
/// resolver.
///
/// Only regular files both sides changed (or both added) go to it, of at most
/// ``maximumSize`` bytes each: the three versions are held in memory. An error it throws
/// fails the sync or the save, which then changes nothing.
public struct ContentMerge: Sendable {
    /// The merge: the path, base's bytes (nil when base had no such file, or its bytes are no
    /// longer at hand), local's and other's; the merged bytes, or nil for the file-level rule.
    public typealias Function = @Sendable (
        _ path: RelativePath, _ base: [UInt8]?, _ local: [UInt8], _ other: [UInt8]
    ) throws -> [UInt8]?

    /// Files larger than this are merged file-level, never read into memory for the app.
    public static let maximumSize: Int64 = 16 << 20

    private let covers: @Sendable (RelativePath) -> Bool
    private let function: Function

    /// A merge of the files `paths` selects.
    /// - Parameters:
    ///   - paths: whether the app merges the file at a path (compared as bytes).
    ///   - merge: the merge itself (see ``Function``).
    public init(paths: @escaping @Sendable (RelativePath) -> Bool, merge: @escaping Function) {
        covers = paths
        function = merge
    }

    /// A merge of the one file at `path`.
    /// - Parameters:
    ///   - path: the file the app merges, relative to the package (`"metadata.json"`).
    ///   - merge: the merge itself (see ``Function``).
    public init(path: RelativePath, merge: @escaping Function) {
        self.init(paths: { $0 == path }, merge: merge)
    }

    /// Whether `conflict` is one this merge is asked about: a regular file on both sides,
    /// changed or added on both, at a path it covers, neither side above the size limit.
    public func applies(to conflict: MergeConflict) -> Bool {
        guard conflict.kind == .bothModified || conflict.kind == .addedDifferently,
            let local = conflict.local, let other = conflict.other, local.kind == .regular, other.kind == .regular,
            local.size <= Self.maximumSize, other.size <= Self.maximumSize
        else { return false }
        return covers(conflict.path)
    }

    /// Runs the app's merge.
    /// - Parameters:
    ///   - path: the file.
    ///   - base: base's bytes, when known.
    ///   - local: local's bytes.
    ///   - other: other's bytes.
    /// - Returns: the merged bytes, or nil for the file-level rule.
    public func merge(_ path: RelativePath, base: [UInt8]?, local: [UInt8], other: [UInt8]) throws -> [UInt8]? {
        try function(path, base, local, other)
    }

    /// The entry the merged tree holds for `bytes` merged at `conflict`'s path: local's
    /// permission bits, the bytes' content hash and size (`MergeResolution.use`).
    public static func entry(for bytes: [UInt8], resolving conflict: MergeConflict) -> SnapshotEntry {
        let permissions = conflict.local?.permissions ?? conflict.other?.permissions ?? 0o644
        return SnapshotEntry(
            path: conflict.path.string, kind: .regular, permissions: permissions, size: Int64(bytes.count),
            hash: ContentHash.of(bytes))
    }
}
