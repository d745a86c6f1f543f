import Foundation
import PackageCore

/// What a save in place found another writer had saved to the package since the document
/// read it or last saved it (another `DocumentSession`, another process, `pkgtool save`),
/// and how the two were merged (Specs/document.md, "Other writers").
///
/// The merge is PackageCore's `TreeMerge` — the one sync uses — of three trees: the base
/// (the package's manifest as the document read or last saved it), the document's tree (the
/// wrapper its writer returned) and the package on disk now. Changes of the other writer
/// only are taken into the wrapper (so the save keeps them); files both changed keep the
/// document's version, and the other writer's becomes a conflict version, kept in the
/// package's `.pkgtool/conflicts/` before the save whose commit lists it.
struct OtherWriterMerge: Sendable {
    /// The conflict versions this merge added.
    var conflicts: [ConflictVersion] = []
    /// Entries of the merged tree taken from the other writer's version.
    var entriesFromOther = 0
    /// What a person should know, for the save's statistics.
    var notes: [String] = []
    /// The package's conflicts record with this merge's versions added, for the save's
    /// commit (`SaveOptions.conflictsRecord`); nil when nothing was added.
    var conflictsRecord: [UInt8]?

    /// The version field of a conflict version kept from another local writer: not a
    /// remote's version (64 hexadecimal zeros).
    static let localWriterVersion = String(repeating: "0", count: 64)

    /// Merges what another writer saved into `wrapper`, about to be saved in place to the
    /// package at `packagePath`, whose state the document last knew as `base`. Runs under
    /// the package's exclusive lock. Returns nil when nobody else saved meanwhile (the
    /// package's manifest still describes `base`), or when the document's tree cannot be
    /// described (a file it holds vanished and `base` does not know it: the save then goes
    /// on as before, Specs/document.md, "Files changed behind the document's back").
    ///
    /// - Parameters:
    ///   - wrapper: the directory wrapper the writer returned; changed in place.
    ///   - packagePath: the package, as saved in place.
    ///   - base: the package's tree as the document read it or last saved it.
    ///   - durability: for the conflict versions' bytes kept before the save.
    ///   - contentMerge: the app's merge of the files it covers (base's bytes are not at hand
    ///     here: the other writer replaced them), or nil.
    /// - Throws: `FileSystemError` or `ConflictListRefusal` (an unusable conflicts record, a
    ///   conflict version's bytes changed as they were kept): the save fails, its snapshot
    ///   stays pending.
    /// - Complexity: one load of the manifest when nobody else saved. Otherwise a scan of
    ///   the package (one `lstat` per entry, files the manifest does not vouch for hashed),
    ///   the tree's snapshot, one merge walk, and one copy of each conflicting file.
    static func merge(
        into wrapper: FileWrapper, packagePath: String, base: TreeSnapshot, durability: Durability,
        contentMerge: ContentMerge? = nil
    ) throws -> OtherWriterMerge? {
        guard let other = try changedPackage(at: packagePath, since: base),
            let local = try? wrapper.mergeSnapshot(packagePath: packagePath, base: base)
        else { return nil }
        var mergedContents: [RelativePath: [UInt8]] = [:]
        var failure: (any Error)?
        let merged = TreeMerge(base: base, local: local, other: other) { conflict in
            guard failure == nil, let contentMerge, contentMerge.applies(to: conflict),
                let mine = node(at: conflict.path, in: wrapper)?.child.regularFileContents
            else { return nil }
            do {
                let theirs = try Data(contentsOf: URL(fileURLWithPath: PackageLayout.joined(packagePath, conflict.path.string)))
                guard let bytes = try contentMerge.merge(conflict.path, base: nil, local: Array(mine), other: Array(theirs))
                else { return nil }
                mergedContents[conflict.path] = bytes
                return .use(ContentMerge.entry(for: bytes, resolving: conflict))
            } catch {
                failure = error
                return nil
            }
        }
        if let failure { throw failure }
        var result = OtherWriterMerge()
        try takeOthersChanges(merged, local: local, into: wrapper, packagePath: packagePath)
        for (path, bytes) in mergedContents {
            guard let (parent, child) = node(at: path, in: wrapper) else { continue }
            parent.removeFileWrapper(child)
            let file = FileWrapper(regularFileWithContents: Data(bytes))
            file.preferredFilename = RelativePath.lastComponent(of: path.string)
            parent.addFileWrapper(file)
            result.notes.append("'\(path.string)' was also changed by another writer: the two versions were merged by the app")
        }
        try result.keepConflicts(of: merged, packagePath: packagePath, durability: durability)
        return result
    }

    /// Whether someone else saved the package at `packagePath` since the document knew it
    /// as `base`: the package as it is now when so, else nil. Call under the exclusive lock.
    ///
    /// - Complexity: one load of the manifest; when it moved on, a scan of the package.
    static func changedPackage(at packagePath: String, since base: TreeSnapshot) throws -> TreeSnapshot? {
        if let manifest = (try? PackageManifest.load(packagePath: packagePath)) ?? nil,
            manifest.snapshot.rootHash == base.rootHash
        {
            return nil
        }
        let other = try PackageScan.scan(packagePath).snapshot
        return other.rootHash == base.rootHash ? nil : other
    }

    /// Records `merged`'s conflicts as conflict versions: the other writer's version of each
    /// (its bytes kept in the package now, before the save that lists them), or the
    /// document's deletion where the other writer's version stays in the tree; and the
    /// record the save commits, and the notes.
    mutating func keepConflicts(of merged: TreeMerge, packagePath: String, durability: Durability) throws {
        entriesFromOther = merged.sources.filter { $0 == .other }.count
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        for conflict in merged.conflicts {
            if merged.source(of: conflict.path) == .other || conflict.local == nil {
                // The document deleted what the other writer changed: the other's version
                // stays in the package, the document's deletion is recorded.
                conflicts.append(
                    ConflictVersion(
                        path: conflict.path, side: .local, entry: conflict.local, remoteVersion: Self.localWriterVersion,
                        time: now))
                notes.append(
                    "'\(conflict.path.string)' was deleted by the document and changed by another writer: the other "
                        + "writer's version was kept, the deletion is listed as a conflict version")
                continue
            }
            conflicts.append(
                ConflictVersion(
                    path: conflict.path, side: .other, entry: conflict.other, remoteVersion: Self.localWriterVersion, time: now))
            for entry in conflict.otherDescendants {
                conflicts.append(
                    ConflictVersion(
                        path: RelativePath(trusted: entry.path), side: .other, entry: entry,
                        remoteVersion: Self.localWriterVersion, time: now))
            }
            notes.append(
                "'\(conflict.path.string)' was also changed by another writer (\(conflict.kind.rawValue)): the document's "
                    + "version was saved, the other writer's is kept as a conflict version")
        }
        // The other writer's bytes, kept before the save that lists them (they are still on
        // disk: the save has not run yet).
        for version in conflicts where version.side == .other && version.kind == .file && version.size > 0 {
            try ConflictStore.keepContent(
                from: PackageLayout.joined(packagePath, version.path.string), hash: version.hash, size: version.size,
                packagePath: packagePath, durability: durability)
        }
        if !conflicts.isEmpty {
            conflictsRecord = try ConflictStore.list(packagePath: packagePath).adding(conflicts).encoded()
        }
        notes.insert(
            "another writer saved the package meanwhile: merged, \(entriesFromOther) entries taken from its version, "
                + "\(conflicts.count) conflict versions kept", at: 0)
    }

    /// Brings into `wrapper` the entries the merged tree takes from the other side: removes
    /// what the other writer deleted (and the document did not change), and puts the other
    /// writer's files, links and folders where the merged tree has them — each file as a
    /// wrapper of the package's file on disk, so the save leaves it as it is.
    private static func takeOthersChanges(
        _ merged: TreeMerge, local: TreeSnapshot, into wrapper: FileWrapper, packagePath: String
    ) throws {
        // Deleted on the other side only: gone from the merged tree (a folder with its subtree).
        var removedFolder: RelativePath?
        for entry in local.entries {
            let path = RelativePath(trusted: entry.path)
            if let removedFolder, ConflictVersion.isSameOrBeneath(path, removedFolder) { continue }
            guard merged.entry(at: path) == nil else { continue }
            if let (parent, child) = node(at: path, in: wrapper) { parent.removeFileWrapper(child) }
            if entry.kind == .directory { removedFolder = path }
        }
        for (index, entry) in merged.tree.entries.enumerated() where merged.sources[index] == .other {
            let path = RelativePath(trusted: entry.path)
            guard let parent = directory(at: path.parent, in: wrapper) else { continue }
            let name = RelativePath.lastComponent(of: entry.path)
            let existing = parent.fileWrapper(forKey: name)
            if entry.kind == .directory {
                if existing?.isDirectory == true { continue }
                if let existing { parent.removeFileWrapper(existing) }
                let folder = FileWrapper(directoryWithFileWrappers: [:])
                folder.preferredFilename = name
                parent.addFileWrapper(folder)
                continue
            }
            if let existing { parent.removeFileWrapper(existing) }
            let onDisk = try FileWrapper(url: URL(fileURLWithPath: PackageLayout.joined(packagePath, entry.path)))
            onDisk.preferredFilename = name
            parent.addFileWrapper(onDisk)
        }
    }

    /// The wrapper at `path` below `root`, with its directory; nil when there is none.
    private static func node(at path: RelativePath, in root: FileWrapper) -> (parent: FileWrapper, child: FileWrapper)? {
        guard !path.isRoot, let parent = directory(at: path.parent, in: root),
            let child = parent.fileWrapper(forKey: RelativePath.lastComponent(of: path.string))
        else { return nil }
        return (parent, child)
    }

    /// The directory wrapper at `path` below `root` (the root itself for the root path).
    private static func directory(at path: RelativePath, in root: FileWrapper) -> FileWrapper? {
        var current = root
        for component in RelativePath.components(of: path.string) {
            guard let child = current.fileWrapper(forKey: String(component)), child.isDirectory else { return nil }
            current = child
        }
        return current
    }
}

/// The tree a custom writer staged, merged with what another writer saved meanwhile, as the
/// new tree of the save into the document's package: each file from the staging folder
/// (moved in, as `StagedDirectorySource` does) or, where the merged tree takes the other
/// writer's version, from the package itself (left in place, since unchanged there).
struct MergedStagedSource: SaveSource {
    let tree: SourceTree

    /// - Parameters:
    ///   - merged: the merge of base, the staged tree and the package now.
    ///   - stagedPath: the staging folder's package the writer wrote.
    ///   - packagePath: the document's package.
    init(merged: TreeMerge, stagedPath: String, packagePath: String) throws {
        var contents: [ContentOrigin?] = []
        contents.reserveCapacity(merged.tree.entries.count)
        for (index, entry) in merged.tree.entries.enumerated() {
            guard entry.kind == .regular else {
                contents.append(nil)
                continue
            }
            let seen = FileStatus(
                kind: .regular, permissions: entry.permissions, size: entry.size, modificationTime: entry.modificationTime,
                changeTime: entry.changeTime, inode: entry.inode, device: entry.device)
            if merged.sources[index] == .other {
                contents.append(.file(path: PackageLayout.joined(packagePath, entry.path), seen: seen))
            } else {
                contents.append(.adopt(path: PackageLayout.joined(stagedPath, entry.path), verified: seen))
            }
        }
        let rootPermissions = try FileSystem.status(stagedPath, followSymlinks: true).permissions & 0o7777
        tree = SourceTree(snapshot: merged.tree, contents: contents, rootPermissions: rootPermissions)
    }

    /// The merged tree, with its contents' origins.
    func wholeTree(in context: SaveSourceContext) throws -> SourceTree { tree }
}
