import Glibc
import PackageCore

/// Double buffering for repacks (`ZipPackOptions.keepsPrevious`, `pack --keep-previous`).
///
/// Writing a 1 GiB archive into a new file makes the kernel allocate its blocks and fill
/// fresh page-cache pages, and replacing the old archive frees its blocks and pages: on
/// ext4 without reflinks that is most of a repack's time. Overwriting a file
/// whose blocks exist (and whose pages are often cached) costs a fraction of it. So the
/// archive a pack replaces is kept beside it as `.NAME.pkgtool-previous`, and the next pack
/// writes the whole new archive into that inode, from offset 0, trusting none of its old
/// bytes, then swaps the two names with `renameat2(RENAME_EXCHANGE)`: readers of NAME see
/// the old archive or the new one, and the replaced archive becomes the previous file in
/// the same step, with no blocks freed.
///
/// After a pack completes, the previous file holds the archive that pack replaced. During
/// a pack it is scratch, and a pack that fails or is killed may leave it holding anything;
/// NAME is untouched until the exchange. Two packs to one output take turns over it (an
/// OFD lock, held until the exchange is done).
enum PreviousArchive {
    static let suffix = ".pkgtool-previous"

    /// The previous file of the archive at `output`: `DIR/.NAME.pkgtool-previous`.
    static func path(for output: String) -> String {
        sibling(of: output, named: "." + fileName(of: output) + suffix)
    }

    /// Writes `output` through `body`, into the previous file's blocks when that is safe,
    /// else into a new file; either way the archive replaced is kept as the previous file.
    ///
    /// `body` writes the whole archive at offsets from 0 and returns its length. The
    /// previous file is written through only when it is a regular file (never a symbolic
    /// link), has no other name (`st_nlink` 1), lives on the output's device, is not
    /// `base` (which is being read), and opens for writing. A first pack (no `output` yet,
    /// or not a regular file) writes as `AtomicFile` does and keeps nothing.
    ///
    /// - Returns: whether the previous file's blocks were written over.
    /// - Complexity: the writes `body` makes, a lock, an `ftruncate` and an exchange; with
    ///   `.full` durability, an fsync of the file and of the directory.
    static func write(
        to output: String, sparing base: ZipArchive?, permissions: UInt32, durability: Durability,
        _ body: (borrowing FileDescriptor) throws -> Int64
    ) throws -> Bool {
        guard let current = try FileSystem.statusIfExists(output), current.kind == .regular else {
            try AtomicFile.write(to: output, permissions: permissions, durability: durability) { _ = try body($0) }
            return false
        }
        let previousPath = path(for: output)
        let spared = try base?.file.status()
        if let file = try openForOverwriting(previousPath, output: current, sparing: spared) {
            let length = try body(file)
            try file.truncate(to: length)
            try file.setPermissions(permissions)
            // Without fsync, at least start the write-back that a rename over the output
            // would have started (ext4's auto_da_alloc): the exchange does not trigger it.
            if durability == .full { try file.sync() } else { file.startWriteback() }
            try swap(previousPath, with: output)
            // Closing releases the lock, only now that the name has moved on.
            try file.close()
            if durability == .full { try FileSystem.syncDirectory(directory(of: output)) }
            return true
        }
        // A new file, as without the option. Just before it is renamed over `output`, the
        // archive it replaces gets the previous file's name as a second link, so the rename
        // frees nothing, and if keeping it fails, nothing has been replaced.
        try AtomicFile.write(
            to: output, permissions: permissions, durability: durability,
            beforeReplacing: { _ in try link(output, as: previousPath) }
        ) { _ = try body($0) }
        return false
    }

    /// The previous file open for writing and locked, or nil when it must not be written
    /// through.
    ///
    /// Two packs to one output may race for it: the lock (an OFD lock, which the kernel
    /// drops when a killed process's descriptor closes) makes the second wait, and once it
    /// holds the lock it checks that the name still leads to this file, which the first
    /// one's exchange may have made the output or the base.
    private static func openForOverwriting(
        _ path: String, output: FileStatus, sparing base: FileStatus?
    ) throws(FileSystemError) -> FileDescriptor? {
        func overwritable(_ status: FileStatus) -> Bool {
            status.kind == .regular && status.linkCount == 1 && status.device == output.device
                && !(base.map { $0.inode == status.inode && $0.device == status.device } ?? false)
        }
        guard let named = try FileSystem.statusIfExists(path), overwritable(named) else { return nil }
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, access: .writeOnly, options: [.noFollow, .nonBlocking])
        } catch {
            // Not writable by us, or replaced since the stat: write a new file instead.
            let declined: [Errno] = [
                .permissionDenied, .notPermitted, .readOnlyFileSystem, .tooManySymbolicLinks,
                .noSuchFileOrDirectory, .isDirectory, .noDevice, Errno(rawValue: ETXTBSY),
            ]
            if let code = error.errno, declined.contains(code) { return nil }
            throw error
        }
        // Where the file system cannot lock, a new file is the safe way.
        guard (try? file.lock(exclusive: true)) != nil else { return nil }
        let opened = try file.status()
        guard let stillNamed = try FileSystem.statusIfExists(path), stillNamed.inode == opened.inode,
            stillNamed.device == opened.device, overwritable(opened)
        else { return nil }
        return file
    }

    /// Gives `output` the previous file's name, and the previous file `output`'s, in one
    /// step. Where the file system has no exchange (EINVAL: some network and FUSE file
    /// systems), the replaced archive is linked to a temporary name first, so that the
    /// rename over `output` is still the one step readers can see.
    private static func swap(_ previousPath: String, with output: String) throws(FileSystemError) {
        do {
            try FileSystem.exchange(previousPath, with: output)
        } catch {
            guard error.errno == .invalidArgument || error.errno == .notSupported else { throw error }
            let held = temporaryPath(near: output)
            try FileSystem.link(output, to: held)
            do {
                try FileSystem.rename(previousPath, to: output)
            } catch {
                try? FileSystem.remove(held)
                throw error
            }
            // `output` is the new archive now: a failure here only leaves the old one under the temporary name.
            try? FileSystem.rename(held, to: previousPath)
        }
    }

    /// Makes `previousPath` a second name of the file at `output`, replacing what was there
    /// (a symbolic link is replaced, not followed; a file with other names keeps them).
    /// Nothing to do when it already is one (a crash between this and the rename after it).
    /// A pack writing over the file there is waited for (its lock), so that its exchange
    /// still finds its own file under the name.
    private static func link(_ output: String, as previousPath: String) throws(FileSystemError) {
        let held = temporaryPath(near: output)
        do throws(FileSystemError) {
            let waited = waitForWriter(previousPath)
            defer { withExtendedLifetime(waited) {} }
            if let kept = try FileSystem.statusIfExists(previousPath), let current = try FileSystem.statusIfExists(output),
                kept.inode == current.inode, kept.device == current.device
            {
                return
            }
            try FileSystem.link(output, to: held)
            do {
                try FileSystem.rename(held, to: previousPath)
            } catch {
                try? FileSystem.remove(held)
                throw error
            }
        } catch {
            var explained = error
            explained.reason = "keeping the archive being replaced as the previous one"
            throw explained
        }
    }

    /// The file at `path` under a shared lock, once no pack holds it to write over it;
    /// nil when there is none (or it cannot be locked: then nothing is waited for).
    private static func waitForWriter(_ path: String) -> SharedDescriptor? {
        guard let file = try? FileDescriptor.open(path, options: [.noFollow, .nonBlocking]) else { return nil }
        guard (try? file.status())?.kind == .regular, (try? file.lock(exclusive: false)) != nil else { return nil }
        return SharedDescriptor(file)
    }

    private static func temporaryPath(near output: String) -> String {
        sibling(of: output, named: SiblingNames(forName: fileName(of: output)).newTemporary())
    }

    // Split on the byte "/": `lastIndex(of: "/")` compares Characters, and misses a "/"
    // that a combining mark follows ("dir/\u{301}x.zip").

    private static func fileName(of path: String) -> String { RelativePath.lastComponent(of: path) }

    private static func directory(of path: String) -> String { AppendRecovery.directory(of: path) }

    /// `name` in the directory of `path`, written the way `path` is (relative or absolute).
    private static func sibling(of path: String, named name: String) -> String {
        (AppendRecord.split(path).0 ?? "") + name
    }
}
