/// A directory on disk as the new tree: `pkgtool save SRC PKG`, like `rsync -a --delete
/// SRC/ PKG/` but crash-safe and atomic as the strategy promises.
///
/// Scanned on all cores; its files' hashes come from the package manifest's source stamps
/// (the stat data of each source file when it was last saved from) when those still match,
/// so unchanged source files are not reread. Symbolic links in the directory are saved as
/// links, never followed; FIFOs, sockets and devices are skipped with a note; the
/// package's own `.pkgtool` is never package content.
public struct DirectorySource: SaveSource {
    /// The directory, as the caller named it (a symbolic link to a directory is followed).
    public let path: String

    /// Entries of the directory left out of the package (`--exclude`): a package already
    /// holding one loses it, as it loses anything else the directory lacks.
    public var exclusions: PathExclusions

    /// The directory at `path` as the tree to save, without what `exclusions` names.
    public init(_ path: String, excluding exclusions: PathExclusions = .none) {
        self.path = path
        self.exclusions = exclusions
    }

    /// Refuses a path that is not a directory, and a directory that contains the package or
    /// lies inside it (saving a tree into itself would copy forever).
    ///
    /// - Complexity: one `stat` and one `realpath`.
    public func validate(for package: PackageLocation) throws {
        let status = try FileSystem.status(path, followSymlinks: true)
        guard status.kind == .directory else {
            throw SaveRefusal(path: path, reason: .sourceNotADirectory(status.kind))
        }
        // Saving a tree into itself (or a package into its own source) would copy forever.
        let source = try FileSystem.realPath(path)
        if PathOrder.sameBytes(source, package.path) || PathOrder.hasBytePrefix(source, package.path + "/")
            || PathOrder.hasBytePrefix(package.path, source + "/")
        {
            throw SaveRefusal(path: path, reason: .nested(other: "\(package)"))
        }
    }

    /// - Complexity: one `getdents64` per directory, one `fstatat` per entry, and one
    ///   streamed read per file whose source stamp does not vouch for it.
    public func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        let rootStatus = try FileSystem.status(path, followSymlinks: true)
        var scanner = TreeScanner(
            workers: context.options.workers, knownHash: context.manifest?.sourceHashLookup,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        if let cancellation = context.options.cancellation { scanner.isCancelled = { cancellation.isCancelled } }
        scanner.exclusions = exclusions
        scanner.previousChunks = context.manifest?.chunkHints
        scanner.recordedContent = context.manifest?.sourceContentLookup
        // Which files were read is not needed: the plan knows the racy stamps from the manifest.
        scanner.recordsHashedPaths = false
        var scan = try scanner.scan(path)
        let rootHash = scan.snapshot.rootHash
        // Taken out of the scan, so that stamping the entries below changes them in place
        // instead of copying a million of them.
        var entries = scan.snapshot.entries
        scan.snapshot = .empty
        for index in entries.indices where entries[index].kind == .regular {
            let entry = entries[index]
            entries[index].source = SourceStamp(
                device: entry.device, inode: entry.inode, modificationTime: entry.modificationTime,
                changeTime: entry.changeTime)
        }
        let notes = scan.skipped.map {
            "skipped '\(RelativePath.join(path, $0.path))': a \($0.kind) is not package content"
        }
        return SourceTree(
            snapshot: TreeSnapshot(entries: entries, rootHash: rootHash), contentDirectory: path,
            rootPermissions: rootStatus.permissions, rereadsRacySourceStamps: true, filesHashed: scan.filesHashed,
            bytesHashed: scan.bytesHashed, notes: notes)
    }
}
