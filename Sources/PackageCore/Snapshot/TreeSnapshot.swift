/// One entry of a tree snapshot: a file, symbolic link or directory below the root.
public struct SnapshotEntry: Sendable, Hashable {
    /// Relative path, "/"-separated, never empty, never starting or ending with "/".
    public var path: String
    /// Regular file, directory or symbolic link (nothing else is package content).
    public var kind: FileKind
    /// Permission bits (`0o7777`).
    public var permissions: UInt32
    /// Bytes of a file; bytes of a link's target; 0 for a directory.
    public var size: Int64
    /// Content hash of a file, hash of a link's target, Merkle hash of a directory.
    public var hash: ContentHash
    /// Modification time, ns since the epoch.
    public var modificationTime: Int64
    /// Status-change time (ns), inode and device: the stat-cache fields (0 when unknown).
    public var changeTime: Int64
    /// Inode number, for the stat cache (0 when unknown).
    public var inode: UInt64
    /// Device number, recorded but never compared (it can change across reboots).
    public var device: UInt64
    /// A directory's number of entries beneath it (all depths): the span to skip past it.
    public var descendantCount: Int
    /// A symbolic link's target text.
    public var linkTarget: String?
    /// The stat data of the file this entry was last saved from (`pkgtool save SRC PKG`):
    /// a stat cache for the source, so that unchanged source files are not reread.
    public var source: SourceStamp?
    /// A large regular file's content-defined chunks (files of at least 4 MiB that were
    /// hashed with chunking, or whose manifest record has them); nil otherwise. One
    /// reference: 8 bytes when absent.
    public var chunks: ChunkList?

    /// An entry; the stat-cache fields, the descendant count and the chunks default to
    /// "unknown". For a directory, `hash` and `descendantCount` are filled in by
    /// `TreeSnapshot.assemble(_:)`.
    public init(
        path: String, kind: FileKind, permissions: UInt32, size: Int64, hash: ContentHash,
        modificationTime: Int64 = 0, changeTime: Int64 = 0, inode: UInt64 = 0, device: UInt64 = 0,
        descendantCount: Int = 0, linkTarget: String? = nil, source: SourceStamp? = nil, chunks: ChunkList? = nil
    ) {
        self.path = path
        self.kind = kind
        self.permissions = permissions
        self.size = size
        self.hash = hash
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.inode = inode
        self.device = device
        self.descendantCount = descendantCount
        self.linkTarget = linkTarget
        self.source = source
        self.chunks = chunks
    }

    /// The last path component.
    public var name: Substring {
        if let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) {
            return path[path.index(after: slash)...]
        }
        return path[...]
    }

    /// Depth below the root: 0 for a top-level entry.
    public var depth: Int { path.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) } }

    /// The Merkle tag (kind and executable bit).
    public var tag: EntryTag { EntryTag(kind: kind, permissions: permissions) ?? .file }

    /// Whether two entries have the same identity for hashing: tag and hash.
    public func sameContent(as other: SnapshotEntry) -> Bool {
        tag == other.tag && hash == other.hash && (kind == .directory || size == other.size)
    }
}

/// The identity of a source file at the moment its bytes were saved into a package.
public struct SourceStamp: Sendable, Hashable {
    /// The source file's device.
    public var device: UInt64
    /// The source file's inode.
    public var inode: UInt64
    /// The source file's modification time (ns).
    public var modificationTime: Int64
    /// The source file's status-change time (ns).
    public var changeTime: Int64

    /// A stamp of the given stat fields.
    public init(device: UInt64, inode: UInt64, modificationTime: Int64, changeTime: Int64) {
        self.device = device
        self.inode = inode
        self.modificationTime = modificationTime
        self.changeTime = changeTime
    }

    /// The stamp of a source file as `status` describes it.
    public init(_ status: FileStatus) {
        self.init(
            device: status.device, inode: status.inode, modificationTime: status.modificationTime,
            changeTime: status.changeTime)
    }
}

/// A whole tree at one moment, flat: every entry in depth-first path order
/// (`PathOrder.pathLess`), each directory followed by its descendants.
///
/// The common currency of the package: a scan of a directory, a manifest, a FileWrapper
/// tree and a ZIP archive all become one, and the differ compares any two.
public struct TreeSnapshot: Sendable, Equatable {
    /// Every entry but the root, depth-first in path order.
    public var entries: [SnapshotEntry]
    /// The Merkle hash of the root directory.
    public var rootHash: ContentHash

    /// A snapshot of entries already in depth-first path order, with directory hashes and
    /// descendant counts filled in; `assemble(_:)` builds one from entries in any order.
    public init(entries: [SnapshotEntry], rootHash: ContentHash) {
        self.entries = entries
        self.rootHash = rootHash
    }

    /// An empty tree.
    public static let empty = TreeSnapshot(entries: [], rootHash: TreeHashBuilder.emptyDirectory)

    /// The entries directly below `parentIndex` (or the root when nil): indices into `entries`.
    ///
    /// - Complexity: O(children), skipping each child's subtree by its descendant count.
    public func childIndices(of parentIndex: Int?) -> [Int] {
        var result: [Int] = []
        var index = parentIndex.map { $0 + 1 } ?? 0
        let end = parentIndex.map { $0 + 1 + entries[$0].descendantCount } ?? entries.count
        while index < end {
            result.append(index)
            index += 1 + (entries[index].kind == .directory ? entries[index].descendantCount : 0)
        }
        return result
    }

    /// Builds a snapshot from entries in any order: sorts them, fills each directory's
    /// descendant count and Merkle hash, and the root hash. Entries' parents must exist
    /// (a file "a/b" needs a directory "a").
    ///
    /// - Complexity: O(n log n) for the sort, O(n) for the rest.
    public static func assemble(_ unsorted: [SnapshotEntry]) -> TreeSnapshot {
        var entries = unsorted.sorted { PathOrder.pathLess($0.path, $1.path) }
        var position = 0
        let rootHash = finishDirectory(&entries, from: &position, prefix: "")
        return TreeSnapshot(entries: entries, rootHash: rootHash)
    }

    /// Fills hashes and counts of the subtree whose entries start at `position` and whose
    /// paths begin with `prefix`; returns the subtree's Merkle hash.
    private static func finishDirectory(
        _ entries: inout [SnapshotEntry], from position: inout Int, prefix: String
    ) -> ContentHash {
        var builder = TreeHashBuilder()
        while position < entries.count, prefix.isEmpty || PathOrder.hasBytePrefix(entries[position].path, prefix) {
            let index = position
            position += 1
            if entries[index].kind == .directory {
                let hash = finishDirectory(&entries, from: &position, prefix: entries[index].path + "/")
                entries[index].hash = hash
                entries[index].size = 0
                entries[index].descendantCount = position - index - 1
            }
            let entry = entries[index]
            // An entry whose folder is not in the list (a malformed tree: a link or a file
            // where its path needs a folder) is no child of this one: it adds nothing to the
            // hash, and never traps. Decoders refuse such trees; this keeps a bug harmless.
            guard entry.path.utf8.count == prefix.utf8.count + entry.name.utf8.count else { continue }
            builder.add(name: String(entry.name), tag: entry.tag, hash: entry.hash)
        }
        return builder.finish()
    }

    /// Index of the entry at `path`, by binary search in path order.
    public func index(of path: String) -> Int? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = PathOrder.compareBytes(entries[middle].path, path, slashIsLowest: true)
            if order == 0 { return middle }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}

extension TreeSnapshot {
    /// `index(of:)` for an optional path.
    func index(ofPath path: String?) -> Int? { path.flatMap { index(of: $0) } }
}
