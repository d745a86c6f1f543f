import Glibc

/// What pkgtool last recorded of a package: every entry's content hash and stat data,
/// persisted in the package's `.pkgtool` directory (Specs/manifest.md).
///
/// It lets diff, verify and save skip reading files whose stat data still match (git's
/// index rules, with racy-timestamp protection) and lets a save know the package's state
/// without rescanning it.
public struct PackageManifest: Sendable {
    /// The recorded tree, with stat data on every entry.
    public internal(set) var snapshot: TreeSnapshot
    /// The modification time of the base file: when its entries were recorded. An entry
    /// whose file's mtime is not older than the time it was recorded may have changed
    /// within the same timestamp granule after it was recorded ("racy"): it is re-hashed.
    var baseRecordedAt: Int64
    /// The same, for entries a delta recorded later (by path: deltas are small).
    var deltaRecordedAt: [FileName: Int64]
    /// The earliest time in `deltaRecordedAt` (`Int64.max` when it is empty): a file dated
    /// before it and `baseRecordedAt` is not racy, whichever record holds it.
    var earliestDeltaRecordedAt: Int64 = .max
    /// Windows in which saves hard-linked unchanged files, moving their ctimes; a ctime
    /// inside one of them is the save's own doing, not an edit.
    var relinkWindows: [ClosedRange<Int64>]
    /// Identifies the base file; deltas name the base they apply to.
    var baseChecksum: ContentHash
    /// The checksum of the last delta applied (zero when none): the next delta chains to it.
    var lastDeltaChecksum: ContentHash
    /// Sequence number of the last delta applied (0 when none).
    package internal(set) var lastSequence: UInt64
    /// Records held in delta files: compaction rewrites the base when this grows.
    package internal(set) var deltaRecordCount: Int
    /// Delta files found on disk that belonged to an older base (left by an interrupted compaction).
    package internal(set) var staleDeltaFiles: [String]
    /// The number of entries recorded (equal to `entries.count` unless this value holds only
    /// the manifest's head, see `init(head:)`).
    public internal(set) var entryCount: Int
    /// While loading: the entry count the last delta read says the tree has.
    var expectedEntryCount = 0
    /// The inode of the package root directory the base file was written for (0: unknown,
    /// as in every version 1 file). A manifest that arrived with a copied or received
    /// package names another inode: the engine then does not take it as the package's state.
    package internal(set) var basePackageIdentity: UInt64 = 0
    /// The same for the last delta applied; nil when there is none.
    package internal(set) var lastDeltaPackageIdentity: UInt64?

    /// The package identity of the file that recorded the manifest's current state: the
    /// last delta's, or the base's when there are no deltas.
    package var packageIdentity: UInt64 { lastDeltaPackageIdentity ?? basePackageIdentity }

    /// The recorded entries, in depth-first path order.
    public var entries: [SnapshotEntry] { snapshot.entries }

    /// Where the manifest's chain stands: what the next delta must name, and how big the
    /// deltas have grown. Enough to append a delta without the entries.
    ///
    /// Inside pkgtool's own modules only: a source that saves only the changed parts of a
    /// tree (`EditedPartsSource`) hands back the head it read (`PartialSourceTree`), and the
    /// engine checks it is still on disk.
    package struct Head: Sendable, Equatable {
        package var baseChecksum: ContentHash
        package var lastDeltaChecksum: ContentHash
        package var lastSequence: UInt64
        package var deltaRecordCount: Int
        /// The number of entries the manifest records.
        package var entryCount: Int
        /// The root hash of the tree the manifest records.
        package var rootHash: ContentHash
    }

    /// Where the manifest's chain stands now.
    package var head: Head {
        Head(
            baseChecksum: baseChecksum, lastDeltaChecksum: lastDeltaChecksum, lastSequence: lastSequence,
            deltaRecordCount: deltaRecordCount, entryCount: entryCount, rootHash: snapshot.rootHash)
    }



    // MARK: Loading

    /// Loads the manifest of the package at `packagePath`.
    ///
    /// - Returns: nil when the package has no manifest.
    /// - Throws: `ManifestError` when it exists but cannot be trusted (truncated, damaged,
    ///   a future version, an inconsistent delta chain); `FileSystemError` when it cannot be read.
    /// - Complexity: one read of the base file and of each delta file; O(n) decoding.
    public static func load(packagePath: String) throws -> PackageManifest? {
        let metadataPath = PackageLayout.metadataDirectory(of: packagePath)
        let metadata: FileDescriptor
        do {
            metadata = try FileDescriptor.openDirectory(metadataPath)
        } catch {
            if error.isNotFound || error.errno == .notDirectory { return nil }
            throw error
        }
        let indexPath = PackageLayout.joined(metadataPath, PackageLayout.indexFileName)
        // Decoding checks the depth-first order and fills directories' descendant counts,
        // reading the file a piece at a time.
        guard
            let (index, indexTime) = try withRegularFile(PackageLayout.indexFileName, in: metadata, path: indexPath, {
                file, status in
                (try ManifestFormat.decodeIndex(file: file, size: status.size, path: indexPath), status.modificationTime)
            })
        else { return nil }
        var manifest = PackageManifest(
            snapshot: TreeSnapshot(entries: index.entries, rootHash: index.rootHash),
            baseRecordedAt: indexTime, deltaRecordedAt: [:],
            relinkWindows: index.relinkWindow.upperBound > 0 ? [index.relinkWindow] : [],
            baseChecksum: index.checksum, lastDeltaChecksum: ContentHash(high: 0, low: 0), lastSequence: 0,
            deltaRecordCount: 0, staleDeltaFiles: [], entryCount: index.entries.count,
            expectedEntryCount: index.entries.count, basePackageIdentity: index.packageIdentity)

        // Deltas, in sequence order; those written for an older base are leftovers of an
        // interrupted compaction and are ignored.
        var deltas: [(sequence: UInt64, name: String)] = []
        for name in try DirectoryListing.names(in: metadata) {
            guard let sequence = PackageLayout.deltaSequence(name) else { continue }
            deltas.append((sequence, name))
        }
        deltas.sort { $0.sequence < $1.sequence }
        var fold = DeltaFold()
        var lastDeltaPath = indexPath
        for (sequence, name) in deltas {
            let deltaPath = PackageLayout.joined(metadataPath, name)
            guard let (bytes, time) = try readWhole(name, in: metadata, path: deltaPath) else { continue }
            let delta = try bytes.withUnsafeBytes { raw throws(ManifestError) in
                try ManifestFormat.decodeDelta(raw, path: deltaPath)
            }
            guard delta.header.baseChecksum == manifest.baseChecksum else {
                manifest.staleDeltaFiles.append(name)
                continue
            }
            guard delta.header.sequence == sequence, sequence == manifest.lastSequence + 1,
                delta.header.previousChecksum == manifest.lastDeltaChecksum
            else {
                throw ManifestError(
                    path: deltaPath,
                    reason: .brokenDeltaChain("expected delta \(manifest.lastSequence + 1), found \(sequence)"))
            }
            fold.add(delta, recordedAt: time)
            manifest.adoptHeader(of: delta)
            lastDeltaPath = deltaPath
        }
        if !fold.isEmpty { try manifest.apply(fold, path: lastDeltaPath) }
        return manifest
    }

    /// `body` with a regular file relative to `directory` open, and its status; nil when
    /// the file does not exist.
    private static func withRegularFile<Result>(
        _ name: String, in directory: borrowing FileDescriptor, path: String,
        _ body: (borrowing FileDescriptor, FileStatus) throws -> Result
    ) throws -> Result? {
        do {
            // Non-blocking: a FIFO planted in `.pkgtool` opens at once (and is refused below)
            // instead of waiting forever for a writer.
            let file = try FileDescriptor.open(
                name, relativeTo: directory.rawValue, options: [.noFollow, .nonBlocking], displayPath: path)
            let status = try file.status()
            guard status.kind == .regular else {
                throw ManifestError(path: path, reason: .inconsistent("not a regular file"))
            }
            return try body(file, status)
        } catch let failure as FileSystemError {
            if failure.isNotFound && failure.operation == .open { return nil }
            throw FileSystemError(failure.operation, path: path, errno: failure.errno, reason: failure.reason)
        }
    }

    /// Reads a whole file relative to `directory` (a delta: small); nil when it does not exist.
    private static func readWhole(_ name: String, in directory: borrowing FileDescriptor, path: String) throws
        -> ([UInt8], Int64)?
    {
        try withRegularFile(name, in: directory, path: path) { file, status in
            // Uninitialised storage: no point zeroing megabytes the read overwrites.
            var failure: FileSystemError?
            let bytes = [UInt8](unsafeUninitializedCapacity: Int(status.size)) { buffer, count in
                do throws(FileSystemError) {
                    count = try file.readFully(into: UnsafeMutableRawBufferPointer(buffer), at: 0)
                } catch {
                    failure = error
                    count = 0
                }
            }
            if let failure { throw failure }
            return (bytes, status.modificationTime)
        }
    }

    private static func checkOrder(_ entries: [SnapshotEntry], path: String) throws(ManifestError) {
        for index in entries.indices.dropFirst()
        where !PathOrder.pathLess(entries[index - 1].path, entries[index].path) {
            throw ManifestError(path: path, reason: .inconsistent("entries out of order at '\(entries[index].path)'"))
        }
    }

    /// Takes the chain fields of a delta just validated.
    private mutating func adoptHeader(of delta: ManifestFormat.DecodedDelta) {
        if delta.header.relinkWindow.upperBound > 0 { relinkWindows.append(delta.header.relinkWindow) }
        lastDeltaChecksum = delta.checksum
        lastSequence = delta.header.sequence
        deltaRecordCount += delta.upserts.count + delta.removals.count
        snapshot.rootHash = delta.header.rootHash
        // Clamped, not trapped: a count past Int.max is damage, refused by `apply` as a mismatch.
        expectedEntryCount = Int(clamping: delta.header.entryCount)
        lastDeltaPackageIdentity = delta.header.packageIdentity
    }

    /// Merges the folded deltas into the base entries in one pass: O(n + k log k) for n
    /// entries and k delta records, however many deltas there are.
    private mutating func apply(_ fold: DeltaFold, path: String) throws(ManifestError) {
        if !applyInPlace(fold) { merge(fold) }
        guard snapshot.entries.count == expectedEntryCount else {
            throw ManifestError(
                path: path,
                reason: .inconsistent("\(snapshot.entries.count) entries after applying it, \(expectedEntryCount) expected"))
        }
    }

    /// The folded deltas' records written over the base entries they replace, when every
    /// one replaces an entry of the same path that is a directory exactly when it is (the
    /// common case: files changed, none added or removed): the tree's shape and descendant
    /// counts stay, and the base is neither copied nor walked. False, with nothing changed,
    /// otherwise.
    ///
    /// - Complexity: O(k log n) for k records.
    private mutating func applyInPlace(_ fold: DeltaFold) -> Bool {
        guard fold.removedRoots.isEmpty else { return false }
        var replacements: [(index: Int, record: DeltaFold.Record)] = []
        replacements.reserveCapacity(fold.overlay.count)
        for (key, record) in fold.overlay {
            guard let entry = record.entry, let index = snapshot.index(of: key.string),
                PathOrder.sameBytes(snapshot.entries[index].path, entry.path),
                (snapshot.entries[index].kind == .directory) == (entry.kind == .directory)
            else { return false }
            replacements.append((index, record))
        }
        for (index, record) in replacements {
            guard var entry = record.entry else { continue }
            entry.descendantCount = snapshot.entries[index].descendantCount
            snapshot.entries[index] = entry
            deltaRecordedAt[FileName(entry.path)] = record.time
            earliestDeltaRecordedAt = min(earliestDeltaRecordedAt, record.time)
        }
        entryCount = snapshot.entries.count
        return true
    }

    /// `apply` by a merge of the base entries and the folded records into a new array.
    private mutating func merge(_ fold: DeltaFold) {
        let overlay = fold.overlay.sorted { PathOrder.pathLess($0.key.string, $1.key.string) }
        let removals = fold.removedRoots.sorted(by: PathOrder.pathLess)
        let old = snapshot.entries
        var merged: [SnapshotEntry] = []
        merged.reserveCapacity(old.count + overlay.count)
        var removalIndex = 0
        func removed(_ entryPath: String) -> Bool {
            // Sorted roots: skip those before this path that are not its ancestors.
            while removalIndex < removals.count {
                let removal = removals[removalIndex]
                if PathOrder.sameBytes(removal, entryPath) || Self.isDescendant(entryPath, of: removal) { return true }
                if PathOrder.pathLess(removal, entryPath) {
                    removalIndex += 1
                    continue
                }
                return false
            }
            return false
        }
        var overlayIndex = 0
        var oldIndex = 0
        while oldIndex < old.count || overlayIndex < overlay.count {
            if overlayIndex < overlay.count
                && (oldIndex == old.count || !PathOrder.pathLess(old[oldIndex].path, overlay[overlayIndex].key.string))
            {
                let (key, record) = overlay[overlayIndex]
                if oldIndex < old.count && PathOrder.sameBytes(old[oldIndex].path, key.string) { oldIndex += 1 }
                if let entry = record.entry {
                    merged.append(entry)
                    deltaRecordedAt[FileName(entry.path)] = record.time
                    earliestDeltaRecordedAt = min(earliestDeltaRecordedAt, record.time)
                }
                overlayIndex += 1
            } else {
                if !removed(old[oldIndex].path) { merged.append(old[oldIndex]) }
                oldIndex += 1
            }
        }
        Self.fillDescendantCounts(&merged)
        snapshot.entries = merged
        entryCount = merged.count
    }

    /// Fills every directory's descendant count from the paths (entries in depth-first order).
    static func withDescendantCounts(_ entries: [SnapshotEntry]) -> [SnapshotEntry] {
        var result = entries
        fillDescendantCounts(&result)
        return result
    }

    /// `withDescendantCounts` in place.
    static func fillDescendantCounts(_ result: inout [SnapshotEntry]) {
        var open: [Int] = []
        for index in result.indices {
            while let top = open.last, !isDescendant(result[index].path, of: result[top].path) {
                result[top].descendantCount = index - top - 1
                open.removeLast()
            }
            if result[index].kind == .directory { open.append(index) }
        }
        for top in open { result[top].descendantCount = result.count - top - 1 }
    }

    /// Whether `path` lies strictly inside the directory `ancestor` (by bytes).
    static func isDescendant(_ path: String, of ancestor: String) -> Bool {
        var path = path
        var ancestor = ancestor
        return path.withUTF8 { p in
            ancestor.withUTF8 { a in
                p.count > a.count + 1 && p[a.count] == 0x2F && memcmp(p.baseAddress!, a.baseAddress!, a.count) == 0
            }
        }
    }

    // MARK: The stat cache

    /// Whether `changeTime` falls in one of the recorded relink windows (binary search:
    /// windows are appended in time order and do not overlap).
    func insideRelinkWindow(_ changeTime: Int64) -> Bool {
        var low = 0
        var high = relinkWindows.count
        while low < high {
            let middle = (low + high) / 2
            if relinkWindows[middle].upperBound < changeTime { low = middle + 1 } else { high = middle }
        }
        return low < relinkWindows.count && relinkWindows[low].contains(changeTime)
    }

    /// When the record of `path` was written (the racy cutoff).
    func recordedAt(_ path: String) -> Int64 {
        deltaRecordedAt.isEmpty ? baseRecordedAt : deltaRecordedAt[FileName(path)] ?? baseRecordedAt
    }

    /// Whether `time` (a file's mtime) is before the record of `path` was written: the file
    /// was not changed within its record's racy window. Without a lookup when `time` is
    /// before every record.
    func isRecorded(after time: Int64, path: String) -> Bool {
        if time < baseRecordedAt && time < earliestDeltaRecordedAt { return true }
        return time < recordedAt(path)
    }

    /// The recorded hash of the regular file at `path`, when its current `status` proves it
    /// unchanged: same kind, size, mtime (ns), inode, and ctime (or a ctime a save's own
    /// hard-linking produced), and not racy. Nil means: read and hash the file.
    ///
    /// - Complexity: O(log n) path comparisons.
    public func cachedHash(for path: String, status: FileStatus) -> ContentHash? {
        guard let index = snapshot.index(of: path) else { return nil }
        return cachedHash(at: index, status: status)
    }

    /// The recorded hash and chunk list of the regular file at `path`, under the same
    /// conditions as `cachedHash(for:status:)`.
    ///
    /// - Complexity: O(log n) path comparisons.
    public func cachedContent(for path: String, status: FileStatus) -> KnownContent? {
        guard let index = snapshot.index(of: path), let hash = cachedHash(at: index, status: status) else { return nil }
        return KnownContent(hash: hash, chunks: snapshot.entries[index].chunks)
    }

    /// The chunk list recorded for the regular file at `path` (nil when it has none: below
    /// the threshold, or recorded by a version 1 manifest and not rehashed since). It
    /// describes the bytes the record's hash names; whether the file on disk still holds
    /// them is for `cachedHash`/`cachedContent` to say.
    ///
    /// - Complexity: O(log n) path comparisons.
    public func chunks(for path: String) -> ChunkList? {
        snapshot.index(of: path).flatMap { snapshot.entries[$0].chunks }
    }

    /// `cachedHash(for:status:)` for the entry at `index` (the caller found it).
    func cachedHash(at index: Int, status: FileStatus) -> ContentHash? {
        let entry = snapshot.entries[index]
        guard entry.kind == .regular, status.kind == .regular, entry.size == status.size,
            entry.modificationTime == status.modificationTime, entry.inode == status.inode,
            isRecorded(after: entry.modificationTime, path: entry.path)
        else { return nil }
        if entry.changeTime != status.changeTime {
            guard insideRelinkWindow(status.changeTime) else { return nil }
        }
        return entry.hash
    }

    /// The recorded hash of the source file that was saved to `path`, when its current
    /// `status` matches the stamp recorded then (same device, inode, size, mtime, ctime) and
    /// is not racy: the stat cache of `pkgtool save SRC PKG` for SRC.
    package func cachedSourceHash(for path: String, status: FileStatus) -> ContentHash? {
        guard let index = snapshot.index(of: path) else { return nil }
        return cachedSourceHash(at: index, status: status)
    }

    func cachedSourceHash(at index: Int, status: FileStatus) -> ContentHash? {
        let entry = snapshot.entries[index]
        guard entry.kind == .regular, status.kind == .regular, let stamp = entry.source, entry.size == status.size,
            stamp == SourceStamp(status), isRecorded(after: stamp.modificationTime, path: entry.path)
        else { return nil }
        return entry.hash
    }

    /// Whether the source stamp `entry` carries, as this manifest records it for `entry`'s
    /// path, is racy: its source file's mtime is not older than the record, so the stamp
    /// vouches for nothing and the source's scan reread the file (`cachedSourceHash`).
    ///
    /// - Complexity: O(1) when the mtime is older than every record, as nearly all are.
    func hasRacySourceStamp(_ entry: SnapshotEntry) -> Bool {
        guard let time = entry.source?.modificationTime else { return false }
        if time < baseRecordedAt && time < earliestDeltaRecordedAt { return false }
        return !isRecorded(after: time, path: entry.path)
    }

    /// A scanner lookup of the package's stat cache: the recorded hash and chunk list of
    /// files proven unchanged.
    public var hashLookup: TreeScanner.HashLookup { lookupByPath(vouchedBy: .package) }

    /// A scanner lookup of recorded chunk lists by path, whatever the files' stat data: the
    /// hint that lets a changed large file be chunked where its old chunks recur.
    package var chunkHints: TreeScanner.ChunkHintLookup {
        let manifest = self
        return { path in manifest.snapshot.index(of: path).flatMap { manifest.snapshot.entries[$0].chunks } }
    }

    /// `sourceHashLookup` by position in the manifest, for a scan that walks each
    /// directory's records beside its listing (`TreeScanner.recordedContent`).
    package var sourceContentLookup: RecordedContentLookup { lookupByPosition(vouchedBy: .source) }

    /// `hashLookup` by position in the manifest (`TreeScanner.recordedContent`).
    package var recordedContentLookup: RecordedContentLookup { lookupByPosition(vouchedBy: .package) }

    /// A scanner lookup of the source stamps (`pkgtool save SRC PKG`'s stat cache for SRC):
    /// the saved copy has the source's bytes, so its chunk list is the source's too.
    package var sourceHashLookup: TreeScanner.HashLookup { lookupByPath(vouchedBy: .source) }

    /// Which recorded stamp vouches for a file: the package file's own, or that of the
    /// source file it was saved from.
    enum VouchingStamp { case package, source }

    /// What the record of entry `index` says of a file whose current stat data is `status`,
    /// when `stamp` vouches for it: its hash, its chunk list and the recorded path string.
    func knownContent(at index: Int, status: FileStatus, vouchedBy stamp: VouchingStamp) -> KnownContent? {
        let hash =
            switch stamp {
            case .package: cachedHash(at: index, status: status)
            case .source: cachedSourceHash(at: index, status: status)
            }
        guard let hash else { return nil }
        let entry = snapshot.entries[index]
        return KnownContent(hash: hash, chunks: entry.chunks)
    }

    private func lookupByPath(vouchedBy stamp: VouchingStamp) -> TreeScanner.HashLookup {
        let manifest = self
        return { path, status in
            manifest.snapshot.index(of: path).flatMap { manifest.knownContent(at: $0, status: status, vouchedBy: stamp) }
        }
    }

    private func lookupByPosition(vouchedBy stamp: VouchingStamp) -> RecordedContentLookup {
        let manifest = self
        return RecordedContentLookup(snapshot: snapshot) { index, status in
            manifest.knownContent(at: index, status: status, vouchedBy: stamp)
        }
    }
}

extension PackageManifest {
    /// A manifest that knows only its head: it can append deltas (`encodedDelta`) and tell
    /// when to compact, but holds no entries. For saves that keep the tree in memory.
    package init(head: Head) {
        self.snapshot = TreeSnapshot(entries: [], rootHash: head.rootHash)
        self.baseRecordedAt = 0
        self.deltaRecordedAt = [:]
        self.relinkWindows = []
        self.baseChecksum = head.baseChecksum
        self.lastDeltaChecksum = head.lastDeltaChecksum
        self.lastSequence = head.lastSequence
        self.deltaRecordCount = head.deltaRecordCount
        self.staleDeltaFiles = []
        self.entryCount = head.entryCount
    }
}

/// Deltas folded together before they touch the base: the last record of each path wins,
/// and a removal drops the records folded so far beneath it.
struct DeltaFold {
    struct Record {
        /// nil: removed.
        var entry: SnapshotEntry?
        var time: Int64
    }

    var overlay: [FileName: Record] = [:]
    /// Subtrees removed from the base.
    var removedRoots: [String] = []

    var isEmpty: Bool { overlay.isEmpty && removedRoots.isEmpty }

    mutating func add(_ delta: ManifestFormat.DecodedDelta, recordedAt time: Int64) {
        for root in delta.removals {
            for key in overlay.keys
            where PathOrder.sameBytes(key.string, root) || PackageManifest.isDescendant(key.string, of: root) {
                overlay[key] = Record(entry: nil, time: time)
            }
            overlay[FileName(root)] = Record(entry: nil, time: time)
            removedRoots.append(root)
        }
        for entry in delta.upserts { overlay[FileName(entry.path)] = Record(entry: entry, time: time) }
    }
}
