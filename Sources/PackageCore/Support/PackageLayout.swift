/// Names pkgtool itself uses inside and beside a package (Specs/manifest.md).
public enum PackageLayout {
    /// The one hidden entry pkgtool keeps inside a package: a directory holding the
    /// manifest (`index`, `delta.N`) and, during a journaled save, its journal. Scans,
    /// diffs, archives and FileWrapper trees leave it out: it is never package content.
    public static let metadataDirectoryName = ".pkgtool"

    /// The base manifest inside the metadata directory.
    package static let indexFileName = "index"

    /// The sync record inside the metadata directory: what the package was last pushed as
    /// or pulled from (`SyncRecordFile`, Specs/remote.md).
    package static let syncRecordFileName = "sync"

    /// The prefix of manifest delta files (`delta.000001`, …).
    package static let deltaFilePrefix = "delta."

    /// The path of the metadata directory of the package at `packagePath`.
    package static func metadataDirectory(of packagePath: String) -> String {
        joined(packagePath, metadataDirectoryName)
    }

    /// `parent/child`, without doubling a trailing slash.
    /// Whether `path` (a link followed) is a folder that holds entries but is no package:
    /// no `.pkgtool` directory in it. Saving, writing or pulling into one would delete
    /// whatever the new version lacks, so the front ends ask first (`save --force`,
    /// `pull --force`, `FileWrapper.write` with `.atomic`). A missing path, an empty folder,
    /// or anything that is not a folder is not foreign (the save says what is wrong).
    ///
    /// A package another save swaps out while this looks (its old tree, being removed, may
    /// have lost `.pkgtool` first) is not taken for a foreign folder: the answer counts only
    /// if `path` still names the folder examined.
    package static func isForeignFolder(_ path: String) -> Bool {
        for _ in 0..<8 {
            guard let directory = try? FileDescriptor.openDirectory(path, followingFinalLink: true) else { return false }
            if (try? FileSystem.statusIfExists(metadataDirectoryName, relativeTo: directory.rawValue))??.kind == .directory {
                return false
            }
            // A name that is not UTF-8 (no package holds one) counts as an entry too.
            if let names = try? DirectoryListing.names(in: directory), names.isEmpty { return false }
            guard let examined = try? directory.status(), let now = try? FileSystem.status(path, followSymlinks: true)
            else { return false }
            if examined.inode == now.inode && examined.device == now.device { return true }
        }
        return false
    }

    package static func joined(_ parent: String, _ child: String) -> String {
        if parent.isEmpty { return child }
        return parent.hasSuffix("/") ? parent + child : parent + "/" + child
    }
}
