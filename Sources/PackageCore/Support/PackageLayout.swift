import Glibc

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

    /// The folder inside the metadata directory that keeps conflict versions: the other
    /// side's version of every conflict a merge left (`ConflictStore`, Specs/remote.md).
    package static let conflictsDirectoryName = "conflicts"

    /// The conflicts record inside `conflictsDirectoryName`: the list of conflict versions
    /// (`ConflictList`), committed with the save that writes the merged tree.
    package static let conflictsRecordFileName = "list"

    /// The conflicts record's path relative to the package root.
    package static var conflictsRecordPath: String {
        metadataDirectoryName + "/" + conflictsDirectoryName + "/" + conflictsRecordFileName
    }

    /// The prefix of manifest delta files (`delta.000001`, …).
    package static let deltaFilePrefix = "delta."

    /// The sequence number of a manifest delta file's name (`delta.` and decimal digits,
    /// compared as bytes); nil for any other name.
    package static func deltaSequence(_ name: String) -> UInt64? {
        guard PathOrder.hasBytePrefix(name, deltaFilePrefix) else { return nil }
        let digits = name.utf8.dropFirst(deltaFilePrefix.utf8.count)
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return digits.reduce(UInt64(0)) { $0 * 10 + UInt64($1 - 0x30) }
    }

    /// Whether `name` begins with the delta files' prefix (by bytes): litter a rewrite of
    /// the manifest removes along with the real deltas.
    package static func hasDeltaPrefix(_ name: String) -> Bool { PathOrder.hasBytePrefix(name, deltaFilePrefix) }

    /// The path of the metadata directory of the package at `packagePath`.
    package static func metadataDirectory(of packagePath: String) -> String {
        joined(packagePath, metadataDirectoryName)
    }

    /// Whether `path` (a link followed) is a folder that holds entries but is no package.
    /// Saving, writing or pulling into one would delete whatever the new version lacks, so
    /// the front ends ask first (`save --force`, `pull --force`, `FileWrapper.write` with
    /// `.atomic`). A missing path, an empty folder (or one holding nothing but `.pkgtool`),
    /// or anything that is not a folder is not foreign (the save says what is wrong).
    ///
    /// A folder is a package when its `.pkgtool` holds a manifest that names it: one whose
    /// recorded package identity is the folder's own root inode (Specs/manifest.md,
    /// "Package identity"), the rule by which a save trusts a manifest as the package's
    /// state. An empty `.pkgtool`, a manifest copied or received from another folder, or
    /// one written before manifests recorded identities does not make a folder a package.
    ///
    /// A package another save swaps out while this looks (its old tree, being removed, may
    /// have lost `.pkgtool` first) is not taken for a foreign folder: the answer counts only
    /// if `path` still names the folder examined.
    /// - Complexity: one open, one listing of the folder and of `.pkgtool`, and the headers
    ///   of the manifest files (`PackageManifest.recordedIdentity`); no entry is decoded.
    package static func isForeignFolder(_ path: String) -> Bool {
        for _ in 0..<8 {
            guard let directory = try? FileDescriptor.openDirectory(path, followingFinalLink: true),
                let examined = try? directory.status()
            else { return false }
            // A name that is not UTF-8 (no package holds one) counts as an entry too.
            if let names = try? DirectoryListing.names(in: directory), names.allSatisfy({ PathOrder.sameBytes($0, metadataDirectoryName) }) {
                return false
            }
            if let metadata = try? FileDescriptor.openDirectory(
                metadataDirectoryName, relativeTo: directory.rawValue, followingFinalLink: false),
                let recorded = PackageManifest.recordedState(inMetadataDirectory: metadata)
            {
                if recorded.identity != 0 && recorded.identity == examined.inode { return false }
                // A copy of a package (`cp -a`, a backup put back): its manifest names the
                // original, yet the folder holds exactly the tree it describes. One read of
                // it decides, which a save of a copy spends anyway (no stat data vouches).
                if holdsTree(hashing: recorded.rootHash, at: path) { return false }
            }
            // A package's old tree, which another save just swapped out and is removing (its
            // manifest may be gone first), is pkgtool's own, not a person's folder: the save
            // through it fails on its own with a clear line. Seen by the name the folder has
            // now (a `.NAME.<hash>.pkgtool-…` sibling), or by its having been removed.
            if isSiblingInTransit(directory) { return false }
            guard let now = try? FileSystem.status(path, followSymlinks: true) else { return false }
            if examined.inode == now.inode && examined.device == now.device { return true }
        }
        return false
    }

    /// Whether the folder at `path` (its `.pkgtool` left out) hashes to `rootHash`.
    private static func holdsTree(hashing rootHash: ContentHash, at path: String) -> Bool {
        let scanner = TreeScanner(excludedTopLevelNames: [metadataDirectoryName])
        return (try? scanner.scan(path).snapshot.rootHash) == rootHash
    }

    /// Whether the open folder `directory` now bears one of pkgtool's sibling names
    /// (`SiblingNames`: staging, set aside, previous) or was removed: where the kernel says
    /// it is (`/proc/self/fd/N`).
    private static func isSiblingInTransit(_ directory: borrowing FileDescriptor) -> Bool {
        guard let bytes = try? FileSystem.readSymbolicLinkBytes("/proc/self/fd/\(directory.rawValue)", sizeHint: 256) else {
            return false
        }
        let current = String(decoding: bytes, as: UTF8.self)
        if PathOrder.hasByteSuffix(current, " (deleted)") { return true }
        let name = RelativePath.lastComponent(of: current)
        return name.utf8.first == UInt8(ascii: ".") && name.contains(".pkgtool-")
    }

    /// `parent/child`, without doubling a trailing slash.
    package static func joined(_ parent: String, _ child: String) -> String {
        if parent.isEmpty { return child }
        return parent.utf8.last == UInt8(ascii: "/") ? parent + child : parent + "/" + child
    }
}
