import Dispatch
import Glibc
import PackageCore
import Synchronization

/// How `ZipPacker.pack` writes an archive.
public struct ZipPackOptions: Sendable {
    /// Deflate level 0–9 (0 stores everything). Default 6, as `zip`.
    public var level: Int
    /// Compression threads (the writing thread comes on top).
    public var workers: Int
    /// An archive whose unchanged entries (same path, size and content hash) are copied
    /// raw instead of recompressed. When nil and `reuseExistingOutput` is set, the output
    /// itself serves, if it exists and opens cleanly.
    public var base: String?
    /// Whether an existing output archive serves as the base when `base` is nil (the
    /// default): repacking over an archive is incremental. False packs everything afresh.
    public var reuseExistingOutput: Bool
    /// A file (relative path) to put first, stored, with a bare local header: EPUB's and
    /// OpenDocument's `mimetype` rule.
    public var first: String?
    /// A fixed modification time (Unix seconds) for every entry, for reproducible bytes;
    /// nil keeps each file's own.
    public var modificationTime: Int64?
    /// `.full` fsyncs the new archive before it replaces the old one (and the directory
    /// after). The default `.none` still replaces atomically for readers, as `zip` does
    /// without any fsync.
    public var durability: Durability
    /// Keeps the archive a pack replaces as the hidden sibling `.NAME.pkgtool-previous` and
    /// writes the next pack into that file's blocks, then swaps the two names atomically.
    /// Filling a new file (new blocks, new page-cache pages) and freeing the replaced one
    /// is most of a repack's time; overwriting blocks that exist is a fraction of it: a
    /// repack after a small edit took 0.19–0.35× of `zip -u`'s time, against 1.4–1.6× without
    /// (Specs/zip.md, "Keeping the previous archive"). The cost: the previous archive
    /// occupies its full size on disk. Without `.full` durability the write-back is only
    /// started before the exchange (as ext4 does for a rename), not awaited: a machine
    /// crash right after a pack can leave the output torn; `verify` detects it.
    /// When false, a previous file left by an earlier pack is left alone.
    public var keepsPrevious: Bool
    /// Called on the writing thread with the input bytes of each piece written: an entry
    /// reused or small, or one compressed piece of a large one.
    public var progress: (@Sendable (Int64) -> Void)?
    /// Called once, before the first `progress`, with the input bytes `progress` will count
    /// in all (the files' sizes as the scan found them).
    public var progressTotal: (@Sendable (Int64) -> Void)?
    /// Raised to stop the pack before its next entry: `CancellationError`, and the output
    /// is left as it was (nothing is swapped in).
    public var cancellation: SaveCancellation?
    /// Entries of the source left out of the archive (`--exclude`; none by default).
    public var exclusions: PathExclusions = .none
    /// Whether a repack over an existing archive may append the changed entries to it in
    /// place (the default) rather than write the whole archive anew. It does when the
    /// output is a regular file with one name, its own base, no fixed `modificationTime`
    /// is asked for (reproducible bytes need the rewrite), and at most half of it would
    /// then be dead bytes (Specs/zip.md, "Appending in place"). False always rewrites,
    /// which also drops the dead bytes earlier appends left (`pack --compact`).
    public var appendsInPlace = true

    /// Options; every parameter is the property of the same name.
    public init(
        level: Int = 6, workers: Int = ProcessInfoCores.active, base: String? = nil, reuseExistingOutput: Bool = true,
        first: String? = nil, modificationTime: Int64? = nil, durability: Durability = .none,
        keepsPrevious: Bool = false, progress: (@Sendable (Int64) -> Void)? = nil,
        cancellation: SaveCancellation? = nil
    ) {
        self.cancellation = cancellation
        self.level = level
        self.workers = workers
        self.base = base
        self.reuseExistingOutput = reuseExistingOutput
        self.first = first
        self.modificationTime = modificationTime
        self.durability = durability
        self.keepsPrevious = keepsPrevious
        self.progress = progress
    }
}

/// What `ZipPacker.pack` wrote.
public struct ZipPackReport: Sendable {
    /// Entries written: files, directories and links.
    public var entries = 0
    /// Regular files written.
    public var files = 0
    /// Directory entries written (the source itself not counted).
    public var directories = 0
    /// Symbolic links written.
    public var links = 0
    /// Uncompressed bytes of files and links.
    public var inputBytes: Int64 = 0
    /// The archive's size.
    public var archiveBytes: Int64 = 0
    /// Entries compressed with deflate.
    public var deflated = 0
    /// Entries stored as they are (incompressible, empty, or level 0).
    public var stored = 0
    /// Entries copied raw from the base archive.
    public var reused = 0
    /// FIFOs, sockets and devices left out.
    public var skipped: [String] = []
    /// Why an existing output could not serve as the base (it is rebuilt in full).
    public var baseIgnored: String?
    /// Whether the archive was written over the previous file's blocks (`keepsPrevious`),
    /// rather than into a new file.
    public var reusedPrevious = false
    /// Whether the changed entries were appended to the existing archive in place
    /// (`appendsInPlace`), rather than the archive written anew.
    public var appendedInPlace = false
    /// Bytes of the archive no entry uses (old versions, old central directories) after
    /// an in-place append; 0 after a rewrite.
    public var deadBytes: Int64 = 0
    /// Links written whose target is absolute or climbs out of the tree, and why: other
    /// tools unpack them, but pkgtool's own reader refuses the archive (`ZipArchive.open`
    /// never lets a link lead out of the destination).
    public var linksLeadingOut: [(path: String, reason: String)] = []
}

/// A usage problem with `pack`'s input (not a refused archive): exit status 2.
public struct ZipPackError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the input, as one line.
    public var description: String
    package init(_ description: String) { self.description = description }
}

/// Writes a directory tree as a ZIP archive (Specs/zip.md, "What we write").
///
/// Entries appear in depth-first path order (the `first` entry before all). Files are read
/// in 1 MiB chunks and compressed on all cores; a large file is cut into 1 MiB pieces
/// deflated in parallel, each primed with the 32 KiB before it (pigz's method), so the bytes
/// do not depend on the number of threads. A sample of each file (three 16 KiB windows)
/// decides between deflate and store. One thread writes, in order, to an unnamed file that
/// replaces the output atomically when complete (or, with `keepsPrevious`, over the
/// previous archive's blocks, then exchanged with the output: `PreviousArchive`).
public enum ZipPacker {
    static let chunkSize = ChunkBuffer.defaultSize
    static let dictionarySize = 32 * 1024

    /// Packs the directory `source` into `output`. An `output` that is a symbolic link gets
    /// the archive written to the file it names; one that is a directory, device or FIFO is
    /// refused before anything is read.
    ///
    /// - Throws: `FileSystemError` for I/O trouble, `ZipPackError` for bad options,
    ///   `ZipError` when an explicit `base` is refused.
    /// - Complexity: one stat per entry; each new or changed file read once and compressed
    ///   once; each unchanged file (with a base) read once to hash it and its compressed
    ///   bytes copied in the kernel. Memory: about 2 MiB per in-flight chunk, with
    ///   2 × workers + 2 chunks in flight, plus ~100 bytes per entry for the central directory.
    public static func pack(_ source: String, to output: String, options: ZipPackOptions = ZipPackOptions()) throws
        -> ZipPackReport
    {
        guard (0...9).contains(options.level) else { throw ZipPackError("level must be 0 to 9, not \(options.level)") }
        // Checked first, so that a pack into a directory or a device fails before any work.
        let given = output
        let output = try AtomicFile.replaceableTarget(output)
        // SRC given as a symbolic link means the directory it names (entries inside are
        // never followed).
        let source = try FileSystem.followingFinalSymbolicLinks(source)
        let rootStatus = try FileSystem.status(source, followSymlinks: true)
        guard rootStatus.kind == .directory else {
            throw FileSystemError(.open, path: source, errno: .notDirectory, reason: "pack expects a directory")
        }
        var report = ZipPackReport()
        let base = try openBase(output: output, options: options, report: &report)
        var snapshotEntries = try scan(source, base: base, options: options, report: &report)
        try refuseReservedTopLevelName(snapshotEntries, source: source)
        droppingOwnFiles(&snapshotEntries, output: output)
        try movingFirst(&snapshotEntries, source: source, options: options)
        options.progressTotal?(snapshotEntries.reduce(0) { $0 + ($1.kind == .regular ? $1.size : 0) })
        let root = try FileDescriptor.openDirectory(source)
        let reusable = try findReusable(snapshotEntries, base: base, root: root.rawValue, source: source, options: options)
        // The scan's tree goes once the entries are made: at a million files it is as large
        // as they are, and the central directory is yet to be built beside them.
        let entries = packEntries(consume snapshotEntries, reusable: reusable, options: options)
        let pipeline = PackPipeline(
            entries: entries, root: root.rawValue, source: source, level: options.level, workers: max(1, options.workers),
            cancellation: options.cancellation)
        try write(
            pipeline, to: PackTarget(given: given, output: output, base: base, entries: entries), options: options,
            report: &report)
        withExtendedLifetime(root) {}
        return report
    }

    /// The base archive, for raw copies of unchanged entries: the explicit `base` (refused
    /// with its error), else the existing output (when it does not open, the reason goes to
    /// `report.baseIgnored` and the archive is rebuilt in full).
    private static func openBase(output: String, options: ZipPackOptions, report: inout ZipPackReport) throws
        -> ZipArchive?
    {
        if let explicit = options.base {
            return try ZipArchive.open(explicit)
        } else if options.reuseExistingOutput, (try? FileSystem.statusIfExists(output)) != nil {
            do { return try ZipArchive.open(output) } catch { report.baseIgnored = "\(error)" }
        }
        return nil
    }

    /// The entries of `source` to pack, with what was skipped and the links that lead out
    /// recorded in `report`.
    private static func scan(_ source: String, base: ZipArchive?, options: ZipPackOptions, report: inout ZipPackReport)
        throws -> [SnapshotEntry]
    {
        // A package's `.pkgtool` directory is pkgtool's metadata, not content. With a base,
        // its manifest's stat cache (when sound) vouches for the hashes of unchanged files,
        // which then need not be read to be recognised.
        let manifest = base == nil ? nil : (try? PackageManifest.load(packagePath: source)) ?? nil
        var scanner = TreeScanner(
            workers: max(1, options.workers), hashContents: false, knownHash: manifest?.hashLookup,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        scanner.exclusions = options.exclusions
        let scan = try scanner.scan(source)
        report.skipped = scan.skipped.map(\.path)
        for entry in scan.snapshot.entries where entry.kind == .symbolicLink {
            if let target = entry.linkTarget,
                let reason = ZipNames.linkLeadsOut(path: RelativePath(trusted: entry.path), target: target)
            {
                report.linksLeadingOut.append((entry.path, reason))
            }
        }
        return scan.snapshot.entries
    }

    /// `.pkgtool` itself was left out by the scan; a name a case-folding file system would
    /// take for it (`.PKGTOOL`) is refused rather than written into an archive unpack refuses.
    private static func refuseReservedTopLevelName(_ entries: [SnapshotEntry], source: String) throws {
        // The scan's paths are normalised: `RelativePath(trusted:)` only gives them the type.
        if let reserved = entries.first(where: { entry in
            RelativePath.depth(of: entry.path) == 0 && ZipNames.isReservedTopLevel(RelativePath(trusted: entry.path))
        }) {
            throw FileSystemError(
                FileOperation(verb: "pack", systemCall: "-"), path: PackageLayout.joined(source, reserved.path),
                reason:
                    "a top-level name that folds to '\(PackageLayout.metadataDirectoryName)' is reserved for pkgtool's own state, and unpack refuses it (rename it)"
            )
        }
    }

    /// An existing output inside the source is not packed into itself, nor is the previous
    /// archive kept beside it (whether or not this pack keeps one).
    private static func droppingOwnFiles(_ entries: inout [SnapshotEntry], output: String) {
        let ownFiles = [
            try? FileSystem.status(output, followSymlinks: true), try? FileSystem.status(PreviousArchive.path(for: output)),
        ].compactMap { $0 }.filter { $0.kind == .regular }
        if !ownFiles.isEmpty {
            entries.removeAll { entry in
                entry.kind == .regular && ownFiles.contains { $0.inode == entry.inode && $0.device == entry.device }
            }
        }
    }

    /// Puts the `first` entry (EPUB's `mimetype`) before all others; it must be a regular file.
    private static func movingFirst(_ entries: inout [SnapshotEntry], source: String, options: ZipPackOptions) throws {
        guard let given = options.first else { return }
        // "./mimetype" names the same file as "mimetype".
        let first = RelativePath.trimmingTrailingSlashes(ZipNames.droppingDotSlashes(given))
        guard let index = entries.firstIndex(where: { PathOrder.sameBytes($0.path, first) }) else {
            throw ZipPackError("--first names '\(given)', which is not in '\(source)'")
        }
        guard entries[index].kind == .regular else {
            throw ZipPackError("--first names '\(given)', which is not a regular file")
        }
        entries.insert(entries.remove(at: index), at: 0)
    }

    /// What the pipeline writes for each scanned entry: its time (fixed or floored to the
    /// second), the stored method the `first` entry and level 0 force, and its reusable copy.
    private static func packEntries(_ scanned: [SnapshotEntry], reusable: [Int32], options: ZipPackOptions)
        -> [PackEntry]
    {
        var entries: [PackEntry] = []
        entries.reserveCapacity(scanned.count)
        for (index, entry) in scanned.enumerated() {
            let seconds = options.modificationTime ?? Self.floorSeconds(entry.modificationTime)
            let isFirst = options.first != nil && index == 0
            entries.append(
                PackEntry(
                    entryPath: entry.entryPath, kind: entry.kind, permissions: entry.permissions, size: entry.size,
                    modificationTime: seconds, linkTarget: entry.linkTarget, isFirst: isFirst,
                    forcedMethod: isFirst || options.level == 0 ? .stored : nil, reuseIndex: reusable[index]))
        }
        return entries
    }

    /// Where and over what a pack writes: the output as given and as resolved, the base,
    /// and the entries (what `appendLayout` decides from).
    private struct PackTarget {
        let given: String
        let output: String
        let base: ZipArchive?
        let entries: [PackEntry]
    }

    /// Runs the pipeline one of three ways: appending the changed entries in place, over the
    /// previous archive's blocks (`keepsPrevious`), or into a new file that replaces the output.
    private static func write(
        _ pipeline: PackPipeline, to target: PackTarget, options: ZipPackOptions, report: inout ZipPackReport
    ) throws {
        let output = target.output
        let base = target.base
        if let base,
            let layout = try appendLayout(target.given, output: output, base: base, entries: target.entries, options: options),
            try InPlaceAppend.append(to: output, base: base, layout: layout, durability: options.durability, { file in
                let tail = try pipeline.run(
                    writingTo: file, base: base, appending: layout, report: &report, progress: options.progress)
                guard let tail else { throw ZipPackError("internal error: the append wrote no central directory") }
                return tail
            })
        {
            report.appendedInPlace = true
            report.deadBytes = layout.deadBytes
        } else if options.keepsPrevious {
            let reusedPrevious = try PreviousArchive.write(
                to: output, sparing: base, permissions: 0o644, durability: options.durability
            ) { file in
                try pipeline.run(writingTo: file, base: base, report: &report, progress: options.progress)
                return report.archiveBytes
            }
            report.reusedPrevious = reusedPrevious
        } else {
            try AtomicFile.write(to: output, permissions: 0o644, durability: options.durability) { file in
                try pipeline.run(writingTo: file, base: base, report: &report, progress: options.progress)
            }
        }
    }

    /// The layout of an in-place append to `output` (`given` as the caller named it), or
    /// nil when the archive is to be written anew: the option is off, a base other than
    /// the output or a fixed time was asked for, the name is a symbolic link (the rewrite
    /// replaces the link's target as before) or has other hard links (appending would
    /// change them too), or too much would be dead (`InPlaceAppend.plan`).
    static func appendLayout(
        _ given: String, output: String, base: ZipArchive, entries: [PackEntry], options: ZipPackOptions
    ) throws -> AppendLayout? {
        guard options.appendsInPlace, !options.keepsPrevious, options.base == nil, options.reuseExistingOutput,
            options.modificationTime == nil,
            let named = try FileSystem.statusIfExists(given), named.kind == .regular, named.linkCount == 1
        else { return nil }
        return try InPlaceAppend.plan(entries, base: base)
    }

    static func floorSeconds(_ nanoseconds: Int64) -> Int64 {
        let (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return rest < 0 ? seconds - 1 : seconds
    }

    /// The base entries that can be copied raw: same path, kind, size, and the file's hash
    /// equal to the one the base records. The hash comes from the package manifest's stat
    /// cache when the scan found it there, else the file is read now, on all cores.
    /// - Returns: for each entry, the index of its copy among the base's entries, or
    ///   `PackEntry.notReused` (4 bytes an entry, not an optional `ZipEntry` of 170).
    static func findReusable(
        _ entries: [SnapshotEntry], base: ZipArchive?, root: Int32, source: String, options: ZipPackOptions
    ) throws -> [Int32] {
        var result = [Int32](repeating: PackEntry.notReused, count: entries.count)
        guard let base else { return result }
        var candidates: [Int] = []
        for (index, entry) in entries.enumerated() where entry.kind == .regular {
            guard let old = base.entry(at: RelativePath(trusted: entry.path)), old.kind == .regular, old.contentHash != nil,
                old.uncompressedSize == entry.size
            else { continue }
            if options.first != nil && index == 0 && old.method != .stored { continue }
            if entry.hash != .empty || entry.size == 0 {
                // Known from the manifest's stat cache (or the empty file's hash).
                if entry.hash == old.contentHash { result[index] = Int32(exactly: old.index) ?? PackEntry.notReused }
                continue
            }
            candidates.append(index)
        }
        guard !candidates.isEmpty else { return result }
        var batches: [[Int]] = []
        var batch: [Int] = []
        var bytes: Int64 = 0
        for index in candidates {
            batch.append(index)
            bytes += entries[index].size
            if batch.count >= 64 || bytes >= 8 << 20 {
                batches.append(batch)
                batch = []
                bytes = 0
            }
        }
        if !batch.isEmpty { batches.append(batch) }
        // (entry, base entry) pairs: 8 bytes a match, not a table of 170-byte entries.
        let matches = Mutex<[(entry: Int32, base: Int32)]>([])
        try WorkQueue<[Int]>.run(
            initial: batches, workers: max(1, options.workers), makeContext: { ChunkBuffer() },
            process: { indices, buffer, _ in
                var found: [(entry: Int32, base: Int32)] = []
                for index in indices {
                    let entry = entries[index]
                    let file = try FileDescriptor.openWithoutSymlinks(
                        entry.path, relativeTo: root, options: [.nonBlocking, .noFollow],
                        displayPath: source + "/" + entry.path)
                    let (hash, size) = try ContentHash.ofFile(file, buffer: buffer, expectedSize: entry.size)
                    if let old = base.entry(at: RelativePath(trusted: entry.path)), size == entry.size, hash == old.contentHash {
                        found.append((Int32(index), Int32(exactly: old.index) ?? PackEntry.notReused))
                    }
                }
                let local = found
                matches.withLock { $0.append(contentsOf: local) }
            })
        for match in matches.withLock({ $0 }) { result[Int(match.entry)] = match.base }
        return result
    }
}

/// One entry to write. Immutable but for the compression decision of a multi-chunk file,
/// which the first worker to need it makes under the lock.
final class PackEntry: Sendable {
    /// Where the entry lies in the source (and in the archive): its folder shared with its
    /// siblings and its name inline, as the scan found it (a million entries to write hold
    /// no path string each).
    let entryPath: EntryPath
    let kind: FileKind
    let permissions: UInt32
    let size: Int64
    let modificationTime: Int64
    let linkTarget: String?
    let isFirst: Bool
    let forcedMethod: ZipMethod?
    /// The index among the base archive's entries of a copy to reuse raw, or `notReused`.
    let reuseIndex: Int32
    let decision = Mutex<ZipMethod?>(nil)

    /// `reuseIndex` of an entry written anew.
    static let notReused: Int32 = -1

    init(
        entryPath: EntryPath, kind: FileKind, permissions: UInt32, size: Int64, modificationTime: Int64, linkTarget: String?,
        isFirst: Bool, forcedMethod: ZipMethod?, reuseIndex: Int32
    ) {
        self.entryPath = entryPath
        self.kind = kind
        self.permissions = permissions
        self.size = size
        self.modificationTime = modificationTime
        self.linkTarget = linkTarget
        self.isFirst = isFirst
        self.forcedMethod = forcedMethod
        self.reuseIndex = reuseIndex
    }

    /// The base's entry this one copies raw, nil when it is written anew.
    func reuse(in base: ZipArchive?) -> ZipEntry? {
        guard let base, reuseIndex >= 0 else { return nil }
        return base.entries[Int(reuseIndex)]
    }

    /// The path, made when asked (compared as bytes).
    var path: RelativePath { RelativePath(trusted: entryPath.string) }
    var name: String { kind == .directory ? entryPath.string + "/" : entryPath.string }
    /// Whether workers compress this entry (a new or changed regular file).
    var needsCompression: Bool { kind == .regular && reuseIndex < 0 }
    var chunkCount: Int { max(1, Int((size + Int64(ZipPacker.chunkSize) - 1) / Int64(ZipPacker.chunkSize))) }
}
