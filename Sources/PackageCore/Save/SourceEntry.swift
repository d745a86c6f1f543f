/// One file, folder or symbolic link of a new tree, as a source describes it
/// (`SourceTree(entries:rootPermissions:notes:)`): its path, what it is, and where a
/// file's bytes come from. Ordering, folder hashes and (unless given) file hashes are the
/// engine's business, so a source never depends on how the package records a tree.
public struct SourceEntry: Sendable {
    /// What an entry is.
    public enum Kind: Sendable {
        /// A regular file whose bytes come from the origin.
        case file(ContentOrigin)
        /// A folder; what lies in it are the entries whose paths are beneath it.
        case directory
        /// A symbolic link with this target text (not empty, no NUL), never followed.
        case symbolicLink(target: String)
    }

    /// The path below the package root, compared as bytes: `é` and `e\u{301}` are two.
    public var path: RelativePath
    /// What the entry is.
    public var kind: Kind
    /// Permission bits (`0o7777`); the owner-execute bit of a file is part of its hash.
    public var permissions: UInt32
    /// The modification time to give it, in nanoseconds since 1970; nil for the time of
    /// the save.
    public var modificationTime: Int64?
    /// A file's content hash (Specs/hashing.md), when the source knows it already; nil to
    /// have the engine read the origin to hash it. Given only together with `size`, unless
    /// the origin tells the size (bytes in memory, a file with its stat data).
    public var contentHash: ContentHash?
    /// A file's size in bytes, given with `contentHash`.
    public var size: Int64?

    /// An entry of any kind.
    ///
    /// - Parameters:
    ///   - path: the path below the package root.
    ///   - kind: file (with its origin), folder or symbolic link.
    ///   - permissions: permission bits.
    ///   - modificationTime: nanoseconds since 1970; nil for the time of the save.
    ///   - contentHash: a file's content hash when known; nil to have the engine hash it.
    ///   - size: a file's size, given with `contentHash`.
    public init(
        path: RelativePath, kind: Kind, permissions: UInt32, modificationTime: Int64? = nil,
        contentHash: ContentHash? = nil, size: Int64? = nil
    ) {
        self.path = path
        self.kind = kind
        self.permissions = permissions
        self.modificationTime = modificationTime
        self.contentHash = contentHash
        self.size = size
    }

    /// A regular file whose bytes come from `origin`.
    ///
    /// - Parameters:
    ///   - path: the path below the package root.
    ///   - origin: where the bytes come from, should the engine hash or write them.
    ///   - permissions: permission bits (0o644 by default).
    ///   - modificationTime: nanoseconds since 1970; nil for the time of the save.
    ///   - contentHash: the content hash when the source knows it; nil to have the engine
    ///     read `origin` to hash it (a stream is then read twice when the file is written).
    ///   - size: the size, with `contentHash`, when `origin` does not tell it.
    public static func file(
        _ path: RelativePath, from origin: ContentOrigin, permissions: UInt32 = 0o644, modificationTime: Int64? = nil,
        contentHash: ContentHash? = nil, size: Int64? = nil
    ) -> SourceEntry {
        SourceEntry(
            path: path, kind: .file(origin), permissions: permissions, modificationTime: modificationTime,
            contentHash: contentHash, size: size)
    }

    /// A folder.
    ///
    /// - Parameters:
    ///   - path: the path below the package root.
    ///   - permissions: permission bits (0o755 by default).
    ///   - modificationTime: nanoseconds since 1970; nil for the time of the save.
    public static func directory(_ path: RelativePath, permissions: UInt32 = 0o755, modificationTime: Int64? = nil)
        -> SourceEntry
    {
        SourceEntry(path: path, kind: .directory, permissions: permissions, modificationTime: modificationTime)
    }

    /// A symbolic link to `target`.
    ///
    /// - Parameters:
    ///   - path: the path below the package root.
    ///   - target: the link's target text, saved as it is (not followed, not checked to exist).
    ///   - modificationTime: nanoseconds since 1970; nil for the time of the save.
    public static func symbolicLink(_ path: RelativePath, target: String, modificationTime: Int64? = nil)
        -> SourceEntry
    {
        SourceEntry(path: path, kind: .symbolicLink(target: target), permissions: 0o777, modificationTime: modificationTime)
    }
}
