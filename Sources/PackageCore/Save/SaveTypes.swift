import Synchronization

/// How a save puts a new snapshot on disk; each has its own crash guarantee (Specs/save.md).
public enum SaveStrategy: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Everything written into a staging directory beside the package, then swapped in.
    case full
    /// A staging directory of hard links to the unchanged files plus the changed files
    /// written fresh, swapped in with one `renameat2(RENAME_EXCHANGE)`: any reader sees
    /// the old or the new package.
    case atomic
    /// Changed files written under temporary names inside the package, then a redo
    /// journal committed and applied: cost in proportion to the change alone.
    case journaled

    /// The default, chosen by measurement (Specs/save.md).
    public static let `default`: SaveStrategy = .journaled

    /// The strategy's name as the CLI spells it (`--strategy journaled`).
    public var description: String { rawValue }
}

/// How to save.
public struct SaveOptions: Sendable {
    /// How the new tree reaches the disk, and so what a crash or a reader may see
    /// (<doc:ChoosingAStrategy>). `journaled` by default.
    public var strategy: SaveStrategy
    /// Whether the save fsyncs (`.full`, the default: a returned save survives a machine crash)
    /// or not (`.none`: only a crash of the process is survived).
    public var durability: Durability
    /// Threads for scanning and hashing.
    public var workers: Int
    /// Trust the package's manifest for its current state (the default): pkgtool's own
    /// saves keep it exact, under the lock and through crashes. False stats every package
    /// entry first and rehashes what the manifest no longer vouches for, so that edits
    /// made to the package behind pkgtool's back are seen (`pkgtool save --check-package`).
    public var trustManifest: Bool
    /// `atomic` only: keep the version a save replaces beside the package, as
    /// `.NAME.<hash>.pkgtool-previous` (Specs/save.md, "Names beside the package"), instead of removing it, and build the next atomic save by
    /// bringing that tree up to date — work in proportion to the change — rather than
    /// hard-linking every unchanged file anew and removing the old tree. The price: the
    /// previous version's changed and removed files stay on disk until the next save.
    public var keepsPrevious: Bool
    /// Called with coarse progress (files and 1 MiB chunks), from the saving thread.
    public var progress: (@Sendable (SaveProgress) -> Void)?
    /// Raised to stop the save at the next file or 1 MiB chunk (before its commit), as the
    /// cancellation of the task running it does.
    public var cancellation: SaveCancellation?
    /// A sync record (`SyncRecordFile`) to commit with the new tree: every strategy writes
    /// it into the new tree's `.pkgtool` inside the save's commit, so that a crash at any
    /// moment leaves the old tree with the old record or the new tree with this one. Nil
    /// (the default) keeps the package's record as it is. Set by pulls.
    package var syncRecord: [UInt8]? = nil
    /// A conflicts record (`ConflictList`) to commit with the new tree, as `syncRecord` is:
    /// into `.pkgtool/conflicts/list` inside the save's commit. Nil (the default) keeps the
    /// package's record and conflict versions as they are (a staged save carries them over).
    package var conflictsRecord: [UInt8]? = nil
    /// The root hash the package must hold when the save starts, under its lock (an absent
    /// package holds the empty tree's): a save that finds another is refused
    /// (`SaveRefusal.Reason.sourceChanged`) with nothing written. A pull sets it to what it
    /// checked, so that a save made between its check and its own save is never discarded.
    package var requiredCurrentRoot: ContentHash? = nil
    /// From this many entries written, a save makes them durable together (one syncfs on
    /// the package's file system) before its commit rather than one fsync each: the same
    /// guarantee — nothing is published before its bytes are on the device — at one
    /// file-system commit instead of one per file. Below it, per-file fsyncs cost less than
    /// flushing the whole file system (which also waits for other programs' writes there).
    package var bulkSyncThreshold = 64

    /// Options for a save; every parameter is the property of the same name, with the defaults
    /// a document app wants: the default strategy, full durability, every core.
    public init(
        strategy: SaveStrategy = .default, durability: Durability = .full, workers: Int = ProcessInfoCores.active,
        trustManifest: Bool = true, keepsPrevious: Bool = false, progress: (@Sendable (SaveProgress) -> Void)? = nil,
        cancellation: SaveCancellation? = nil
    ) {
        self.strategy = strategy
        self.durability = durability
        self.workers = workers
        self.trustManifest = trustManifest
        self.keepsPrevious = keepsPrevious
        self.progress = progress
        self.cancellation = cancellation
    }
}

/// A flag that stops a running save: the save checks it before each file and after each
/// 1 MiB chunk, and — raised before the commit — throws `CancellationError`, leaving the
/// package's last good version. Raised after the commit, it changes nothing.
public final class SaveCancellation: Sendable {
    private let raised = Atomic<Bool>(false)

    /// A flag not yet raised.
    public init() {}

    /// Asks the save to stop. Safe from any thread.
    public func cancel() { raised.store(true, ordering: .relaxed) }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { raised.load(ordering: .relaxed) }
}

/// Coarse progress of a save: units are files and 1 MiB chunks, never bytes.
public struct SaveProgress: Sendable, Equatable {
    /// Units of work the save will do: one per file to write or link, one per MiB written.
    public var totalUnits: Int
    /// Units done so far.
    public var completedUnits: Int
    /// Files the save will write or link.
    public var totalFiles: Int
    /// Files written or linked so far.
    public var completedFiles: Int
    /// Bytes the save will write.
    public var totalBytes: Int64
    /// Bytes written so far.
    public var completedBytes: Int64

    /// `completedUnits` over `totalUnits`, 1 when there is nothing to do.
    public var fractionCompleted: Double { totalUnits == 0 ? 1 : Double(completedUnits) / Double(totalUnits) }
}

/// What a save did, counted by the engine itself.
public struct SaveStatistics: Sendable, Equatable {
    /// The strategy the save used.
    public var strategy: SaveStrategy
    /// Regular files written (new or changed content), and their bytes.
    public var filesWritten = 0
    /// Bytes of the files written.
    public var bytesWritten: Int64 = 0
    /// Large files saved as the chunks that changed (Specs/save.md, "Changed bytes, not
    /// changed files"): patched in place through the journal (`journaled`), or written into
    /// a clone of their previous version (`atomic`, `full`, on a file system with reflinks).
    /// This counts the first kind.
    public var filesPatched = 0
    /// Large files written as a clone of their previous version plus their changed chunks
    /// (`atomic`, `full`, on a file system with reflinks).
    public var filesCloned = 0
    /// The changed bytes those files took (counted in `bytesWritten` too).
    public var bytesPatched: Int64 = 0
    /// Unchanged files hard-linked into the new tree (atomic).
    public var filesLinked = 0
    /// Unchanged files copied because hard links were impossible (another volume, a file
    /// system without links), and their bytes.
    public var filesCopiedForLinks = 0
    /// Bytes of the files copied instead of linked.
    public var bytesCopiedForLinks: Int64 = 0
    /// Directories made (new folders, and every folder of a staging tree).
    public var directoriesCreated = 0
    /// Symbolic links created (new or changed target).
    public var symbolicLinksWritten = 0
    /// Entries removed (each entry of a removed subtree counts).
    public var entriesRemoved = 0
    /// Entries whose permission bits alone changed.
    public var permissionsChanged = 0
    /// Bytes of pkgtool's own metadata written (manifest, journal).
    public var metadataBytesWritten: Int64 = 0
    /// Source files read and hashed to find out whether they changed.
    public var filesHashed = 0
    /// Bytes read to hash those files.
    public var bytesHashed: Int64 = 0
    /// The package had no sound manifest: its state was rebuilt by hashing it.
    public var manifestRebuilt = false
    /// The manifest's deltas were folded into a new base.
    public var manifestCompacted = false
    /// The previous version kept beside the package was brought up to date as the new
    /// tree (`keepsPrevious`), instead of building one.
    public var reusedPrevious = false
    /// A previous save's leftovers were rolled forward or cleaned before this one.
    public var recovered = false
    /// Nothing differed: nothing but (perhaps) the manifest was written.
    public var unchanged = false
    /// Wall-clock time of the save, lock and recovery included.
    public var seconds: Double = 0
    /// The Merkle hash of the package after the save: equal to the source tree's.
    public var rootHash = ContentHash(high: 0, low: 0)
    /// Files, links and folders in the package after the save.
    public var entryCount = 0
    /// Things a person should know ("hard links impossible here: unchanged files were copied").
    public var notes: [String] = []

    /// Zero counts for a save with `strategy`.
    public init(strategy: SaveStrategy) { self.strategy = strategy }
}

/// A save refused because of its input, not an I/O failure: the source is not a
/// directory, a source file changed while it was read, the options contradict each other.
/// Nothing was changed; the input needs fixing, or the save simply needs doing again.
public struct SaveRefusal: InputRejectedError, Sendable, Equatable {
    /// Why the save was refused.
    public enum Reason: Sendable, Equatable {
        /// The source is a file of this kind, not a directory.
        case sourceNotADirectory(FileKind)
        /// The destination exists as a file of this kind, not a package directory.
        case destinationNotADirectory(FileKind)
        /// The in-memory tree's root is of this kind: a package is a directory.
        case treeNotADirectory(FileKind)
        /// The source and the package (the path given) lie inside one another.
        case nested(other: String)
        /// A source file changed while the save read it, as the text says.
        case sourceChanged(String)
        /// The source named this entry but gave no content for it.
        case missingContent
        /// The options contradict each other, as the text says.
        case conflictingOptions(String)
        /// The calling task holds the package's lock for reading, so it cannot save it.
        case lockedForReading
        /// A custom ``SaveSource`` refused its input, as the text says.
        case refusedBySource(String)
        /// The entries a source described do not make a tree a package can hold (a path
        /// given twice, a parent that is not a folder of the tree, the reserved `.pkgtool`),
        /// as the text says; the path is the entry's place in the package.
        case malformedTree(String)
    }

    /// The path the refusal is about: the source file that changed, the source or the package.
    public var path: String
    /// Why the save was refused.
    public var reason: Reason

    /// A refusal of the save, about `path`. Throw one from a custom source (with
    /// ``Reason/refusedBySource(_:)``) to refuse its input.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// Whether saving again, unchanged, may succeed: a source file changed under the save.
    public var isTransient: Bool {
        if case .sourceChanged = reason { return true }
        return false
    }

    /// One line: what was refused, why, and what to do.
    public var description: String {
        switch reason {
        case .sourceNotADirectory(let kind): "cannot save from '\(path)': it is a \(kind), not a directory"
        case .destinationNotADirectory(let kind): "cannot save to '\(path)': it is a \(kind), not a package directory"
        case .treeNotADirectory(let kind): "cannot save '\(path)': a package is a directory, the tree is a \(kind)"
        case .nested(let other): "cannot save '\(path)' to '\(other)': one lies inside the other"
        case .sourceChanged(let detail):
            "'\(path)' changed while it was being saved\(detail.isEmpty ? "" : " (\(detail))"); nothing was changed: save again"
        case .missingContent: "cannot save '\(path)': its source gave no content for it"
        case .conflictingOptions(let detail): "cannot save '\(path)': \(detail)"
        case .lockedForReading: "cannot save '\(path)' while this task holds its lock for reading"
        case .refusedBySource(let detail): "cannot save '\(path)': \(detail)"
        case .malformedTree(let detail): "cannot save '\(path)': \(detail) (the source's tree is malformed)"
        }
    }
}
