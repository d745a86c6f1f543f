/// One entry of a tree snapshot: a file, symbolic link or directory below the root.
///
/// A package of a million files holds a million of these, twice or three times over
/// during a save or a diff, so the stored form is compact (Specs/manifest.md, "Memory"):
/// the fields every entry has are stored inline, narrowed where the values allow (a
/// device number or descendant count that fits 32 bits), and what few entries have — a
/// link's target, a large file's chunks, a device number beyond 32 bits — lives in one
/// shared, immutable side record that is absent for nearly every entry; the path is its
/// folder, shared with the entry's siblings, and its name, inline when short (`EntryPath`).
/// The public fields read and write as before.
public struct SnapshotEntry: Sendable, Hashable {
    private var storedPath: EntryPath
    /// Content hash of a file, hash of a link's target, Merkle hash of a directory.
    public var hash: ContentHash
    /// Bytes of a file; bytes of a link's target; 0 for a directory.
    public var size: Int64
    /// Modification time, ns since the epoch.
    public var modificationTime: Int64
    /// Status-change time (ns), inode and device: the stat-cache fields (0 when unknown).
    public var changeTime: Int64
    /// Inode number, for the stat cache (0 when unknown).
    public var inode: UInt64
    // The source stamp's fields, all zero when `hasSource` is not set.
    private var sourceInode: UInt64 = 0
    private var sourceModificationTime: Int64 = 0
    private var sourceChangeTime: Int64 = 0
    private var narrowDevice: UInt32 = 0
    private var narrowSourceDevice: UInt32 = 0
    private var narrowDescendantCount: UInt32 = 0
    private var narrowPermissions: UInt16
    /// Regular file, directory or symbolic link (nothing else is package content).
    public var kind: FileKind
    private var flags: EntryFlags = []
    private var rare: RareFields?

    /// An entry; the stat-cache fields, the descendant count and the chunks default to
    /// "unknown". For a directory, `hash` and `descendantCount` are filled in by
    /// `TreeSnapshot.assemble(_:)`.
    public init(
        path: String, kind: FileKind, permissions: UInt32, size: Int64, hash: ContentHash,
        modificationTime: Int64 = 0, changeTime: Int64 = 0, inode: UInt64 = 0, device: UInt64 = 0,
        descendantCount: Int = 0, linkTarget: String? = nil, source: SourceStamp? = nil, chunks: ChunkList? = nil
    ) {
        self.init(
            storedPath: EntryPath(whole: path), kind: kind, permissions: permissions, size: size, hash: hash,
            modificationTime: modificationTime, changeTime: changeTime, inode: inode, device: device,
            descendantCount: descendantCount, linkTarget: linkTarget, source: source, chunks: chunks)
    }

    /// An entry whose path is stored as given (a shared folder and a name).
    package init(
        storedPath: EntryPath, kind: FileKind, permissions: UInt32, size: Int64, hash: ContentHash,
        modificationTime: Int64 = 0, changeTime: Int64 = 0, inode: UInt64 = 0, device: UInt64 = 0,
        descendantCount: Int = 0, linkTarget: String? = nil, source: SourceStamp? = nil, chunks: ChunkList? = nil
    ) {
        self.storedPath = storedPath
        self.kind = kind
        narrowPermissions = UInt16(truncatingIfNeeded: permissions & 0o7777)
        self.size = size
        self.hash = hash
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.inode = inode
        self.descendantCount = descendantCount
        if linkTarget != nil || chunks != nil { rare = RareFields(linkTarget: linkTarget, chunks: chunks) }
        self.device = device
        self.source = source
    }

    /// Relative path, "/"-separated, never empty, never starting or ending with "/".
    ///
    /// Reading it builds a string when the folder is shared: loops over many entries
    /// compare with `comparePath` and `hasPath` instead.
    public var path: String {
        get { storedPath.string }
        set { storedPath = EntryPath(whole: newValue) }
    }

    /// The path as stored, to share with another record of the same entry.
    package var entryPath: EntryPath { storedPath }

    /// Permission bits (`0o7777`).
    public var permissions: UInt32 {
        get { UInt32(narrowPermissions) }
        set { narrowPermissions = UInt16(truncatingIfNeeded: newValue & 0o7777) }
    }

    /// -1, 0 or 1: the order of two entries' paths, depth-first (`PathOrder.pathLess`), by
    /// bytes, without building either path.
    public static func comparePaths(_ lhs: SnapshotEntry, _ rhs: SnapshotEntry) -> Int {
        EntryPath.compare(lhs.storedPath, rhs.storedPath)
    }

    /// -1, 0 or 1: this entry's path against `path`, depth-first, by bytes.
    public func comparePath(to path: String) -> Int { storedPath.compare(to: path) }

    /// Whether this entry's path has exactly the bytes of `path`.
    public func hasPath(_ path: String) -> Bool { storedPath.compare(to: path) == 0 }

    /// Calls `body` with the UTF-8 bytes of the path, without building a string.
    public func withPathBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storedPath.withBytes(body)
    }

    /// Device number, recorded but never compared (it can change across reboots).
    public var device: UInt64 {
        get { flags.contains(.wideDevice) ? rare?.device ?? 0 : UInt64(narrowDevice) }
        set {
            if let narrow = UInt32(exactly: newValue) {
                narrowDevice = narrow
                guard flags.contains(.wideDevice) else { return }
                flags.remove(.wideDevice)
                updateRare { $0.device = 0 }
            } else {
                narrowDevice = 0
                flags.insert(.wideDevice)
                updateRare { $0.device = newValue }
            }
        }
    }

    /// A directory's number of entries beneath it (all depths): the span to skip past it.
    public var descendantCount: Int {
        get { Int(narrowDescendantCount) }
        // No tree that fits in memory has 2^32 entries below one directory.
        set { narrowDescendantCount = UInt32(truncatingIfNeeded: newValue) }
    }

    /// A symbolic link's target text.
    public var linkTarget: String? {
        get { rare?.linkTarget }
        set {
            guard newValue != nil || rare?.linkTarget != nil else { return }
            updateRare { $0.linkTarget = newValue }
        }
    }

    /// A large regular file's content-defined chunks (files of at least 4 MiB that were
    /// hashed with chunking, or whose manifest record has them); nil otherwise.
    public var chunks: ChunkList? {
        get { rare?.chunks }
        set {
            guard newValue != nil || rare?.chunks != nil else { return }
            updateRare { $0.chunks = newValue }
        }
    }

    /// The stat data of the file this entry was last saved from (`pkgtool save SRC PKG`):
    /// a stat cache for the source, so that unchanged source files are not reread.
    public var source: SourceStamp? {
        get {
            guard flags.contains(.hasSource) else { return nil }
            let device = flags.contains(.wideSourceDevice) ? rare?.sourceDevice ?? 0 : UInt64(narrowSourceDevice)
            return SourceStamp(
                device: device, inode: sourceInode, modificationTime: sourceModificationTime,
                changeTime: sourceChangeTime)
        }
        set {
            let hadWideDevice = flags.contains(.wideSourceDevice)
            flags.subtract([.hasSource, .wideSourceDevice])
            sourceInode = newValue?.inode ?? 0
            sourceModificationTime = newValue?.modificationTime ?? 0
            sourceChangeTime = newValue?.changeTime ?? 0
            narrowSourceDevice = 0
            guard let stamp = newValue else {
                if hadWideDevice { updateRare { $0.sourceDevice = 0 } }
                return
            }
            flags.insert(.hasSource)
            if let narrow = UInt32(exactly: stamp.device) {
                narrowSourceDevice = narrow
                if hadWideDevice { updateRare { $0.sourceDevice = 0 } }
            } else {
                flags.insert(.wideSourceDevice)
                updateRare { $0.sourceDevice = stamp.device }
            }
        }
    }

    /// Replaces the side record with a changed copy, or with nothing when the copy holds
    /// nothing (so that equal entries are stored alike).
    private mutating func updateRare(_ change: (inout RareFields.Values) -> Void) {
        var values = rare?.values ?? RareFields.Values()
        change(&values)
        rare = values.isEmpty ? nil : RareFields(values)
    }

    /// The last path component.
    public var name: Substring { storedPath.name }

    /// Depth below the root: 0 for a top-level entry.
    public var depth: Int { storedPath.depth }

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

/// Which of an entry's optional fields are set (`SnapshotEntry`'s compact form).
private struct EntryFlags: OptionSet, Sendable, Hashable {
    let rawValue: UInt8
    /// The entry has a source stamp.
    static let hasSource = EntryFlags(rawValue: 1 << 0)
    /// The device number does not fit 32 bits and is in the side record.
    static let wideDevice = EntryFlags(rawValue: 1 << 1)
    /// The source stamp's device number does not fit 32 bits and is in the side record.
    static let wideSourceDevice = EntryFlags(rawValue: 1 << 2)
}

/// The fields few entries have, shared between copies of an entry and never mutated:
/// a change makes a new record.
private final class RareFields: Sendable, Hashable {
    /// The fields' values.
    struct Values: Hashable {
        var linkTarget: String?
        var chunks: ChunkList?
        var device: UInt64 = 0
        var sourceDevice: UInt64 = 0

        var isEmpty: Bool { linkTarget == nil && chunks == nil && device == 0 && sourceDevice == 0 }
    }

    let values: Values

    init(_ values: Values) { self.values = values }

    convenience init(linkTarget: String?, chunks: ChunkList?) {
        self.init(Values(linkTarget: linkTarget, chunks: chunks))
    }

    var linkTarget: String? { values.linkTarget }
    var chunks: ChunkList? { values.chunks }
    var device: UInt64 { values.device }
    var sourceDevice: UInt64 { values.sourceDevice }

    static func == (lhs: RareFields, rhs: RareFields) -> Bool { lhs === rhs || lhs.values == rhs.values }
    func hash(into hasher: inout Hasher) { hasher.combine(values) }
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

    /// Builds a snapshot from entries in any order: sorts them (in place, and only when
    /// they are not in order already), fills each directory's descendant count and Merkle
    /// hash, and the root hash. Entries' parents must exist (a file "a/b" needs a directory
    /// "a").
    ///
    /// - Complexity: O(n log n) for the sort, O(n) for the rest; no copy of the entries.
    public static func assemble(_ unsorted: consuming [SnapshotEntry]) -> TreeSnapshot {
        var entries = unsorted
        let inOrder = entries.indices.dropFirst().allSatisfy { SnapshotEntry.comparePaths(entries[$0 - 1], entries[$0]) < 0 }
        if !inOrder { entries.sort { SnapshotEntry.comparePaths($0, $1) < 0 } }
        let rootHash = entries.withUnsafeMutableBufferPointer { buffer in
            MerkleWalk.rootHash(
                count: buffer.count,
                item: { MerkleWalk.Item(path: buffer[$0].path, kind: buffer[$0].kind, tag: buffer[$0].tag, hash: buffer[$0].hash) },
                finished: { index, hash, descendants in
                    buffer[index].hash = hash
                    buffer[index].size = 0
                    buffer[index].descendantCount = descendants
                })
        }
        return TreeSnapshot(entries: entries, rootHash: rootHash)
    }

    /// Index of the entry at `path`, by binary search in path order.
    public func index(of path: String) -> Int? {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = entries[middle].comparePath(to: path)
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
