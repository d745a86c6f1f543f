import Synchronization
@testable import PackageCore

/// The scans of a sweep fixture's source directories for the saves that set a package up
/// (`CrashConsistencyTests.Fixture.freshPackage`), shared by the thousands of packages a
/// sweep sets up.
///
/// A first save (no package yet, so no manifest to consult) gets from `DirectorySource` a
/// tree that depends on the directory alone, and the fixtures never change their sources
/// once made: the first scan of each serves every later first save. The saves under test,
/// and any save into an existing package, still scan for themselves. Should a source's
/// files change after all, the engine refuses the cached tree (its stat data moved), loudly.
final class FirstSaveScans: Sendable {
    private let trees = Mutex<[String: SourceTree]>([:])

    /// A source for a save of `directory` that reuses the first scan when the package does
    /// not exist yet.
    func source(_ directory: String) -> some SaveSource { Source(directory: DirectorySource(directory), scans: self) }

    private struct Source: SaveSource {
        let directory: DirectorySource
        let scans: FirstSaveScans

        func validate(for package: PackageLocation) throws { try directory.validate(for: package) }

        func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
            guard !context.packageExists, context.manifest == nil else { return try directory.wholeTree(in: context) }
            if let tree = scans.trees.withLock({ $0[directory.path] }) { return tree }
            let tree = try directory.wholeTree(in: context)
            scans.trees.withLock { $0[directory.path] = tree }
            return tree
        }
    }
}
