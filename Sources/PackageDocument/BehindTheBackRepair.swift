import Foundation
import PackageCore

/// A stopgap around the save engine's handling of files of a package changed behind the
/// back of a tree read from it (NOTES.md, 2026-12-02 doc → lead), so that a document save
/// never succeeds leaving a package `pkgtool verify` calls damaged. To be removed once the
/// engine does it itself:
///
/// - the engine's save of a tree's edited parts can fail on such a file ("it was removed
///   or moved after the package was opened", "it changed after the package was opened"):
///   the save is then made again comparing the whole tree with the package checked on disk
///   (`trustManifest: false`), which reconciles the tree first;
/// - a save that dropped such a file (its notes say "behind the document's back") can leave
///   a manifest whose entry count is off: the package is then recorded afresh
///   (`PackageScan` and a new manifest index), under the lock the host holds.
///
/// Both happen only after someone changed the package behind the document's back; an
/// ordinary save costs nothing more.
enum BehindTheBackRepair {
    /// `FileWrapper.write(to:options:originalContentsURL:saveOptions:)`, repaired as above
    /// for a save in place. Returns the engine's statistics.
    ///
    /// - Complexity: an ordinary save's; after a change behind the back, one more save of the
    ///   whole tree (a stat per package entry) and a scan of the package (files the manifest
    ///   cannot vouch for are read).
    static func write(
        _ wrapper: FileWrapper, to destination: URL, options: FileWrapper.WritingOptions, originalContentsURL: URL?,
        saveOptions: SaveOptions
    ) throws -> SaveStatistics {
        guard originalContentsURL != nil, wrapper.isDirectory else {
            return try wrapper.write(
                to: destination, options: options, originalContentsURL: originalContentsURL, saveOptions: saveOptions
            ).statistics
        }
        var statistics: SaveStatistics
        do {
            statistics = try wrapper.write(
                to: destination, options: options, originalContentsURL: originalContentsURL, saveOptions: saveOptions
            ).statistics
        } catch let error as FileSystemError where isBehindTheBack(error) {
            var checked = saveOptions
            checked.trustManifest = false
            statistics = try wrapper.write(
                to: destination, options: options, originalContentsURL: originalContentsURL, saveOptions: checked
            ).statistics
            statistics.notes.append("\(error); saved again after checking the package")
        }
        if statistics.notes.contains(where: { $0.contains("behind the document's back") }) {
            let path = DocumentError.displayPath(destination)
            let scan = try PackageScan.scan(path, useManifest: false, workers: saveOptions.workers)
            try PackageManifest.writeIndex(scan.snapshot, packagePath: path, durability: saveOptions.durability)
            statistics.notes.append("the package's manifest was recorded afresh after changes behind the document's back")
        }
        return statistics
    }

    /// Whether `error` is the engine finding a file of the tree changed since it was read.
    static func isBehindTheBack(_ error: FileSystemError) -> Bool {
        error.reason?.contains("after the package was opened") == true
    }
}
