/// Where the tree a save writes comes from: a scanned directory (`DirectorySource`), a tree
/// held in memory (`FileWrapper.saveSource`), a version pulled from a remote…
///
/// A source only describes; the engine (`PackageSaver.save(_:to:options:progress:)`) does
/// everything else, the same way for every source: it takes the package's lock, recovers an
/// interrupted save, asks the source for the new tree, compares it with the package, writes
/// the difference with the chosen strategy, records the manifest, and reports. A new kind of
/// source needs no change to the engine.
///
/// The engine calls a source from the thread that called `save`, under the package's
/// exclusive lock, at most once per method and save.
public protocol SaveSource {
    /// Refuses, before anything is locked or written, a source that cannot be saved to
    /// `package` (not a directory, the package inside the source…). Optional.
    func validate(for package: PackageLocation) throws

    /// The whole new tree: its entries, and where each regular file's bytes come from
    /// (`SourceTree(entries:rootPermissions:notes:)`). The engine checks, orders and hashes it.
    func wholeTree(in context: SaveSourceContext) throws -> SourceTree

    /// Told, still under the lock, once the new tree is committed, with what the engine
    /// wrote; a tree source re-backs its nodes by the files written. Not called when the
    /// save fails.
    func didSave(_ outcome: SaveOutcome, in context: SaveSourceContext)
}

extension SaveSource {
    public func validate(for package: PackageLocation) throws {}
    public func didSave(_ outcome: SaveOutcome, in context: SaveSourceContext) {}
}

/// A source that can say which parts of its tree may differ from the package (a tree read
/// from this very package and edited since): the engine asks it first, for journaled saves
/// into an existing package whose manifest is trusted, and visits only those parts. Inside
/// the engine's package only: the parts are described in the manifest's own terms.
package protocol EditedPartsSource: SaveSource {
    /// Only what may differ from the package; nil to have the engine compare whole trees,
    /// which is always correct.
    func changedParts(in context: SaveSourceContext) throws -> PartialSourceTree?
}

/// What the engine tells a source about the save it serves.
public struct SaveSourceContext: Sendable {
    /// The package being saved (its canonical location).
    public let package: PackageLocation
    /// Whether a package exists there (false for a first save).
    public let packageExists: Bool
    /// The options the save runs with (strategy, durability, workers…).
    public let options: SaveOptions
    /// The package's manifest, when it has a sound one: the stat cache a directory source
    /// reuses for files it saved before. Set for `wholeTree(in:)` only. When the package
    /// had to be checked against it (copied, or marked for a check), its entries are the
    /// check's, with the source stamps of the files whose content is the recorded one.
    public internal(set) var manifest: PackageManifest?
}

/// Where a regular file of the new tree gets its bytes, asked by the engine only for the
/// files it writes: a source that can tell from the entry alone (a pull's staging area,
/// keyed by content) keeps no table as long as the tree.
package typealias ContentLookup = @Sendable (SnapshotEntry) -> ContentOrigin?

/// The whole new tree, as a source describes it: its entries, in any order
/// (`init(entries:rootPermissions:notes:)`). The engine checks them (every path once, every
/// parent a folder, no top-level `.pkgtool`), orders them by bytes, hashes the files whose
/// hash is not given, and computes the folders' hashes (Specs/save.md, "What a source describes").
public struct SourceTree: Sendable {
    /// Every entry, depth-first in `PathOrder`, with content hashes (files, links) and Merkle
    /// hashes (directories), and the root hash. Empty until the engine assembled `described`.
    package var snapshot: TreeSnapshot
    /// Where each regular file's bytes come from, parallel to `snapshot.entries`. Needed only
    /// for files that differ from the package; nil elsewhere. May be empty when
    /// `contentDirectory` says where every file is.
    package var contents: [ContentOrigin?]
    /// A directory holding the tree's files at their paths, whose stat data the entries
    /// carry (a scan of it): a regular file without an origin in `contents` is read from
    /// there, refused if its stat data moved since. A tree read from a directory names it
    /// here instead of a path and a status per file, a fifth of a save's memory at a
    /// million files.
    package var contentDirectory: String?
    /// Asked for a regular file that has no origin in `contents`, before `contentDirectory`.
    package var contentLookup: ContentLookup?
    /// The entries as the source gave them, before the engine checked, ordered and hashed
    /// them into `snapshot` and `contents` (`assembled(in:)`); nil for a tree built whole.
    package var described: [SourceEntry]?
    /// Permission bits of the package directory itself.
    public var rootPermissions: UInt32
    /// Whether the source took every file's source stamp now and reread each file whose
    /// recorded stamp still matched but was racy (Specs/manifest.md), as a directory's scan
    /// does: the engine then records those that are unchanged afresh, so they are not
    /// reread at every save. A flag, not a list of the files read: after a copy every file
    /// is read, and a million paths held would cost more than the tree's own entries.
    package var rereadsRacySourceStamps = false
    /// Files read to hash, and their bytes: for the statistics.
    package var filesHashed: Int
    /// Bytes of those files.
    package var bytesHashed: Int64
    /// Things a person should know (entries skipped, files that changed behind a tree's back).
    public var notes: [String]

    /// The tree of `entries`, given in any order, below a package directory with
    /// `rootPermissions`.
    ///
    /// Nothing is checked or read here: the save does it, under the package's lock, and
    /// refuses a malformed tree (`SaveRefusal.Reason.malformedTree(_:)`) before writing
    /// anything.
    /// - Parameters:
    ///   - entries: every file, folder and link below the package root, each path once.
    ///   - rootPermissions: permission bits of the package directory itself.
    ///   - notes: things a person should know, added to the save's statistics.
    public init(entries: [SourceEntry], rootPermissions: UInt32 = 0o755, notes: [String] = []) {
        self.init(snapshot: .empty, contents: [], rootPermissions: rootPermissions, notes: notes)
        described = entries
    }

    /// A whole tree: `contents` must hold one origin (or nil) per entry of `snapshot`.
    package init(
        snapshot: TreeSnapshot, contents: [ContentOrigin?], rootPermissions: UInt32 = 0o755,
        filesHashed: Int = 0, bytesHashed: Int64 = 0, notes: [String] = []
    ) {
        precondition(contents.count == snapshot.entries.count, "one content origin per entry")
        self.contentDirectory = nil
        self.snapshot = snapshot
        self.contents = contents
        self.rootPermissions = rootPermissions
        self.filesHashed = filesHashed
        self.bytesHashed = bytesHashed
        self.notes = notes
    }

    /// A whole tree whose files are all in `contentDirectory`, at their paths, with the
    /// stat data their entries carry.
    package init(
        snapshot: TreeSnapshot, contentDirectory: String, rootPermissions: UInt32 = 0o755,
        rereadsRacySourceStamps: Bool = false, filesHashed: Int = 0, bytesHashed: Int64 = 0, notes: [String] = []
    ) {
        self.init(
            snapshot: .empty, contents: [], rootPermissions: rootPermissions, filesHashed: filesHashed,
            bytesHashed: bytesHashed, notes: notes)
        self.rereadsRacySourceStamps = rereadsRacySourceStamps
        self.snapshot = snapshot
        self.contentDirectory = contentDirectory
    }

    /// A whole tree whose files' origins `contentLookup` gives, entry by entry, when the
    /// engine writes them (nil for a file the package already holds as it is).
    package init(
        snapshot: TreeSnapshot, contentLookup: @escaping ContentLookup, rootPermissions: UInt32 = 0o755,
        notes: [String] = []
    ) {
        self.init(snapshot: .empty, contents: [], rootPermissions: rootPermissions, notes: notes)
        self.snapshot = snapshot
        self.contentLookup = contentLookup
    }
}

/// The parts of a new tree that may differ from the package, with the package's entries at
/// the same places: everything else is unchanged, and the engine never looks at it.
package struct PartialSourceTree: Sendable {
    /// The manifest head these parts build on: the package's current state, which the source
    /// checked is still on disk.
    package var head: PackageManifest.Head
    /// The package's entries in the regions visited, as they stand on disk (depth-first).
    /// A file whose content is not known here may carry any hash: it differs from its new
    /// entry by size, or the source listed it in `unknownContent`.
    package var current: [SnapshotEntry]
    /// The new tree's entries in the same regions (depth-first), with where each file's bytes
    /// come from (parallel).
    package var new: [SnapshotEntry]
    /// Where each `new` file's bytes come from, parallel to `new`.
    package var contents: [ContentOrigin?]
    /// Paths of `current` files whose content the source does not know: rewritten.
    package var unknownContent: Set<RelativePath>
    /// The new tree's root hash and entry count (the whole tree's, not the parts').
    package var newRootHash: ContentHash
    /// The number of entries of the whole new tree.
    package var newEntryCount: Int
    /// Permission bits of the package directory itself.
    package var rootPermissions: UInt32
    /// Files the source read to hash, for the statistics.
    package var filesHashed: Int
    /// Bytes of those files.
    package var bytesHashed: Int64
    /// Things a person should know, for the statistics' notes.
    package var notes: [String]

    /// The parts of a new tree: `contents` must hold one origin (or nil) per entry of `new`.
    package init(
        head: PackageManifest.Head, current: [SnapshotEntry], new: [SnapshotEntry], contents: [ContentOrigin?],
        unknownContent: Set<RelativePath> = [], newRootHash: ContentHash, newEntryCount: Int, rootPermissions: UInt32,
        filesHashed: Int = 0, bytesHashed: Int64 = 0, notes: [String] = []
    ) {
        precondition(contents.count == new.count, "one content origin per new entry")
        self.head = head
        self.current = current
        self.new = new
        self.contents = contents
        self.unknownContent = unknownContent
        self.newRootHash = newRootHash
        self.newEntryCount = newEntryCount
        self.rootPermissions = rootPermissions
        self.filesHashed = filesHashed
        self.bytesHashed = bytesHashed
        self.notes = notes
    }
}

/// What a save did, returned by the engine.
public struct SaveOutcome: Sendable {
    /// The engine's own counts: files written, linked, removed, bytes, notes.
    public var statistics: SaveStatistics
    /// The manifest's head after the save: what a tree that now describes the package
    /// remembers for its next save.
    package var head: PackageManifest.Head?
    /// Package-side stat data of every entry this save created or replaced, by path.
    ///
    /// - Complexity: O(n) on each read: the engine keeps the statuses compactly and builds
    ///   the dictionary when asked.
    public var written: [RelativePath: FileStatus] {
        get { writtenFiles.dictionary }
        set { writtenFiles = WrittenFiles(newValue) }
    }
    /// The same, as the engine keeps it.
    package var writtenFiles: WrittenFiles

    /// An outcome; the engine makes them, tests and wrappers of the engine may too.
    public init(statistics: SaveStatistics, written: [RelativePath: FileStatus]) {
        self.init(statistics: statistics, head: nil, writtenFiles: WrittenFiles(written))
    }

    /// An outcome with the statuses as the engine keeps them.
    package init(statistics: SaveStatistics, head: PackageManifest.Head?, writtenFiles: WrittenFiles) {
        self.statistics = statistics
        self.head = head
        self.writtenFiles = writtenFiles
    }
}
