import Glibc
import PackageCore
import Synchronization

extension ZipArchive {
    /// What an extraction wrote.
    public struct ExtractReport: Sendable {
        /// Regular files written.
        public var files: Int
        /// Directories made (the destination itself not counted).
        public var directories: Int
        /// Symbolic links made.
        public var links: Int
        /// Bytes written into the files.
        public var bytes: Int64
    }

    /// Extracts every entry into `destination`, which must not exist or be an empty directory.
    ///
    /// The tree is built in a hidden staging directory beside `destination`
    /// (`StagedReplacement`: `.NAME.<hash>.pkgtool-staging-…`, held under a `flock` while it
    /// lives) and renamed into place only when every entry has been written and checked
    /// (sizes, CRC-32, content hash); on any failure the staging directory is removed and
    /// `destination` is left as it was. The staging trees of earlier extractions into the
    /// same destination that were killed are removed first. A `destination` that is a
    /// symbolic link stands for the directory it names. Files are created with
    /// `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)` and `O_EXCL`, symbolic links last,
    /// so nothing outside the staging directory is ever written, whatever the archive holds.
    /// Modes as stored (0000 included, without set-id bits), modification times, links and
    /// empty directories are restored. An existing `destination` keeps its own mode, owner
    /// and group. Two entries that land on one file (a destination that folds case or
    /// normalises names) are refused, never written one over the other.
    ///
    /// - Parameters:
    ///   - destination: the directory to create (or an empty one to fill).
    ///   - workers: threads that inflate and write, every core by default.
    ///   - durability: `.full` fsyncs every file and directory before the rename.
    ///   - progress: called from worker threads with the bytes of each piece written (at
    ///     most 1 MiB: a large file moves a progress line as it is written).
    ///   - cancellation: asked before each file, each MiB written and the rename; once
    ///     raised, the extraction stops, removes its staging directory and throws
    ///     `CancellationError`, `destination` untouched.
    /// - Throws: `ZipError` for twins on a folding destination; `FileSystemError` for I/O
    ///   trouble, or when an existing destination's owner cannot be kept;
    ///   `CancellationError` when cancelled.
    /// - Complexity: reads all compressed data once; per file one `openat2` (the kernel
    ///   walks its path: linear in the bytes of the names), the writes, one `fchmod` and
    ///   one `futimens`; per directory one `mkdirat`, one `fchmod` and one `futimens`, each
    ///   relative to a descriptor of its parent or itself, and two or three `openat2` of at
    ///   most 32 components (`DirectoryWalk`); on `workers` threads with about 2 MiB of
    ///   buffers each.
    @discardableResult
    public func extract(
        to destination: String, workers: Int = ProcessInfoCores.active, durability: Durability = .none,
        progress: (@Sendable (Int64) -> Void)? = nil, cancellation: SaveCancellation? = nil
    ) throws -> ExtractReport {
        let (target, existing) = try Self.checkedDestination(destination)
        // Staging trees of earlier unpacks into DEST that were killed (Ctrl-C, a crash):
        // removed now, unless a live unpack still holds one.
        _ = try? StagedReplacement.sweepLeftovers(beside: target, durability: durability)
        let staged = try StagedReplacement(replacing: target, kind: .directory(permissions: 0o700))
        let root = try staged.openStagedDirectory()
        let ownOwner = try root.status()
        if let existing { try Self.checkOwner(of: existing, canBeGivenTo: root, from: ownOwner, destination: target) }
        let report = try populate(
            root, displayRoot: target, workers: workers, durability: durability, progress: progress,
            cancellation: cancellation)
        // The new root takes the place of DEST: its owner, group and mode, or 0755 for
        // a new one. Given away only now, so that no other user controls the staging
        // directory while it is built.
        if let existing, ownOwner.userID != existing.userID || ownOwner.groupID != existing.groupID {
            try root.setOwner(userID: existing.userID, groupID: existing.groupID)
        }
        try root.setPermissions(existing?.permissions ?? 0o755)
        if durability == .full { try root.sync() }
        if cancellation?.isCancelled == true { throw CancellationError() }
        // Renamed over an empty DEST (rename(2) refuses one that has filled up since the
        // check: ENOTEMPTY), or into place without replacing anything.
        do {
            try staged.commit(durability: durability, exchange: false)
        } catch let error as FileSystemError where error.errno == .fileExists || error.errno == .directoryNotEmpty {
            // Another process made DEST, or put something in it, while this one unpacked.
            throw FileSystemError(
                .create, path: target, errno: error.errno,
                reason: "the destination appeared or filled while the archive was unpacked")
        }
        return report
    }

    /// The directory an extraction into `destination` would create or fill, and what stands
    /// there now (an empty directory, or nothing), after every check `extract` makes before
    /// writing: the name is a directory's own (not `.`, `..` or `/`; a final symbolic link
    /// followed), and what stands there is an empty directory. Nothing is written.
    ///
    /// - Throws: `FileSystemError` naming the destination and why it cannot be used.
    public static func checkedDestination(_ destination: String) throws -> (path: String, existing: FileStatus?) {
        // Trimmed and split on the byte "/" (a "/" followed by a combining mark is one Character).
        var target = RelativePath.trimmingTrailingSlashes(destination)
        let last = RelativePath.lastComponent(of: target)
        guard !target.isEmpty, !Self.isDotOrRoot(target) else {
            throw FileSystemError(
                .create, path: destination,
                reason:
                    "name the destination directory itself (unpack puts a new tree in its place, and '\(last.isEmpty ? destination : last)' cannot be replaced)")
        }
        // A DEST given as a symbolic link means the directory it names (as unzip -d takes it).
        target = try FileSystem.followingFinalSymbolicLinks(target)
        target = RelativePath.trimmingTrailingSlashes(target)
        if Self.isDotOrRoot(target) {
            throw FileSystemError(
                .create, path: destination,
                reason: "it leads to '\(target)': name the destination directory itself (unpack puts a new tree in its place)")
        }
        let existing = try FileSystem.statusIfExists(target)
        if let existing {
            guard existing.kind == .directory else {
                throw FileSystemError(
                    .create, path: target, errno: .fileExists,
                    reason: "the destination exists and is a \(existing.kind), not a directory")
            }
            let handle = try FileDescriptor.openDirectory(target)
            guard try DirectoryListing.names(in: handle).isEmpty else {
                throw FileSystemError(
                    .create, path: target, errno: .directoryNotEmpty, reason: "the destination exists and is not empty")
            }
        }
        return (target, existing)
    }

    /// Whether `path` ends in a "." or ".." component or is "/", by bytes.
    private static func isDotOrRoot(_ path: String) -> Bool {
        let last = RelativePath.lastComponent(of: path)
        return PathOrder.sameBytes(last, ".") || PathOrder.sameBytes(last, "..") || PathOrder.sameBytes(path, "/")
    }

    /// Checks, before anything is written, that the staging root can be given the owner and
    /// group of the existing, empty destination it will replace: gives it to them and back
    /// (only root can give a directory to another user; others only to a group they are
    /// in). Otherwise unpack stops here, with nothing written.
    private static func checkOwner(
        of existing: FileStatus, canBeGivenTo root: borrowing FileDescriptor, from own: FileStatus, destination: String
    ) throws {
        guard own.userID != existing.userID || own.groupID != existing.groupID else { return }
        do {
            try root.setOwner(userID: existing.userID, groupID: existing.groupID)
            try root.setOwner(userID: own.userID, groupID: own.groupID)
        } catch {
            throw FileSystemError(
                .setOwner, path: destination, errno: error.errno,
                reason:
                    "the existing destination belongs to user \(existing.userID), group \(existing.groupID), and the unpacked tree cannot be given to them (unpack into a new directory instead)"
            )
        }
    }

    /// Writes the whole tree into the (empty, new) directory `root`, in the order that never
    /// writes through a link: directories, files, links, then the directories' own modes and
    /// times.
    private func populate(
        _ root: borrowing FileDescriptor, displayRoot: String, workers: Int, durability: Durability,
        progress: (@Sendable (Int64) -> Void)?, cancellation: SaveCancellation?
    ) throws -> ExtractReport {
        let directories = tree.directoriesInPreorder()
        try makeDirectories(directories, root: root, displayRoot: displayRoot)
        let written = try writeFiles(
            root: root.rawValue, displayRoot: displayRoot, workers: workers, durability: durability, progress: progress,
            cancellation: cancellation)
        if cancellation?.isCancelled == true { throw CancellationError() }
        let links = try makeLinks(root: root.rawValue, displayRoot: displayRoot)
        try finishDirectories(directories, root: root, displayRoot: displayRoot, durability: durability)
        return ExtractReport(files: written.files, directories: directories.count, links: links, bytes: written.bytes)
    }

    /// Directories first, parents before children (explicit ones and the implied parents
    /// of entries), each made through its parent's descriptor, owner-only until finished.
    private func makeDirectories(_ directories: [Int32], root: borrowing FileDescriptor, displayRoot: String) throws {
        let maker = DirectoryWalk(tree: tree, root: root, displayRoot: displayRoot)
        for node in directories {
            let parentDescriptor = try maker.descriptor(of: tree.nodes[Int(node)].parent)
            do { try FileSystem.makeDirectory(tree.name(of: node), relativeTo: parentDescriptor, permissions: 0o700) } catch {
                if error.errno == .fileExists { throw twinRefusal(node, root: root.rawValue, displayRoot: displayRoot) }
                throw FileSystemError(.makeDirectory, path: maker.shown(node), errno: error.errno, reason: error.reason)
            }
            maker.enter(node)
        }
        try maker.finish()
    }

    /// Files, in parallel. Each is created exclusively, never through a link, and checked
    /// as it is written (`EntryReader`). Returns the files and bytes written.
    private func writeFiles(
        root rootDescriptor: Int32, displayRoot: String, workers: Int, durability: Durability,
        progress: (@Sendable (Int64) -> Void)?, cancellation: SaveCancellation?
    ) throws -> (files: Int, bytes: Int64) {
        let bytes = Atomic<Int64>(0)
        let files = Atomic<Int>(0)
        try forEachEntryInParallel(workers: workers, skipDirectories: true) { entry, reader in
            guard entry.kind == .regular else { return }
            if cancellation?.isCancelled == true { throw CancellationError() }
            let file = try self.createFile(entry, root: rootDescriptor, displayRoot: displayRoot)
            try reader.read(entry, file: self.file, archivePath: self.path) { chunk in
                // Each chunk, so that a large entry does not hold the stop back.
                if cancellation?.isCancelled == true { throw CancellationError() }
                try file.write(chunk)
                progress?(Int64(chunk.count))
            }
            try file.setPermissions(entry.permissions)
            try file.setModificationTime(entry.modificationTime)
            if durability == .full { try file.sync() }
            try file.close()
            bytes.add(entry.uncompressedSize, ordering: .relaxed)
            files.add(1, ordering: .relaxed)
        }
        return (files.load(ordering: .relaxed), bytes.load(ordering: .relaxed))
    }

    /// Links last: no file or directory is ever created after a link exists. Returns the
    /// links made.
    private func makeLinks(root rootDescriptor: Int32, displayRoot: String) throws -> Int {
        var links = 0
        for entry in entries where entry.kind == .symbolicLink {
            guard let target = entry.linkTarget else { continue }
            do {
                try FileSystem.makeSymbolicLink(entry.relativePath.string, target: target, relativeTo: rootDescriptor)
                try FileSystem.setModificationTime(entry.relativePath.string, entry.modificationTime, relativeTo: rootDescriptor)
            } catch {
                if error.errno == .fileExists {
                    throw twinRefusal(tree.nodeOfEntry[entry.index], root: rootDescriptor, displayRoot: displayRoot)
                }
                throw FileSystemError(error.operation, path: displayRoot + "/" + entry.path, errno: error.errno, reason: error.reason)
            }
            links += 1
        }
        return links
    }

    /// Directory modes and times last, deepest first, each through its own descriptor
    /// while its parent is still open to its owner: a 0000 directory is finished last.
    private func finishDirectories(
        _ directories: [Int32], root: borrowing FileDescriptor, displayRoot: String, durability: Durability
    ) throws {
        let tree = self.tree
        let entries = self.entries
        let finisher = DirectoryWalk(tree: tree, root: root, displayRoot: displayRoot) { node, directory in
            let item = tree.nodes[Int(node)]
            let entry = item.entry >= 0 ? entries[Int(item.entry)] : nil
            do {
                try directory.setPermissions(entry?.permissions ?? 0o755)
                if let entry { try directory.setModificationTime(entry.modificationTime) }
                if durability == .full { try directory.sync() }
            } catch let error as FileSystemError {
                throw FileSystemError(
                    error.operation, path: displayRoot + "/" + tree.path(of: node).string, errno: error.errno, reason: error.reason)
            }
        }
        for node in directories {
            _ = try finisher.descriptor(of: tree.nodes[Int(node)].parent)
            finisher.enter(node)
        }
        try finisher.finish()
    }

    /// Creates `entry`'s file, exclusively and never through a link.
    private func createFile(_ entry: ZipEntry, root: Int32, displayRoot: String) throws -> FileDescriptor {
        do {
            return try FileDescriptor.openWithoutSymlinks(
                entry.relativePath.string, relativeTo: root, access: .writeOnly, options: [.create, .exclusive],
                permissions: 0o600, beneath: true, displayPath: displayRoot + "/" + entry.path)
        } catch {
            if error.errno == .fileExists {
                throw twinRefusal(tree.nodeOfEntry[entry.index], root: root, displayRoot: displayRoot)
            }
            throw error
        }
    }

    /// The refusal for `node`, whose name was already taken when it was created: the
    /// staging directory holds only what this extraction made, from distinct paths, so
    /// the destination's file system took two of the archive's names for one (it folds
    /// case, like vfat, exFAT and ext4 with casefold, or normalises Unicode). Names the
    /// entry that took it: a sibling whose name is equal once case and normalisation are
    /// folded, else one the file system shows as the same file.
    func twinRefusal(_ node: Int32, root: Int32, displayRoot: String) -> ZipError {
        let item = tree.nodes[Int(node)]
        func stored(_ node: Int32) -> String {
            let entry = tree.nodes[Int(node)].entry
            return entry >= 0 ? entries[Int(entry)].name : tree.path(of: node).string + "/"
        }
        // Folded on purpose (`lowercased`, `String ==`'s canonical equivalence): this only
        // names, for the message, the sibling a folding file system took for this one.
        let mine = tree.name(of: node).lowercased()
        let siblings = tree.children(of: item.parent).filter { $0 != node }
        var twin = siblings.first { tree.name(of: $0).lowercased() == mine }
        if twin == nil, let taken = try? FileSystem.status(tree.path(of: node).string, relativeTo: root) {
            twin = siblings.first { sibling in
                guard let status = try? FileSystem.status(tree.path(of: sibling).string, relativeTo: root) else { return false }
                return status.inode == taken.inode && status.device == taken.device
            }
        }
        let other = twin.map { "entry '\(ZipError.printable(stored($0)))'" } ?? "another entry"
        return ZipError(
            .ambiguous, archive: path, entry: stored(node),
            "on '\(displayRoot)' it names the same file as \(other): the destination's file system folds case or Unicode normalisation (refused rather than writing one over the other)"
        )
    }
}
