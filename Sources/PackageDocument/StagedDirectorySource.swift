/// A package a custom writer wrote into a staging folder, as the new tree of a save into the
/// document's package: scanned and hashed as `DirectorySource` does, and its files then
/// *moved* into the package (`ContentOrigin.adopt`) instead of copied — the host owns the
/// staging folder and nobody writes there any more, so the bytes the scan hashed are the
/// bytes that move. Where the staging folder is on another file system, the engine copies.
import PackageCore

struct StagedDirectorySource: SaveSource {
    let directory: DirectorySource

    init(_ path: String) { directory = DirectorySource(path) }

    func validate(for package: PackageLocation) throws {
        try directory.validate(for: package)
    }

    /// - Complexity: `DirectorySource`'s (a stat per entry, each file read once to hash it).
    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        var tree = try directory.wholeTree(in: context)
        guard let root = tree.contentDirectory else { return tree }
        // Every file is in the staging folder, with the stat data the scan saw.
        tree.contents = tree.snapshot.entries.map { entry in
            guard entry.kind == .regular else { return nil }
            return .adopt(
                path: RelativePath.join(root, entry.path),
                verified: FileStatus(
                    kind: .regular, permissions: entry.permissions, size: entry.size,
                    modificationTime: entry.modificationTime, changeTime: entry.changeTime, inode: entry.inode,
                    device: entry.device))
        }
        tree.contentDirectory = nil
        return tree
    }
}
