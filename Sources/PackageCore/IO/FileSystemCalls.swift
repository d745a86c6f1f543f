import CSystemShims
import Glibc

/// Path-level operations: each is one system call relative to a directory descriptor
/// (or the working directory), with errors that name the path.
package enum FileSystem {
    /// The working directory, as the base of `*at` calls.
    package static let currentDirectory: Int32 = AT_FDCWD

    /// Creates a directory.
    /// `displayPath` is the path errors name (default: `path`).
    package static func makeDirectory(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, permissions: UInt32 = 0o755, displayPath: String? = nil
    ) throws(FileSystemError) {
        do { try Syscall.mkdirat(directory, path, permissions) } catch {
            throw FileSystemError(.makeDirectory, path: displayPath ?? path, errno: error)
        }
    }

    /// Creates a directory and any missing parents (`mkdir -p`).
    package static func makeDirectories(_ path: String, permissions: UInt32 = 0o755) throws(FileSystemError) {
        var prefix = path.utf8.first == UInt8(ascii: "/") ? "/" : ""
        for component in RelativePath.components(of: path) {
            prefix += component
            do { try Syscall.mkdirat(AT_FDCWD, prefix, permissions) } catch {
                if error != .fileExists { throw FileSystemError(.makeDirectory, path: prefix, errno: error) }
                let status = try fileStatus(atPath: prefix, followSymlinks: true)
                if status.kind != .directory {
                    throw FileSystemError(.makeDirectory, path: prefix, errno: .notDirectory)
                }
            }
            prefix += "/"
        }
    }

    /// The bytes an unprivileged writer may still use on the file system holding `path`
    /// (`statvfs`: available blocks times the fragment size); nil when it cannot be asked.
    package static func availableBytes(onFileSystemOf path: String) -> Int64? {
        guard let folder = try? FileDescriptor.openDirectory(path, followingFinalLink: true) else { return nil }
        var info = statvfs()
        guard fstatvfs(folder.rawValue, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// Removes a file or symbolic link (never a directory).
    ///
    /// `displayPath`: the path errors name (default: `path`), built only on failure.
    package static func remove(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, displayPath: @autoclosure () -> String? = nil
    ) throws(FileSystemError) {
        do { try Syscall.unlinkat(directory, path, removeDirectory: false) } catch {
            throw FileSystemError(.remove, path: displayPath() ?? path, errno: error)
        }
    }

    /// The canonical absolute form of `path`, every symbolic link and `.`/`..` resolved
    /// (realpath(3)); the path must exist.
    package static func realPath(_ path: String) throws(FileSystemError) -> String {
        do { return try Syscall.realpath(path) } catch { throw FileSystemError(.resolve, path: path, errno: error) }
    }

    /// Removes an empty directory.
    package static func removeDirectory(_ path: String, relativeTo directory: Int32 = AT_FDCWD)
        throws(FileSystemError)
    {
        do { try Syscall.unlinkat(directory, path, removeDirectory: true) } catch {
            throw FileSystemError(.removeDirectory, path: path, errno: error)
        }
    }

    /// Renames `from` to `to`, replacing `to` when it exists (rename(2) semantics).
    package static func rename(
        _ from: String, to: String, fromDirectory: Int32 = AT_FDCWD, toDirectory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        do { try Syscall.renameat2(fromDirectory, from, toDirectory, to, flags: 0) } catch {
            throw FileSystemError(.rename, path: from, destination: to, errno: error)
        }
    }

    /// Renames `from` to `to`, failing with EEXIST when `to` exists.
    package static func renameNoReplace(
        _ from: String, to: String, fromDirectory: Int32 = AT_FDCWD, toDirectory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        do { try Syscall.renameat2(fromDirectory, from, toDirectory, to, flags: PKG_RENAME_NOREPLACE) } catch {
            throw FileSystemError(.rename, path: from, destination: to, errno: error)
        }
    }

    /// Atomically exchanges two paths (renameat2 RENAME_EXCHANGE): a reader sees one or
    /// the other at each name, never neither.
    package static func exchange(
        _ first: String, with second: String, firstDirectory: Int32 = AT_FDCWD, secondDirectory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        do { try Syscall.renameat2(firstDirectory, first, secondDirectory, second, flags: PKG_RENAME_EXCHANGE) } catch {
            throw FileSystemError(.exchange, path: first, destination: second, errno: error)
        }
    }

    /// Makes a hard link `to` of the file `from` (never following a symbolic link).
    package static func link(
        _ from: String, to: String, fromDirectory: Int32 = AT_FDCWD, toDirectory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        do { try Syscall.linkat(fromDirectory, from, toDirectory, to, flags: 0) } catch {
            throw FileSystemError(.link, path: from, destination: to, errno: error)
        }
    }

    /// Gives an unnamed (O_TMPFILE) file a name.
    package static func linkUnnamed(
        _ file: borrowing FileDescriptor, to path: String, inDirectory directory: Int32
    ) throws(FileSystemError) {
        do { try Syscall.linkat(file.rawValue, "", directory, path, flags: PKG_AT_EMPTY_PATH) } catch {
            throw FileSystemError(.link, path: file.path, destination: path, errno: error)
        }
    }

    /// Creates a symbolic link at `path` whose text is `target`.
    package static func makeSymbolicLink(
        _ path: String, target: String, relativeTo directory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        do { try Syscall.symlinkat(target, directory, path) } catch {
            throw FileSystemError(.symlink, path: path, errno: error)
        }
    }

    /// The raw bytes of a symbolic link's target.
    ///
    /// `displayPath`: the path errors name (default: `path`), built only on failure.
    package static func readSymbolicLinkBytes(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, sizeHint: Int = 0,
        displayPath: @autoclosure () -> String? = nil
    ) throws(FileSystemError) -> [UInt8] {
        do { return try Syscall.readlinkat(directory, path, sizeHint: sizeHint) } catch {
            throw FileSystemError(.readLink, path: displayPath() ?? path, errno: error)
        }
    }

    /// A symbolic link's target as text (invalid UTF-8 is repaired with U+FFFD).
    package static func readSymbolicLink(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD
    ) throws(FileSystemError) -> String {
        String(decoding: try readSymbolicLinkBytes(path, relativeTo: directory), as: UTF8.self)
    }

    /// `path` with its final symbolic links followed (a chain, relative targets taken from
    /// the link's folder), up to the first name that is not a link or does not exist: what
    /// a command-line tool writes to when it is given a link as its output, as `cp` and
    /// `unzip -d` do. Intermediate components are left to the kernel.
    ///
    /// - Throws: ELOOP after 40 links; an error when a link's target is not valid UTF-8.
    package static func followingFinalSymbolicLinks(_ path: String) throws(FileSystemError) -> String {
        var current = path
        for _ in 0..<40 {
            guard let status = try statusIfExists(current), status.kind == .symbolicLink else { return current }
            let bytes = try readSymbolicLinkBytes(current)
            guard let target = String(validating: bytes, as: UTF8.self), !target.isEmpty else {
                throw FileSystemError(.readLink, path: current, reason: "its target is not a valid UTF-8 path")
            }
            if target.utf8.first == UInt8(ascii: "/") {
                current = target
            } else {
                let folder = RelativePath.splitLast(RelativePath.trimmingTrailingSlashes(current)).directory
                current = RelativePath.join(folder, target)
            }
        }
        throw FileSystemError(.stat, path: path, errno: .tooManySymbolicLinks)
    }

    /// Status of `path` relative to `directory`, never following a final symbolic link
    /// unless `followSymlinks`.
    ///
    /// `displayPath`: the path errors name (default: `path`), built only on failure: a
    /// tree walk stats every entry by name and pays for its full path only when one fails.
    package static func status(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, followSymlinks: Bool = false,
        displayPath: @autoclosure () -> String? = nil
    ) throws(FileSystemError) -> FileStatus {
        do { return FileStatus(try Syscall.fstatat(directory, path, followSymlinks: followSymlinks)) } catch {
            throw FileSystemError(.stat, path: displayPath() ?? path, errno: error)
        }
    }

    /// Status, or nil when nothing exists at `path`.
    package static func statusIfExists(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD
    ) throws(FileSystemError) -> FileStatus? {
        do { return FileStatus(try Syscall.fstatat(directory, path, followSymlinks: false)) } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw FileSystemError(.stat, path: path, errno: error)
        }
    }

    /// Sets permission bits of a file or directory (symbolic links have none on Linux).
    package static func setPermissions(
        _ path: String, _ permissions: UInt32, relativeTo directory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        do { try Syscall.fchmodat(directory, path, permissions & 0o7777) } catch {
            throw FileSystemError(.setPermissions, path: path, errno: error)
        }
    }

    /// Sets access and modification time (ns since the epoch) without following a final link.
    package static func setModificationTime(
        _ path: String, _ modificationTime: Int64, relativeTo directory: Int32 = AT_FDCWD
    ) throws(FileSystemError) {
        let time = timespec(nanoseconds: modificationTime)
        do { try Syscall.utimensat(directory, path, [time, time], followSymlinks: false) } catch {
            throw FileSystemError(.setTimes, path: path, errno: error)
        }
    }

    /// The bytes of the regular file at `path` (a final symbolic link is not followed), of
    /// at most `limit` bytes: for small files held in memory whole (an app's merge).
    /// - Throws: `FileSystemError` when it cannot be read, is not a regular file, or is
    ///   larger than `limit` (or grows past it while read).
    package static func readWholeFile(_ path: String, limit: Int64) throws(FileSystemError) -> [UInt8] {
        let file = try FileDescriptor.open(path, options: [.nonBlocking, .noFollow])
        let status = try file.status()
        guard status.kind == .regular else { throw FileSystemError(.read, path: path, reason: "not a regular file") }
        guard status.size <= limit else { throw FileSystemError(.read, path: path, reason: "larger than \(limit) bytes") }
        var bytes = [UInt8](repeating: 0, count: Int(status.size) + 1)
        let result = bytes.withUnsafeMutableBytes { raw in
            Result { () throws(FileSystemError) -> Int in try file.readFully(into: raw, at: 0) }
        }
        let count = try result.get()
        guard count <= Int(status.size) else { throw FileSystemError(.read, path: path, reason: "it grew while read") }
        bytes.removeSubrange(count...)
        return bytes
    }

    /// Flushes a directory's entries (created, renamed, removed names) to the device.
    package static func syncDirectory(_ path: String, relativeTo directory: Int32 = AT_FDCWD) throws(FileSystemError) {
        let descriptor = try FileDescriptor.openDirectory(path, relativeTo: directory)
        try descriptor.sync()
    }

    /// Removes `path` and everything beneath it, never following symbolic links. A missing
    /// path is not an error.
    ///
    /// Directories inside the tree that refuse the removal (no write or search permission: a
    /// read-only folder, say) are given their owner's permissions first: the whole tree is
    /// going. The directory holding `path` itself is never changed. `displayPath` names
    /// `path` in errors when it is relative to a directory the person does not know about.
    ///
    /// - Complexity: one `unlinkat` per entry plus one directory listing per directory.
    package static func removeTree(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, displayPath: String? = nil
    ) throws(FileSystemError) {
        _ = try removeEntry(path, in: directory, shown: displayPath ?? path, parentIsInTree: false)
    }

    /// `removeTree`, returning the number of entries removed (0 when nothing was there).
    package static func removeTreeCountingEntries(
        _ path: String, relativeTo directory: Int32, displayPath: String
    ) throws(FileSystemError) -> Int {
        try removeEntry(path, in: directory, shown: displayPath, parentIsInTree: false)
    }

    private static func removeEntry(
        _ name: String, in directory: Int32, shown: String, parentIsInTree: Bool
    ) throws(FileSystemError) -> Int {
        let status: FileStatus
        do { status = FileStatus(try Syscall.fstatat(directory, name, followSymlinks: false)) } catch {
            if error == .noSuchFileOrDirectory { return 0 }
            throw FileSystemError(.stat, path: shown, errno: error)
        }
        var removed = 1
        if status.kind == .directory {
            let handle: FileDescriptor
            do {
                handle = try FileDescriptor.openDirectory(name, relativeTo: directory, displayPath: shown)
            } catch where error.errno == .permissionDenied {
                // No search or read permission: ours to grant, the folder is going.
                do { try Syscall.fchmodat(directory, name, 0o700) } catch { throw FileSystemError(.setPermissions, path: shown, errno: error) }
                handle = try FileDescriptor.openDirectory(name, relativeTo: directory, displayPath: shown)
            }
            var madeWritable = false
            for entry in try DirectoryListing.names(in: handle) {
                let childShown = shown + "/" + entry
                while true {
                    do {
                        removed += try removeEntry(entry, in: handle.rawValue, shown: childShown, parentIsInTree: true)
                        break
                    } catch where !madeWritable && (error.errno == .permissionDenied || error.errno == .notPermitted) {
                        // The folder does not let its entries go: give it its owner's bits.
                        madeWritable = true
                        do { try Syscall.fchmod(handle.rawValue, (status.permissions | 0o700) & 0o7777, path: shown) } catch {
                            throw FileSystemError(
                                .remove, path: childShown, errno: error,
                                reason: "its folder refuses changes (read-only or immutable)")
                        }
                    }
                }
            }
            do { try Syscall.unlinkat(directory, name, removeDirectory: true) } catch {
                if error == .noSuchFileOrDirectory { return removed - 1 }
                throw FileSystemError(.removeDirectory, path: shown, errno: error)
            }
        } else {
            do { try Syscall.unlinkat(directory, name, removeDirectory: false) } catch {
                if error == .noSuchFileOrDirectory { return 0 }
                throw FileSystemError(.remove, path: shown, errno: error)
            }
        }
        return removed
    }
}
