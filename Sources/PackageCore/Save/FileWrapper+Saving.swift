import FoundationEssentials

extension FileWrapper {
    /// Writes this wrapper (a directory recursively) to `url`, replacing what is there.
    ///
    /// A directory wrapper is a package: it is written by the save engine
    /// (`PackageSaver.save(_:to:options:progress:)` with a `FileWrapperSource`), wherever
    /// `url` is. Into the package it was read from (`originalContentsURL`, or simply the
    /// same place), only what changed is written; into a new place, everything — and
    /// either way the package gets its manifest, its lock and the strategy's crash
    /// guarantee, so the next save there is incremental. A regular file or symbolic link is
    /// replaced atomically (a staged sibling renamed over it).
    ///
    /// Without options, an existing folder that holds files but is not a package (no
    /// `.pkgtool`) is refused (EEXIST), as Apple's `write` refuses an existing item; with
    /// any option (`.atomic`) it is replaced.
    ///
    /// With `.withNameUpdating`, this wrapper and its descendants afterwards describe what
    /// was written: their names become the names written and their files the files there,
    /// so the next save reuses them. Without it (an export), the wrapper keeps describing
    /// where it was read from.
    /// - Complexity: in place: the changed files; elsewhere: every file, streamed in 1 MiB
    ///   chunks, one fsync per file and directory.
    public func write(to url: URL, options: WritingOptions = [], originalContentsURL: URL?) throws {
        try write(to: url, options: options, originalContentsURL: originalContentsURL, saveOptions: SaveOptions())
    }

    /// `write(to:options:originalContentsURL:)` with the save engine's options (strategy,
    /// durability, cancellation, progress), returning what the engine did.
    ///
    /// - Complexity: as `write(to:options:originalContentsURL:)`.
    @discardableResult
    public func write(
        to url: URL, options: WritingOptions = [], originalContentsURL: URL?, saveOptions: SaveOptions
    ) throws -> SaveOutcome {
        let path = try FileWrapper.filePath(of: url, for: .create)
        let nameUpdating = options.contains(.withNameUpdating)
        guard isDirectory else {
            return try writeFlat(to: path, durability: saveOptions.durability, nameUpdating: nameUpdating)
        }
        // In place: into the package named as the original contents, or the one this tree
        // was read from (or last saved to) when none is named.
        var inPlace = false
        if let originalContentsURL {
            let original = try FileWrapper.filePath(of: originalContentsURL, for: .open)
            inPlace = (try? PackageLocation(original)) == (try? PackageLocation(path))
        } else if let readFrom = diskRecord?.path ?? packageState?.packagePath {
            inPlace = (try? PackageLocation(readFrom)) == (try? PackageLocation(path))
        }
        if !inPlace && options.isEmpty { try FileWrapper.refuseForeignFolder(at: path) }
        let source = FileWrapperSource(self, adoptsPackage: inPlace || nameUpdating, updatesNames: nameUpdating)
        return try PackageSaver.save(source, to: path, options: saveOptions)
    }

    /// Without options Apple's `write` refuses a destination that exists ("file exists");
    /// here a package is saved over (that is what a save is), but a folder that holds files
    /// and is no package — a wrong URL, a working folder — is refused: the save would
    /// delete whatever the tree lacks. Pass `.atomic` to replace it anyway.
    static func refuseForeignFolder(at path: String) throws {
        guard PackageLayout.isForeignFolder(path) else { return }
        throw FileSystemError(
            .create, path: path, errno: .fileExists,
            reason:
                "the destination is a folder with files that is not a package; writing would replace its contents (pass .atomic to do so)")
    }

    /// A regular file or symbolic link written as `path`, replacing it atomically.
    private func writeFlat(to path: String, durability: Durability, nameUpdating: Bool) throws -> SaveOutcome {
        let (kind, permissions, linkTarget, modificationTime) = state.withLock {
            ($0.kind, $0.effectivePermissions, $0.linkTarget, $0.modificationTime)
        }
        var statistics = SaveStatistics(strategy: .full)
        let clock = Stopwatch()
        if kind == .symbolicLink {
            let staged = try StagedReplacement(replacing: path, kind: .symbolicLink(target: linkTarget ?? ""))
            try staged.commit(durability: durability, exchange: false)
            statistics.symbolicLinksWritten = 1
        } else {
            let buffer = ChunkBuffer()
            try AtomicFile.write(to: path, permissions: permissions, durability: durability) { file in
                try forEachChunk(using: buffer) { chunk in try file.write(chunk) }
                if let modificationTime { try file.setModificationTime(modificationTime) }
            }
            statistics.filesWritten = 1
            statistics.bytesWritten = regularFileSize
        }
        statistics.entryCount = 1
        statistics.seconds = clock.seconds
        if nameUpdating {
            let status = try FileSystem.status(path)
            state.withLock { node in
                node.filename = RelativePath.lastComponent(of: path)
                node.diskRecord = DiskRecord(path: path, status: status)
                node.modificationTime = status.modificationTime
            }
        }
        return SaveOutcome(statistics: statistics, written: [:])
    }
}

/// A tree held in memory as the new tree of a save (`FileWrapper.write(to:…)`, the document
/// layer's package writers).
///
/// Files still backed by the file they were read from are copied (or hard-linked, when
/// unchanged) from there; files in memory are written from memory; nothing is loaded whole.
/// A tree read from this very package (`FileWrapper(url:)`) knows what was edited since:
/// its journaled saves visit only edited directories (the engine asks it for its changed parts). Afterwards —
/// when `adoptsPackage` — the tree describes the package: written nodes are backed by
/// their new files, edit marks are cleared (unless edited again meanwhile), and the
/// manifest's head is remembered for the next save.
///
/// What the tree finds changed on disk behind its back (Specs/filewrapper.md): a file of
/// this package it still refers to but never loaded, since removed, is dropped from the
/// tree (its bytes are gone); one modified since is taken as it now is on disk. Either way
/// the save says so in its notes, and the package it leaves matches its manifest.
public struct FileWrapperSource: SaveSource {
    /// The directory wrapper whose tree is saved.
    public let root: FileWrapper
    /// Whether the tree describes the package once saved (a save in place, or
    /// `.withNameUpdating`); false for an export, which leaves the tree as it was.
    public var adoptsPackage: Bool
    /// Whether the nodes also take the names they were written under.
    public var updatesNames: Bool
    /// What the walk of one save found, for `didSave`.
    let session = FileWrapperSaveSession()

    /// The tree below `root` as the tree to save; by default it describes the package afterwards.
    public init(_ root: FileWrapper, adoptsPackage: Bool = true, updatesNames: Bool = false) {
        self.root = root
        self.adoptsPackage = adoptsPackage
        self.updatesNames = updatesNames
    }

    /// Refuses a tree whose root is not a directory: a package is one.
    public func validate(for package: PackageLocation) throws {
        guard root.isDirectory else {
            throw SaveRefusal(path: "\(package)", reason: .treeNotADirectory(root.kind))
        }
    }

    /// The whole tree, each file's bytes coming from memory or from the file it was read from.
    ///
    /// - Complexity: hashes what is not hashed yet (files in memory, files on disk never
    ///   hashed: streamed in 1 MiB chunks); one `lstat` per never-loaded file of this package.
    public func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        var notes: [String] = []
        // Files changed behind the tree's back in the package it was read from (or last
        // saved to): this one; or — a save elsewhere that the tree will describe afterwards
        // (`adoptsPackage`: a document's save as) — the one it came from, which may be gone
        // or replaced by a file. A plain copy (an export) still fails on a vanished file: the
        // tree it leaves unchanged still names it.
        let origin = root.state.withLock { $0.diskRecord?.path } ?? root.packageState?.packagePath
        if adoptsPackage, let origin {
            root.reconcileFilesBehindItsBack(packagePath: origin, notes: &notes)
        } else if context.packageExists {
            root.reconcileFilesBehindItsBack(packagePath: context.package.path, notes: &notes)
        }
        // Files on disk not hashed yet, on all cores, stopping when the save is cancelled.
        let cancellation = context.options.cancellation
        try root.hashFilesOnDisk(workers: context.options.workers, isCancelled: { cancellation?.isCancelled == true })
        let (snapshot, nodes) = try root.snapshotWithNodes()
        var entries = snapshot.entries
        var contents = [ContentOrigin?](repeating: nil, count: entries.count)
        let now = FileClock.upperBound()
        for index in entries.indices {
            let (data, record, knownTime) = nodes[index].state.withLock {
                ($0.contents, $0.diskRecord, $0.modificationTime)
            }
            // A file made in memory has no date: it gets the time of this save.
            if knownTime == nil { entries[index].modificationTime = now }
            guard entries[index].kind == .regular else { continue }
            if let data {
                contents[index] = .stream(DataStream(data))
            } else if let record {
                contents[index] = .file(path: record.path, seen: record.status)
            }
        }
        session.wholeTree = (entries.map(\.path), nodes)
        return SourceTree(
            snapshot: TreeSnapshot(entries: entries, rootHash: snapshot.rootHash), contents: contents,
            rootPermissions: root.state.withLock { $0.effectivePermissions }, notes: notes)
    }

    /// Re-backs the written nodes by their new files and remembers the manifest's head, when
    /// the tree adopts the package.
    ///
    /// - Complexity: one `lstat` per node written (per node, after a whole-tree save).
    public func didSave(_ outcome: SaveOutcome, in context: SaveSourceContext) {
        guard adoptsPackage else { return }
        let package = context.package
        if let walk = session.editedParts {
            adoptEditedParts(walk, outcome: outcome, package: package)
        } else if let (paths, nodes) = session.wholeTree {
            // Every node now backed by its file in the package, no edit marks.
            var pairs = [(node: root, relative: "")]
            pairs.reserveCapacity(nodes.count + 1)
            for (index, node) in nodes.enumerated() { pairs.append((node, paths[index])) }
            for (node, relative) in pairs {
                let path = package.inside(relative)
                guard let status = try? FileSystem.status(path) else { continue }
                node.state.withLock { state in
                    state.diskRecord = DiskRecord(path: path, status: status)
                    state.directoryEditedSinceRead = false
                    state.editedBelow = false
                    if updatesNames {
                        state.filename = relative.isEmpty ? package.name : RelativePath.lastComponent(of: relative)
                        state.modificationTime = status.modificationTime
                        state.permissions = status.permissions
                    }
                }
            }
        }
        if let head = outcome.head,
            let identity = try? TreePackageState.Identity.current(packagePath: package.path, head: head)
        {
            root.packageState = TreePackageState(packagePath: package.path, head: head, identity: identity)
        }
    }
}

/// What one save of a `FileWrapperSource` found, kept from the description to `didSave`.
final class FileWrapperSaveSession {
    var wholeTree: (paths: [String], nodes: [FileWrapper])?
    var editedParts: EditedTreeWalk?
}

/// A `Data` value's bytes as a stream, in 1 MiB pieces, without copying them.
struct DataStream: ContentStream {
    let data: Data
    init(_ data: Data) { self.data = data }

    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        try data.withUnsafeBytes { bytes in
            var offset = 0
            repeat {
                let end = min(bytes.count, offset + ChunkBuffer.defaultSize)
                try body(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
                offset = end
            } while offset < bytes.count
        }
    }
}

extension FileWrapper {
    /// Brings the tree in line with files of the package at `packagePath` that changed
    /// behind its back, for the nodes still backed by them and not loaded: a removed one is
    /// dropped (its bytes are gone), a modified one reread (the version on disk is kept).
    ///
    /// - Complexity: one `lstat` per such node.
    func reconcileFilesBehindItsBack(packagePath: String, notes: inout [String]) {
        let prefix = packagePath + "/"
        var stack: [FileWrapper] = [self]
        while let directory = stack.popLast() {
            for (_, child) in directory.sortedChildren ?? [] {
                let (kind, record, loaded) = child.state.withLock { ($0.kind, $0.diskRecord, $0.contents != nil) }
                if kind == .directory {
                    stack.append(child)
                    continue
                }
                guard kind == .regular, !loaded, let record, PathOrder.hasBytePrefix(record.path, prefix) else { continue }
                let now = try? FileSystem.status(record.path)
                if let now, record.stillDescribes(now) { continue }
                let relative = PathOrder.droppingBytes(prefix.utf8.count, from: record.path)
                if let now, now.kind == .regular {
                    _ = try? child.read(from: URL(fileURLWithPath: record.path))
                    notes.append("'\(relative)' changed behind the document's back: the version on disk was kept")
                } else {
                    directory.removeFileWrapper(child)
                    notes.append("'\(relative)' was removed behind the document's back: it is no longer part of the package")
                }
            }
        }
    }
}
