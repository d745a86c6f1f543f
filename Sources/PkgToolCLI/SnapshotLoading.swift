import PackageCore
import PackageZip

/// Turns a command-line path into a snapshot: a package directory (using its manifest's
/// stat cache when it has a sound one) or a ZIP archive.
package enum SnapshotLoading {
    package struct Loaded {
        package var snapshot: TreeSnapshot
        package var description: String
    }

    /// Loads `path`: a directory's scan (a package's with its manifest as stat cache) or an
    /// archive's tree.
    package static func load(_ path: String, workers: Int, console: Console) throws
        -> Loaded
    {
        let status = try HashCommand.resolve(path)
        switch status.kind {
        case .directory:
            let scan = try PackageAccess.reading(path, warn: { console.warning($0) }) {
                try PackageScan.scan(path, workers: workers, keepingManifest: false, recordingHashedPaths: false)
            }
            report(scan, root: path, console: console)
            return Loaded(snapshot: scan.snapshot, description: path)
        case .regular:
            // An archive's tree: our content hashes where the archive has them, the others
            // read and hashed (so that a zip from any tool compares exactly).
            let archive = try ZipArchive.open(path)
            return Loaded(snapshot: try archive.snapshot(computingMissingHashes: true), description: path)
        default:
            throw FileSystemError(.open, path: path, reason: "not a package directory or ZIP archive")
        }
    }

    /// Loads two sides, `first` and `second` in that order in the result. A package is
    /// loaded before a plain folder or archive: its scan holds its manifest beside the tree
    /// it builds, the largest moment of the two loads, and is then better taken while the
    /// other side's tree is not yet held (at a million files, about a third of the peak).
    package static func loadPair(_ first: String, _ second: String, workers: Int, console: Console) throws
        -> (first: TreeSnapshot, second: TreeSnapshot)
    {
        if holdsManifest(second) && !holdsManifest(first) {
            let loadedSecond = try load(second, workers: workers, console: console).snapshot
            ProcessEnvironment.releaseFreeMemory()
            return (try load(first, workers: workers, console: console).snapshot, loadedSecond)
        }
        let loadedFirst = try load(first, workers: workers, console: console).snapshot
        ProcessEnvironment.releaseFreeMemory()
        return (loadedFirst, try load(second, workers: workers, console: console).snapshot)
    }

    /// Whether `path` is a directory with a manifest (only an ordering hint: `load` reads it).
    private static func holdsManifest(_ path: String) -> Bool {
        let index = PackageLayout.joined(PackageLayout.metadataDirectory(of: path), PackageLayout.indexFileName)
        return (try? FileSystem.statusIfExists(index))??.kind == .regular
    }

    /// Refuses a command-line path that is not a directory (following a link given as the path).
    static func requireDirectory(_ path: String) throws {
        guard try HashCommand.resolve(path).kind == .directory else {
            throw FileSystemError(.open, path: path, reason: "not a package directory")
        }
    }

    /// Warnings a scan produced: skipped special files, an untrustworthy manifest.
    static func report(_ scan: PackageScan, root: String, console: Console) {
        if let problem = scan.manifestProblem {
            console.warning("\(problem); hashing every file instead (rebuild it with 'pkgtool manifest \(root)')")
        }
        reportSkipped(scan.result, root: root, console: console)
    }

    static func reportSkipped(_ result: TreeScanner.Result, root: String, console: Console) {
        for skipped in result.skipped {
            console.warning(
                "skipped '\(PackageLayout.joined(root, skipped.path))': a \(skipped.kind) is not package content")
        }
    }
}
