/// A package's one identity: its canonical path, resolved once from whatever name the
/// caller used, so that the lock, the hidden siblings and recovery are the same for
/// `doc.pkg`, `./doc.pkg`, `.` inside it, `../x/doc.pkg` or a path through a symbolic link.
///
/// Symbolic links *above* the package are followed (a symlinked home or data folder is
/// common); so is a link naming the package itself, as for any command-line argument.
/// Links *inside* the package are never followed: every walk below it uses
/// `RESOLVE_NO_SYMLINKS`. `.` and `..` components and duplicate slashes are gone.
public struct PackageLocation: Sendable, Hashable, CustomStringConvertible {
    /// The canonical absolute path.
    public let path: String
    /// The canonical absolute path of the folder holding the package.
    public let parentPath: String
    /// The package's own name in that folder.
    public let name: String
    /// The names pkgtool keeps beside the package.
    package let siblings: SiblingNames

    /// Resolves `path` (absolute or relative to the working directory). The package need
    /// not exist; the folder that would hold it must.
    ///
    /// - Throws: `FileSystemError` when the path is empty or its folder does not exist or
    ///   cannot be resolved.
    /// - Complexity: one or two `realpath` calls.
    public init(_ path: String) throws(FileSystemError) {
        guard !path.isEmpty else { throw FileSystemError(.open, path: path, reason: "the path is empty") }
        let resolved: String
        do {
            resolved = try Syscall.realpath(path)
        } catch where error == .noSuchFileOrDirectory {
            // Not there yet (a first save): resolve the folder, keep the name.
            let relative = RelativePath.trimmingTrailingSlashes(path)
            let (folder, name) = RelativePath.splitLast(relative)
            guard !name.isEmpty, name != ".", name != ".." else {
                throw FileSystemError(.open, path: path, errno: error)
            }
            let folderPath: String
            do { folderPath = try Syscall.realpath(folder.isEmpty ? (relative.utf8.first == UInt8(ascii: "/") ? "/" : ".") : folder) } catch {
                throw FileSystemError(
                    .open, path: folder.isEmpty ? "." : folder, errno: error,
                    reason: "the folder that would hold '\(path)' cannot be found")
            }
            resolved = folderPath == "/" ? "/" + name : folderPath + "/" + name
        } catch {
            throw FileSystemError(.open, path: path, errno: error)
        }
        guard resolved != "/" else {
            throw FileSystemError(.open, path: path, reason: "the root directory cannot be a package")
        }
        self.path = resolved
        let (folder, name) = RelativePath.splitLast(resolved)
        parentPath = folder.isEmpty ? "/" : folder
        self.name = name
        siblings = SiblingNames(forName: name)
    }

    /// `path` with its folder made canonical (links above followed, `.` and `..` gone) and
    /// its last component kept as it is, never followed: how a path to an item that may be
    /// a symbolic link itself is named once and for all. `path` unchanged when its folder
    /// cannot be resolved.
    package static func canonicalFolder(of path: String) -> String {
        let trimmed = RelativePath.trimmingTrailingSlashes(path)
        let (folder, name) = RelativePath.splitLast(trimmed)
        guard !name.isEmpty, name != ".", name != ".." else { return (try? Syscall.realpath(trimmed)) ?? trimmed }
        guard let resolved = try? Syscall.realpath(folder.isEmpty ? "." : folder) else { return trimmed }
        return resolved == "/" ? "/" + name : resolved + "/" + name
    }

    /// The path of a sibling called `name`.
    package func sibling(_ name: String) -> String {
        parentPath == "/" ? "/" + name : parentPath + "/" + name
    }

    /// The path of `relative` inside the package.
    package func inside(_ relative: String) -> String {
        relative.isEmpty ? path : path + "/" + relative
    }

    /// The path of the package's metadata directory.
    package var metadataPath: String { inside(PackageLayout.metadataDirectoryName) }

    /// The canonical path.
    public var description: String { path }
}
