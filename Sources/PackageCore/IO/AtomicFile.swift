import Glibc

/// How hard a write works to survive a power loss.
public enum Durability: String, Sendable, CaseIterable {
    /// fsync every new file before it is published and every directory after its names
    /// change (Specs/save.md). The default.
    case full
    /// No fsync at all: a crash of the machine (not of the process) may lose the write.
    /// For benchmarks and tests that say so.
    case none
}

/// Replaces one file atomically: readers see the old contents or the new, never a mix,
/// and a crash leaves the old file in place.
///
/// A thin front of `StagedReplacement.writeFile`, the one publishing mechanism: the new
/// contents go to an unnamed file (`O_TMPFILE`) in the same directory, or to a hidden
/// temporary sibling where the file system has no `O_TMPFILE`; it is fsynced, given a
/// temporary name, renamed over the target, and the directory is fsynced.
package enum AtomicFile {
    /// Writes `path` through `body`, which receives a descriptor open for writing.
    ///
    /// - Parameter beforeReplacing: runs with the directory open once the new file is
    ///   complete and named, just before it is renamed over `path`; if it throws, nothing
    ///   is replaced. Pack's `--keep-previous` links the archive being replaced to its
    ///   second name there, so that the rename frees no blocks and fails before, not after.
    /// - Complexity: the writes `body` makes, plus two fsyncs (file and directory) and a
    ///   rename, with `.full` durability.
    package static func write(
        to path: String, permissions: UInt32 = 0o644, durability: Durability = .full,
        beforeReplacing: (borrowing FileDescriptor) throws -> Void = { _ in },
        _ body: (borrowing FileDescriptor) throws -> Void
    ) throws {
        let (directoryPath, name) = split(path)
        let directory = try FileDescriptor.openDirectory(directoryPath, followingFinalLink: true)
        try StagedReplacement.writeFile(
            named: name, in: directory, displayPath: path, permissions: permissions, durability: durability,
            beforeReplacing: beforeReplacing, body)
    }

    /// `write(to:…)` for the file `name` of an open `directory`: for a folder reached
    /// without following links (a package's `.pkgtool`), so that a link planted where a
    /// folder should be never redirects the write. Errors name `displayPath`.
    package static func write(
        named name: String, in directory: borrowing FileDescriptor, displayPath path: String, permissions: UInt32 = 0o644,
        durability: Durability = .full, beforeReplacing: (borrowing FileDescriptor) throws -> Void = { _ in },
        _ body: (borrowing FileDescriptor) throws -> Void
    ) throws {
        try StagedReplacement.writeFile(
            named: name, in: directory, displayPath: path, permissions: permissions, durability: durability,
            beforeReplacing: beforeReplacing, body)
    }

    /// The file that replacing `path` must replace, checked before any work is done: final
    /// symbolic links are followed (the link stays and its target gets the new contents, as
    /// with `cp` or Info-ZIP's `zip`), and a path that names something other than a regular
    /// file — a directory, a device, a FIFO — is refused, since renaming over it would
    /// replace the node itself (as root, `/dev/null`).
    package static func replaceableTarget(_ path: String) throws(FileSystemError) -> String {
        let operation = FileOperation(verb: "replace", systemCall: "renameat2")
        if path.isEmpty || path.hasSuffix("/") {
            throw FileSystemError(operation, path: path, reason: "it names a directory, not a file")
        }
        let target = try FileSystem.followingFinalSymbolicLinks(path)
        guard let status = try FileSystem.statusIfExists(target) else { return target }
        guard status.kind == .regular else {
            let shown = target == path ? "it" : "'\(target)'"
            throw FileSystemError(
                operation, path: path, reason: "\(shown) is a \(status.kind), not a regular file that can be replaced")
        }
        return target
    }

    /// Writes `bytes` to `path` atomically.
    package static func write(
        _ bytes: [UInt8], to path: String, permissions: UInt32 = 0o644, durability: Durability = .full
    ) throws {
        try write(to: path, permissions: permissions, durability: durability) { file in
            try bytes.withUnsafeBytes { try file.write($0) }
        }
    }

    /// The directory part ("." when none) and the last component of `path`.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = path[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
    }
}
