import Foundation
import PackageCore

/// Where a save, save as or export will write, resolved and checked before the document is
/// asked for a snapshot: whatever can be found wrong before the document hands over its
/// edits (and, as the guide tells it to, clears its change flags) is found here.
struct WriteDestination: Sendable {
    let url: URL
    /// The destination's one identity (its folder resolved, links above it followed).
    let location: PackageLocation
    /// What the write puts there; nil when the writer decides (`DocumentForm.written`).
    let form: DocumentForm?
    /// What is there now, if anything.
    let existing: FileStatus?

    var path: String { location.path }

    /// Resolves `url` and checks, in order: the folder that will hold it exists and is a
    /// folder; nothing of the wrong kind is in the way (a file where a package goes, a
    /// folder where a file goes — nothing is in the way of a writer that chooses the kind
    /// itself, `form` nil); the folder (and, for a package written in place, the
    /// package) can be written to; the item the lock is taken on can be opened.
    ///
    /// The write checks are real: an unnamed file (`O_TMPFILE`) is created and dropped in
    /// each folder to be written, which asks the kernel itself (permissions, an immutable
    /// flag, a read-only mount, a full disk all answer here) and leaves nothing behind. A file
    /// system without `O_TMPFILE` skips that check; the write then finds out.
    ///
    /// - Throws: `DocumentError` (`folderMissing`, `inTheWay`, `notWritable`,
    ///   `readOnlyVolume`, `lockUnavailable`, …).
    /// - Complexity: two `realpath`, up to three `stat`, one or two `openat(O_TMPFILE)`,
    ///   one `openat` for the lock check.
    init(_ url: URL, form: DocumentForm?, operation: DocumentError.Operation) throws {
        self.url = url
        self.form = form
        guard url.isFileURL else {
            throw DocumentError(
                operation, url: url, code: .notFound, reason: "it is not a file URL",
                recoverySuggestion: "Choose a location on a local disk (a file: URL).")
        }
        let path = DocumentError.displayPath(url)
        do {
            location = try PackageLocation(path)
        } catch {
            let folder = (path as NSString).deletingLastPathComponent
            throw DocumentError.folderMissing(folder.isEmpty ? "." : folder, operation, url: url, cause: error)
        }
        let folder = location.parentPath
        let folderStatus: FileStatus
        do { folderStatus = try FileSystem.status(folder, followSymlinks: true) } catch {
            throw DocumentError.folderMissing(folder, operation, url: url, cause: error)
        }
        guard folderStatus.kind == .directory else {
            throw DocumentError.folderMissing(folder, operation, url: url, cause: nil)
        }
        do { existing = try FileSystem.statusIfExists(location.path) } catch {
            throw DocumentError(operation, url: url, underlyingError: error)
        }
        if let existing, let form, DocumentForm(existing.kind) != form {
            let found = existing.kind == .directory ? "a folder" : "a \(existing.kind)"
            throw DocumentError(
                operation, url: url, code: .inTheWay,
                reason: "\(found) is in the way where \(form.described) should be written",
                recoverySuggestion: "Move it away, or choose another name. " + DocumentError.editsStay(operation))
        }
        try WriteDestination.checkWritable(folder, isFolder: true, operation: operation, url: url)
        if let existing, existing.kind == .directory {
            // A package is written inside itself (the journaled save renames into it).
            try WriteDestination.checkWritable(location.path, isFolder: false, operation: operation, url: url)
        }
        try WriteDestination.checkLockable(location, exists: existing != nil, operation: operation, url: url)
    }

    /// Creates and drops an unnamed file in the folder `path`.
    static func checkWritable(_ path: String, isFolder: Bool, operation: DocumentError.Operation, url: URL) throws {
        do {
            let directory = try FileDescriptor.openDirectory(path)
            _ = try FileDescriptor.openUnnamed(inDirectory: directory, permissions: 0o600)
        } catch {
            switch error.errno {
            case .notSupported?, .isDirectory?, .invalidArgument?:
                return  // no O_TMPFILE here: nothing to learn before the write itself
            case .permissionDenied?, .notPermitted?, .readOnlyFileSystem?:
                throw DocumentError.notWritable(path, isFolder: isFolder, operation, url: url, cause: error)
            default:
                throw DocumentError(operation, url: url, underlyingError: error)
            }
        }
    }

    /// Opens what the lock will be taken on (the item, or its folder when it does not exist
    /// yet), as `PackageLock` will. Taking the lock itself waits for other writers, which
    /// is no failure; it is taken once the snapshot is in hand (Specs/document.md).
    static func checkLockable(_ location: PackageLocation, exists: Bool, operation: DocumentError.Operation, url: URL)
        throws
    {
        do {
            if exists {
                _ = try FileDescriptor.open(location.path, options: [.noFollow, .nonBlocking])
            } else {
                _ = try FileDescriptor.openDirectory(location.parentPath)
            }
        } catch {
            throw DocumentError(
                operation, url: url, code: .lockUnavailable,
                reason: "the item its lock is taken on cannot be opened (\(error))",
                recoverySuggestion: "Check the permissions of '\(exists ? location.path : location.parentPath)'. "
                    + DocumentError.editsStay(operation))
        }
    }
}
