/// Which version of a conflict a package keeps (`pkgtool resolve PKG PATH --keep …`).
public enum ConflictKeep: String, Sendable, Hashable, CaseIterable {
    /// This package's side: the conflict versions of the other side are dropped (a local
    /// conflict version, kept when the tree took the other side, is restored).
    case local
    /// The other side: its conflict version replaces what the tree holds at the path.
    case other
    /// Both: the tree keeps what it holds, and the conflict version is written beside it as
    /// a conflict copy (`ConflictCopyName`: `name (conflict 2026-12-06 host).ext`).
    case both
}

/// Resolving conflicts a merge left in a package: no network, one ordinary save.
public enum ConflictResolver {
    /// The conflict versions the package at `packagePath` lists, in path order.
    /// - Throws: `ConflictListRefusal` when its record cannot be read.
    /// - Complexity: one read of `.pkgtool/conflicts/list`.
    public static func conflicts(of packagePath: String) throws -> [ConflictVersion] {
        try ConflictStore.list(packagePath: packagePath).versions
    }

    /// Where the bytes of a conflict version that is a file are kept in the package, to
    /// read or show them (as `NSFileVersion.url`); nil for a deletion, a folder or a link
    /// (a link's target is `linkTarget`). The version the package holds at the path is
    /// the package's own file there (`currentPath(of:in:)`).
    /// - Parameters:
    ///   - version: a conflict version `conflicts(of:)` listed.
    ///   - packagePath: the package.
    /// - Complexity: no I/O: the bytes are named by their content hash and size, and were
    ///   checked against both when they were kept.
    public static func contentPath(of version: ConflictVersion, in packagePath: String) -> String? {
        guard version.kind == .file else { return nil }
        return ConflictStore.contentPath(packagePath, hash: version.hash, size: version.size)
    }

    /// The base version of a conflict: what both sides last shared at its path, when the
    /// merge that made the conflict knew it (a sync does; another local writer does not),
    /// its bytes kept in the package like the conflict version's (`contentPath(of:in:)`).
    /// - Parameters:
    ///   - version: a conflict version `conflicts(of:)` listed.
    ///   - packagePath: the package.
    /// - Throws: `ConflictListRefusal` when the record cannot be read.
    public static func base(of version: ConflictVersion, in packagePath: String) throws -> ConflictVersion? {
        try ConflictStore.list(packagePath: packagePath).base(at: version.path)
    }

    /// The path of the version the package's tree holds where `version` conflicts: the
    /// other side of the conflict (nil when the tree holds nothing there).
    /// - Parameters:
    ///   - version: a conflict version `conflicts(of:)` listed.
    ///   - packagePath: the package.
    public static func currentPath(of version: ConflictVersion, in packagePath: String) -> String? {
        let path = PackageLayout.joined(packagePath, version.path.string)
        let status = (try? FileSystem.statusIfExists(path)) ?? nil
        return status == nil ? nil : path
    }

    /// Settles the conflict versions at `path` and beneath it: per `keep`, the package's
    /// tree is brought to the version kept (restored from `.pkgtool/conflicts/`, checked as
    /// the engine writes it), and their records are removed — with one save, the record in
    /// its commit.
    ///
    /// - Parameters:
    ///   - packagePath: the package.
    ///   - path: the conflicting path (a folder settles every version beneath it).
    ///   - keep: which version the package keeps: its own, the other side's, or both (the
    ///     other's beside it under a conflict-copy name).
    ///   - day: the date that conflict copy's name carries.
    ///   - host: the host name it carries.
    ///   - options: how the save runs (strategy, durability, workers).
    /// - Returns: the conflict versions settled, and the paths written (a copy's for `both`).
    /// - Throws: `ConflictListRefusal` when no conflict is listed at `path` or the record is
    ///   unusable; the save's errors (a package changed meanwhile is refused, untouched).
    /// - Complexity: a scan of the package, then a save writing the restored entries.
    @discardableResult
    public static func resolve(
        _ packagePath: String, path: RelativePath, keep: ConflictKeep, day: CalendarDay, host: String,
        options: SaveOptions = SaveOptions()
    ) throws -> (settled: [ConflictVersion], written: [RelativePath]) {
        var warnings: [String] = []
        var list = ConflictList()
        let scan = try PackageAccess.reading(packagePath, warn: { warnings.append($0) }) {
            list = try ConflictStore.list(packagePath: packagePath)
            return try PackageScan.scan(packagePath, workers: options.workers)
        }
        let settled = list.versions(under: path)
        guard !settled.isEmpty else {
            throw ConflictListRefusal("'\(packagePath)' lists no conflict at '\(path.string)'")
        }
        let remaining = list.removing(under: path)
        let settledBases = list.bases.filter { ConflictVersion.isSameOrBeneath($0.path, path) }
        let current = scan.snapshot
        let choice = Restoration(settled, at: path, keep: keep, day: day, host: host, current: current)
        var entries = current.entries.filter { entry in
            guard let removeAt = choice.removeAt else { return true }
            return !ConflictVersion.isSameOrBeneath(RelativePath(trusted: entry.path), removeAt)
        }
        let (origins, written) = try addRestored(choice, to: &entries, packagePath: packagePath)
        addMissingParents(of: written, to: &entries)
        let tree = TreeSnapshot.assemble(entries)
        let contents = contentOrigins(of: tree, restored: origins, current: current, packagePath: packagePath)
        let rootPermissions = try FileSystem.status(packagePath, followSymlinks: true).permissions
        var saveOptions = options
        saveOptions.trustManifest = scan.manifest?.snapshot.rootHash == current.rootHash
        saveOptions.conflictsRecord = remaining.encoded()
        saveOptions.requiredCurrentRoot = current.rootHash
        try PackageSaver.save(
            FixedTreeSource(tree: SourceTree(snapshot: tree, contents: contents, rootPermissions: rootPermissions)),
            to: packagePath, options: saveOptions)
        removeSettledContents(of: settled + settledBases, remaining: remaining, packagePath: packagePath)
        return (settled, written)
    }

    /// The versions to write, and where: in place of what the tree holds at the path
    /// (`local`, `other`), or beside it under a conflict-copy name (`both`).
    private struct Restoration {
        var restore: [ConflictVersion] = []
        /// Where the tree's own entries give way to the restored ones.
        var removeAt: RelativePath?
        /// Where the conflict copy's top entry goes (`both`).
        var copyRoot: RelativePath?

        init(
            _ settled: [ConflictVersion], at path: RelativePath, keep: ConflictKeep, day: CalendarDay, host: String,
            current: TreeSnapshot
        ) {
            switch keep {
            case .local:
                restore = settled.filter { $0.side == .local }
                if !restore.isEmpty { removeAt = path }
            case .other:
                restore = settled.filter { $0.side == .other }
                if !restore.isEmpty { removeAt = path }
            case .both:
                restore = settled.filter { $0.kind != .deleted && $0.side != .base }
                if let top = restore.first {
                    copyRoot = ConflictCopyName.path(for: top.path, day: day, host: host, avoiding: current)
                }
            }
        }
    }

    /// Adds the restored versions to `entries` and returns where each restored file's bytes
    /// are kept (checked against their stat data as the engine writes them) and the paths
    /// written.
    private static func addRestored(
        _ choice: Restoration, to entries: inout [SnapshotEntry], packagePath: String
    ) throws -> (origins: [RelativePath: ContentOrigin], written: [RelativePath]) {
        let restore = choice.restore
        var origins: [RelativePath: ContentOrigin] = [:]  // names are bytes
        var written: [RelativePath] = []
        for version in restore where version.kind != .deleted {
            var target = version.path
            if let copyRoot = choice.copyRoot, let top = restore.first {
                let suffix = PathOrder.droppingBytes(top.path.string.utf8.count, from: version.path.string)
                target = RelativePath(trusted: copyRoot.string + suffix)
            }
            let kind: FileKind = version.kind == .file ? .regular : version.kind == .directory ? .directory : .symbolicLink
            entries.append(
                SnapshotEntry(
                    path: target.string, kind: kind, permissions: version.permissions, size: version.size, hash: version.hash,
                    linkTarget: version.linkTarget))
            written.append(target)
            if version.kind == .file {
                if version.size == 0 {
                    origins[target] = .bytes([])
                } else {
                    let status = try ConflictStore.contentStatus(packagePath: packagePath, hash: version.hash, size: version.size)
                    origins[target] = .file(
                        path: ConflictStore.contentPath(packagePath, hash: version.hash, size: version.size), seen: status)
                }
            }
        }
        return (origins, written)
    }

    /// Parents a restored entry needs and the tree lacks (a deleted folder) come back as folders.
    private static func addMissingParents(of written: [RelativePath], to entries: inout [SnapshotEntry]) {
        var present = Set(entries.map { RelativePath(trusted: $0.path) })
        for target in written {
            var parent = target.parent
            while !parent.isRoot, present.insert(parent).inserted {
                entries.append(
                    SnapshotEntry(path: parent.string, kind: .directory, permissions: 0o755, size: 0, hash: ContentHash(high: 0, low: 0)))
                parent = parent.parent
            }
        }
    }

    /// Where each file of `tree` comes from: a restored version's kept bytes, or the
    /// package's own file with the stat data the scan saw (a file changed since refuses the
    /// save).
    private static func contentOrigins(
        of tree: TreeSnapshot, restored origins: [RelativePath: ContentOrigin], current: TreeSnapshot, packagePath: String
    ) -> [ContentOrigin?] {
        var currentByPath: [RelativePath: SnapshotEntry] = [:]  // names are bytes
        for entry in current.entries { currentByPath[RelativePath(trusted: entry.path)] = entry }
        return tree.entries.map { entry -> ContentOrigin? in
            guard entry.kind == .regular else { return nil }
            if let origin = origins[RelativePath(trusted: entry.path)] { return origin }
            guard let old = currentByPath[RelativePath(trusted: entry.path)] else { return nil }
            return .file(
                path: PackageLayout.joined(packagePath, entry.path),
                seen: FileStatus(
                    kind: .regular, permissions: old.permissions, size: old.size, modificationTime: old.modificationTime,
                    changeTime: old.changeTime, inode: old.inode, device: old.device))
        }
    }

    /// The settled contents no remaining version names are no longer needed (best effort).
    private static func removeSettledContents(
        of versions: [ConflictVersion], remaining: ConflictList, packagePath: String
    ) {
        let stillNamed = Set(
            remaining.lines.filter { $0.kind == .file }.map {
                RelativePath(trusted: ConflictStore.contentName($0.hash, size: $0.size))
            })
        for version in versions where version.kind == .file && version.size > 0 {
            let name = ConflictStore.contentName(version.hash, size: version.size)
            guard !stillNamed.contains(RelativePath(trusted: name)),
                let folder = try? ConflictStore.openFolder(packagePath: packagePath)
            else { continue }
            try? FileSystem.remove(name, relativeTo: folder.rawValue)
        }
    }
}

/// A tree given whole, with its contents' origins.
struct FixedTreeSource: SaveSource {
    let tree: SourceTree
    func wholeTree(in context: SaveSourceContext) throws -> SourceTree { tree }
}
