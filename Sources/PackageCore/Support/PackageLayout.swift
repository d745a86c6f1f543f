/// Names pkgtool itself uses inside and beside a package (Specs/manifest.md).
public enum PackageLayout {
    /// The one hidden entry pkgtool keeps inside a package: a directory holding the
    /// manifest (`index`, `delta.N`) and, during a journaled save, its journal. Scans,
    /// diffs, archives and FileWrapper trees leave it out: it is never package content.
    public static let metadataDirectoryName = ".pkgtool"

    /// The base manifest inside the metadata directory.
    package static let indexFileName = "index"

    /// The prefix of manifest delta files (`delta.000001`, …).
    package static let deltaFilePrefix = "delta."

    /// The path of the metadata directory of the package at `packagePath`.
    package static func metadataDirectory(of packagePath: String) -> String {
        joined(packagePath, metadataDirectoryName)
    }

    /// `parent/child`, without doubling a trailing slash.
    package static func joined(_ parent: String, _ child: String) -> String {
        if parent.isEmpty { return child }
        return parent.hasSuffix("/") ? parent + child : parent + "/" + child
    }
}
