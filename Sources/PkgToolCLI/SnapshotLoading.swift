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
                try PackageScan.scan(path, workers: workers, keepingManifest: false)
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
