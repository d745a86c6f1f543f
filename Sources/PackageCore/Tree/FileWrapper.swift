import FoundationEssentials
import Glibc
import Synchronization

/// A file-system node in memory: a regular file, a directory of child wrappers, or a
/// symbolic link — Apple's `FileWrapper`, for Linux.
///
/// A wrapper read from disk (`init(url:options:)`) holds names and stat data only; a
/// regular file's bytes are read when `regularFileContents` (or `readRegularFileContents()`)
/// asks for them, and hashing streams them from disk in 1 MiB chunks. Every node has a
/// Merkle `contentHash` (Specs/hashing.md), computed lazily, cached, and invalidated up to
/// the root when a node below changes: children know their parents.
///
/// Differences from Apple's class (Specs/filewrapper.md): child keys are compared as UTF-8
/// bytes; files are read, never memory-mapped; a file changed behind the wrapper's back is
/// reported rather than silently read; and wrappers are `Sendable`: each node keeps its
/// state under its own lock, so a wrapper held by a document on the main actor can be
/// handed to a writer in the background inside a snapshot, as the document guide does.
public final class FileWrapper: Sendable {
    /// Options for reading a wrapper from disk.
    public struct ReadingOptions: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// The options whose bits are `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Read every regular file's contents now rather than on demand, so that later edits
        /// or removals on disk cannot make them unavailable.
        public static let immediate = ReadingOptions(rawValue: 1 << 0)
        /// Never memory-map file contents. pkgtool never maps (a truncated mapped file
        /// faults with SIGBUS), so this option is accepted and changes nothing.
        public static let withoutMapping = ReadingOptions(rawValue: 1 << 1)
    }

    /// Options for `write(to:options:originalContentsURL:)`.
    public struct WritingOptions: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// The options whose bits are `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The write completely succeeds or leaves the destination as it was. pkgtool's
        /// writes always are; the option is accepted for source compatibility.
        public static let atomic = WritingOptions(rawValue: 1 << 0)
        /// After a successful write, `filename` of this wrapper and of every descendant is set
        /// to the name it was written under, and regular files remember the file written, so
        /// that the next save can reuse them instead of rewriting them.
        public static let withNameUpdating = WritingOptions(rawValue: 1 << 1)
    }

    /// Everything a node holds, under `state`'s lock.
    ///
    /// Lock discipline: code holds at most one node's lock at a time (it copies what it
    /// needs, releases, then visits parents or children), so no order between nodes can
    /// deadlock.
    struct NodeState {
        /// `.regular`, `.directory` or `.symbolicLink`; changes only through `read(from:options:)`.
        var kind: FileKind
        /// Children of a directory, by byte-exact key.
        var children: [FileName: FileWrapper] = [:] {
            didSet {
                sortedChildren = nil
                childDirectories = nil
            }
        }
        /// The children that are directories, by name: what a save walks to check that no
        /// directory changed on disk behind the tree's back. Kept until the children change.
        var childDirectories: [(name: String, child: FileWrapper)]?
        /// `children` in byte order of their names, kept until they change: a save of an
        /// edited tree compares and hashes each edited directory in this order, and a wide
        /// directory should not be sorted again each time.
        var sortedChildren: [(name: FileName, child: FileWrapper)]?
        /// A regular file's bytes, when in memory.
        var contents: Data?
        /// Where this node was read from and what `lstat` said then (see `DiskRecord`).
        var diskRecord: DiskRecord?
        /// Set when a directory's children changed after it was read: its disk record no
        /// longer describes it.
        var directoryEditedSinceRead = false
        /// Set on a node edited since it was read or last saved (children added, removed or
        /// renamed, attributes changed, reread) and on every ancestor of one: a save visits
        /// only these, so its cost follows the change, not the tree.
        var editedBelow = false
        /// On the root of a tree read from (or saved as) a package: the manifest's head, so
        /// that the next save can append a delta without reloading every record.
        var packageState: TreePackageState?
        /// A symbolic link's target text, exactly as `readlink` returns it.
        var linkTarget: String?
        /// Permission bits (`0o7777`); nil means the default, 0o644 for files and 0o755 for
        /// directories.
        var permissions: UInt32?
        /// Modification time in nanoseconds since the epoch, when known.
        var modificationTime: Int64?
        /// The Merkle hash, once computed (or supplied by the manifest); nil means "compute".
        var cachedHash: ContentHash?
        /// A large regular file's content-defined chunk list, computed with its hash (or
        /// supplied by the manifest): what lets a save write only the changed chunks.
        var cachedChunks: ChunkList?
        /// A directory's number of entries beneath it (all depths), once counted; forgotten
        /// with the hash, so a tree's size is known after an edit in O(depth), not O(n).
        var cachedDescendantCount: Int?
        /// Bumped whenever the cached hash is invalidated: a hash computed from an older
        /// state is not cached (another thread may have changed the tree meanwhile).
        var generation: UInt64 = 0
        /// Directories holding this wrapper (usually one). Weak: parents own their children.
        var parentLinks: [ParentLink] = []
        var preferredFilename: String?
        var filename: String?

        init(kind: FileKind) { self.kind = kind }

        /// The permission bits a write gives this node.
        var effectivePermissions: UInt32 {
            permissions ?? (kind == .directory ? 0o755 : kind == .symbolicLink ? 0o777 : 0o644)
        }

        /// The Merkle tag this node has in its parent (kind and owner-execute bit).
        var entryTag: EntryTag { EntryTag(kind: kind, permissions: effectivePermissions) ?? .file }

        /// A regular file's size: of its bytes in memory, or as stat saw it on disk.
        var regularFileSize: Int64 {
            if let contents { return Int64(contents.count) }
            return diskRecord?.status.size ?? 0
        }

        /// A name for messages: the disk path when known, else the names we have.
        var displayPath: String {
            diskRecord?.path ?? filename ?? preferredFilename ?? "(unnamed file wrapper)"
        }
    }

    let state: Mutex<NodeState>

    // MARK: Creating wrappers in memory

    /// A directory wrapper holding `childrenByPreferredName`, each under its dictionary key.
    /// Children without a preferred filename take their key as one.
    ///
    /// - Complexity: O(children); no disk access.
    public init(directoryWithFileWrappers childrenByPreferredName: [String: FileWrapper]) {
        state = Mutex(NodeState(kind: .directory))
        for (key, child) in childrenByPreferredName {
            if child.preferredFilename == nil { child.preferredFilename = key }
            state.withLock { node in
                let name = FileName(FileWrapper.uniqueKey(in: node.children, for: FileName.sanitized(key)))
                node.children[name] = child
            }
            child.state.withLock { $0.parentLinks.append(ParentLink(self)) }
        }
    }

    /// A regular-file wrapper holding `contents`.
    public init(regularFileWithContents contents: Data) {
        var node = NodeState(kind: .regular)
        node.contents = contents
        state = Mutex(node)
    }

    /// A symbolic-link wrapper whose target is `url`'s path as given: a relative file URL
    /// gives a relative link (its `relativePath`), an absolute one an absolute link.
    public init(symbolicLinkWithDestinationURL url: URL) {
        var node = NodeState(kind: .symbolicLink)
        node.linkTarget = url.relativePath
        state = Mutex(node)
    }

    /// An empty wrapper of `kind`, filled in by the reading code.
    init(emptyOf kind: FileKind) {
        state = Mutex(NodeState(kind: kind))
    }

    // MARK: Names

    /// The name this wrapper would like to have in a directory; its key there unless
    /// another child already uses the name. Changing it re-keys it in its parents.
    public var preferredFilename: String? {
        get { state.withLock { $0.preferredFilename } }
        set {
            let changed = state.withLock { node -> Bool in
                let old = node.preferredFilename
                node.preferredFilename = newValue
                guard let newValue else { return false }
                return old.map { !PathOrder.sameBytes($0, newValue) } ?? true
            }
            if changed { for parent in parents { parent.rekey(self) } }
        }
    }

    /// The name this wrapper had on disk when last read or written (with
    /// `.withNameUpdating`); record-keeping only.
    public var filename: String? {
        get { state.withLock { $0.filename } }
        set { state.withLock { $0.filename = newValue } }
    }

    // MARK: Kind

    /// Whether this wrapper is a regular file (`regularFileContents` has its bytes).
    public var isRegularFile: Bool { kind == .regular }
    /// Whether this wrapper is a directory (`fileWrappers` has its children).
    public var isDirectory: Bool { kind == .directory }
    /// Whether this wrapper is a symbolic link (`symbolicLinkDestinationURL` has its target).
    public var isSymbolicLink: Bool { kind == .symbolicLink }

    // MARK: Symbolic links

    /// A symbolic link's target as a file URL (nil for other kinds). A relative target gives
    /// a URL whose `relativePath` is the target text; `symbolicLinkDestination` has it raw.
    public var symbolicLinkDestinationURL: URL? {
        guard let linkTarget = symbolicLinkDestination else { return nil }
        return URL(fileURLWithPath: linkTarget)
    }

    /// A symbolic link's target text, exactly as stored (nil for other kinds).
    public var symbolicLinkDestination: String? { state.withLock { $0.linkTarget } }

    // MARK: Reading state (each takes the lock once)

    var kind: FileKind { state.withLock { $0.kind } }
    var contents: Data? { state.withLock { $0.contents } }
    var diskRecord: DiskRecord? { state.withLock { $0.diskRecord } }
    var cachedHash: ContentHash? { state.withLock { $0.cachedHash } }
    var entryTag: EntryTag { state.withLock { $0.entryTag } }
    var regularFileSize: Int64 { state.withLock { $0.regularFileSize } }
    var displayPath: String { state.withLock { $0.displayPath } }
}

/// Where a node was read from, and the `lstat` data seen then.
///
/// For a regular file this is its backing: while the file at `path` still has the same
/// device, inode, size and modification time, its bytes are the wrapper's bytes, so they
/// can be hashed, copied or hard-linked from there without being loaded.
struct DiskRecord: Sendable, Equatable {
    var path: String
    var status: FileStatus
    /// For a directory: its modification time was too recent, when it was stat'ed, to prove
    /// that nothing changed within the same clock tick since (file timestamps advance in
    /// coarse ticks). A save then lists it rather than trust the stat (git's racy rule).
    var racy = false

    init(path: String, status: FileStatus) {
        self.path = path
        self.status = status
        if status.kind == .directory {
            racy = Self.isRacy(status.modificationTime, now: SystemClock.realtimeNanoseconds)
        }
    }

    /// Whether a timestamp is within the racy window before `now` (or after it).
    static func isRacy(_ time: Int64, now: Int64) -> Bool { now - time < 50_000_000 }

    /// Whether `current` (an `fstat` of the file at `path`) shows the same bytes as `status`.
    ///
    /// ctime is left out on purpose: hard-linking an unchanged file into a new package
    /// (what the atomic save does) bumps it without changing a byte. Writers of content
    /// change the modification time; the manifest's stat cache, which does compare ctime,
    /// catches the rest.
    func stillDescribes(_ current: FileStatus) -> Bool {
        current.kind == status.kind && current.device == status.device && current.inode == status.inode
            && current.size == status.size && current.modificationTime == status.modificationTime
    }
}

/// A weak reference from a child to a directory holding it.
struct ParentLink {
    weak var parent: FileWrapper?
    init(_ parent: FileWrapper) { self.parent = parent }
}

extension FileWrapper: CustomDebugStringConvertible {
    /// The kind, the name and where the contents are ("in memory", "on disk at …").
    public var debugDescription: String {
        state.withLock { node in
            let name = node.filename ?? node.preferredFilename ?? "(unnamed)"
            switch node.kind {
            case .directory: return "FileWrapper(directory '\(name)', \(node.children.count) children)"
            case .symbolicLink: return "FileWrapper(symbolic link '\(name)' -> '\(node.linkTarget ?? "")')"
            default:
                let where_ =
                    node.contents != nil ? "in memory" : node.diskRecord.map { "on disk at '\($0.path)'" } ?? "empty"
                return "FileWrapper(regular file '\(name)', \(node.regularFileSize) bytes, \(where_))"
            }
        }
    }
}

/// Equality is identity, as for Apple's (an `NSObject`): two wrappers with the same
/// contents are still two wrappers. Compare `contentHash` for equal contents.
extension FileWrapper: Hashable {
    /// Whether `lhs` and `rhs` are the same wrapper.
    public static func == (lhs: FileWrapper, rhs: FileWrapper) -> Bool { lhs === rhs }
    /// Hashes the wrapper's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
