/// Reaching into a package's tree from its root descriptor, for work that acts on paths
/// it was handed (a journal's operations): never through a symbolic link, never outside.
enum PackageTreeAccess {
    /// Opens the directory `relative` of the package open as `root` ("" is the root itself),
    /// refusing any symbolic link on the way and any path leading outside (`openat2` with
    /// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`).
    ///
    /// - Throws: `FileSystemError` naming the package path: ELOOP when a link stands where
    ///   the package has a folder, ENOTDIR when a file does.
    static func openDirectory(
        _ relative: String, in root: borrowing FileDescriptor, package: PackageLocation
    ) throws(FileSystemError) -> FileDescriptor {
        do {
            return try FileDescriptor.openWithoutSymlinks(
                relative.isEmpty ? "." : relative, relativeTo: root.rawValue, options: [.directory], beneath: true,
                displayPath: package.inside(relative))
        } catch {
            var explained = error
            if error.errno == .tooManySymbolicLinks {
                explained.reason = "a symbolic link stands where the package has a folder; it is never followed"
            }
            throw explained
        }
    }

    /// Runs `body`, which changes entries of `directory`; should the directory refuse
    /// (EACCES: its owner took away write permission), gives it owner write and search
    /// permission for a second try, then puts its bits back. An immutable folder still
    /// refuses: the error says so.
    static func withWritable<R>(
        _ directory: borrowing FileDescriptor, shownAs shown: String, _ body: () throws -> R
    ) throws -> R {
        do {
            return try body()
        } catch let error as FileSystemError where error.errno == .permissionDenied || error.errno == .notPermitted {
            let status = try directory.status()
            guard status.permissions & 0o300 != 0o300 else {
                throw error.explainingRefusal(of: shown)
            }
            do { try directory.setPermissions(status.permissions | 0o300) } catch { throw error.explainingRefusal(of: shown) }
            defer { try? directory.setPermissions(status.permissions) }
            return try body()
        }
    }
}

extension FileSystemError {
    /// This error naming `path` (a package path) instead of the internal name it was raised for.
    func naming(_ path: String, destination: String? = nil) -> FileSystemError {
        var named = self
        named.path = path
        named.destination = destination
        return named
    }

    /// This error, saying that `folder` refuses changes and what to do.
    func explainingRefusal(of folder: String) -> FileSystemError {
        var explained = self
        explained.reason = "the folder '\(folder)' refuses changes (read-only or immutable): make it writable and run pkgtool again"
        return explained
    }
}
