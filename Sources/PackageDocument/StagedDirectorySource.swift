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
        tree.contents = tree.contents.map { origin in
            if case .file(let path, let seen?)? = origin { return .adopt(path: path, verified: seen) }
            return origin
        }
        return tree
    }
}
