import FoundationEssentials
import Glibc

extension FileWrapper {
    /// Reads the node at `url` (a directory recursively), never following a symbolic link:
    /// a link, at the top or below, becomes a symbolic-link wrapper.
    ///
    /// Names and stat data only: regular files' bytes stay on disk until asked for, unless
    /// `options` contains `.immediate`. FIFOs, sockets and devices inside a directory are
    /// not package content and are left out; one at `url` itself is an error.
    /// - Throws: `FileSystemError` naming the path, the call and the errno.
    /// - Complexity: one `fstatat` per entry, one `getdents64` per 32 KiB of names per
    ///   directory, one `readlinkat` per link; with `.immediate`, every file read whole.
    public convenience init(url: URL, options: ReadingOptions = []) throws {
        let path = PackageLocation.canonicalFolder(of: try FileWrapper.filePath(of: url, for: .open))
        let status = try FileSystem.status(path)
        self.init(emptyOf: status.kind)
        let name = AtomicFile.split(path).name
        state.withLock { node in
            node.filename = name
            node.preferredFilename = name
        }
        try fill(path: path, name: path, status: status, relativeTo: AT_FDCWD, isRoot: true, options: options)
        if status.kind == .directory { adoptManifest(packagePath: path) }
    }

    /// Rereads this wrapper, and everything below it, from `url` (its kind may change). The
    /// wrapper then matches the disk, as after `init(url:options:)`.
    ///
    /// As Apple's does, a directory adds and removes children to match the disk, and keeps
    /// the child wrappers it already had under names still there, rereading them the same
    /// way: a reference an app holds to `fileWrappers["metadata.json"]` stays the tree's and
    /// shows the new state. A child also held by another directory is replaced instead, so
    /// that rereading one tree never changes another. Nothing changes unless the whole read
    /// succeeds.
    ///
    /// - Complexity: as `init(url:options:)`, plus O(children) per directory to match names.
    public func read(from url: URL, options: ReadingOptions = []) throws {
        let path = PackageLocation.canonicalFolder(of: try FileWrapper.filePath(of: url, for: .open))
        let status = try FileSystem.status(path)
        let replacement = FileWrapper(emptyOf: status.kind)
        // Only a wrapper no directory holds is a package root whose `.pkgtool` is left out:
        // a nested package's metadata, reread through its wrapper, stays its content.
        let isRoot = state.withLock { $0.parentLinks.isEmpty }
        try replacement.fill(path: path, name: path, status: status, relativeTo: AT_FDCWD, isRoot: isRoot, options: options)
        // Only once the whole read succeeded does this wrapper change.
        adoptReread(replacement, filename: AtomicFile.split(path).name, isTop: true)
        invalidateAncestorHashes()
        markEdited()
    }

    /// Takes the state of `fresh`, a wrapper just read from disk that nobody else holds,
    /// keeping (and updating the same way) each old child found under the same name and
    /// held by this wrapper alone.
    /// `isTop`: the wrapper `read(from:)` was called on, whose preferred filename stays
    /// (its parent's key for it does not change); a kept child takes the name on disk.
    private func adoptReread(_ fresh: FileWrapper, filename: String?, isTop: Bool = false) {
        let read = fresh.state.withLock { $0 }
        let oldChildren = state.withLock { $0.children }
        var children = read.children
        for (name, freshChild) in read.children {
            guard let old = oldChildren[name], old.isHeldOnly(by: self) else { continue }
            old.adoptReread(freshChild, filename: freshChild.filename)
            children[name] = old
        }
        state.withLock { node in
            node.kind = read.kind
            node.children = children
            node.contents = read.contents
            node.diskRecord = read.diskRecord
            node.linkTarget = read.linkTarget
            node.permissions = read.permissions
            node.modificationTime = read.modificationTime
            node.directoryEditedSinceRead = false
            node.editedBelow = read.editedBelow
            node.filename = filename
            if !isTop { node.preferredFilename = read.preferredFilename }
            node.cachedHash = read.cachedHash
            node.cachedChunks = nil
            node.cachedDescendantCount = nil
            node.generation &+= 1
        }
        for (name, old) in oldChildren where children[name] !== old {
            old.state.withLock { $0.parentLinks.removeAll { $0.parent === self || $0.parent == nil } }
        }
        for (name, child) in children where oldChildren[name] !== child {
            child.state.withLock { node in
                node.parentLinks.removeAll { $0.parent === fresh || $0.parent == nil }
                node.parentLinks.append(ParentLink(self))
            }
        }
    }

    /// Whether `parent` is the only directory holding this wrapper, under one name (links
    /// to directories that no longer exist do not count).
    private func isHeldOnly(by parent: FileWrapper) -> Bool {
        state.withLock { node in
            let holders = node.parentLinks.filter { $0.parent != nil }
            return holders.count == 1 && holders[0].parent === parent
        }
    }

    /// A regular file's contents, read from disk the first time and kept in memory; nil
    /// for other kinds, and nil when the file vanished, became unreadable or changed since
    /// the package was opened (as Apple's returns nil when the file changed before being
    /// read). `readRegularFileContents()` says which.
    public var regularFileContents: Data? {
        try? readRegularFileContents()
    }

    /// A regular file's contents, read from disk the first time and kept in memory.
    ///
    /// - Throws: `FileSystemError` with the path and errno when the file was removed,
    ///   replaced by a link, became unreadable, or changed (size or modification time)
    ///   after the package was opened; also when this wrapper is not a regular file.
    /// - Complexity: the first call on a file read from disk: one `open`, one `fstat`, and
    ///   reads of its whole size into memory. Later calls: none.
    public func readRegularFileContents() throws -> Data {
        let (kind, contents, record, path) = state.withLock { ($0.kind, $0.contents, $0.diskRecord, $0.displayPath) }
        guard kind == .regular else {
            throw FileSystemError(.read, path: path, reason: "is a \(kind), not a regular file")
        }
        if let contents { return contents }
        guard let record else { return Data() }
        // Read without the lock; keep the bytes unless the node changed meanwhile.
        let loaded = try FileWrapper.loadContents(of: record)
        state.withLock { node in
            if node.contents == nil && node.diskRecord == record { node.contents = loaded }
        }
        return loaded
    }

    // MARK: Internals

    /// The path of a file URL, without trailing slashes.
    static func filePath(of url: URL, for operation: FileOperation) throws(FileSystemError) -> String {
        guard url.isFileURL else {
            throw FileSystemError(operation, path: url.absoluteString, reason: "not a file URL")
        }
        var path = url.path(percentEncoded: false)
        while path.utf8.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }

    /// Fills this (new, unshared) wrapper from the node `name` in `directory`, whose full
    /// path is `path` and whose `lstat` is `status`.
    func fill(
        path: String, name: String, status: FileStatus, relativeTo directory: Int32, isRoot: Bool,
        options: ReadingOptions
    ) throws {
        let record = DiskRecord(path: path, status: status)
        var node = state.withLock { $0 }
        node.kind = status.kind
        node.diskRecord = record
        node.permissions = status.permissions
        node.modificationTime = status.modificationTime
        switch status.kind {
        case .regular:
            if options.contains(.immediate) { node.contents = try FileWrapper.loadContents(of: record) }
        case .symbolicLink:
            let target = try FileSystem.readSymbolicLinkBytes(
                name, relativeTo: directory, sizeHint: Int(status.size), displayPath: path)
            node.linkTarget = String(decoding: target, as: UTF8.self)
            // The hash is of the raw bytes, as the tree scanner takes it, even should the
            // text need repair to become a String.
            node.cachedHash = ContentHash.of(target)
        case .directory:
            let handle = try FileDescriptor.openDirectory(name, relativeTo: directory, displayPath: path)
            for entry in try DirectoryListing.entries(in: handle) {
                if isRoot && PackageReservedNames.isReserved(entry.name) { continue }
                let childPath = path == "/" ? "/" + entry.name : path + "/" + entry.name
                let childStatus = try FileSystem.status(entry.name, relativeTo: handle.rawValue, displayPath: childPath)
                guard childStatus.kind.isPackageContent else { continue }
                let child = FileWrapper(emptyOf: childStatus.kind)
                child.state.withLock { childNode in
                    childNode.filename = entry.name
                    childNode.preferredFilename = entry.name
                    childNode.parentLinks.append(ParentLink(self))
                }
                try child.fill(
                    path: childPath, name: entry.name, status: childStatus, relativeTo: handle.rawValue,
                    isRoot: false, options: options)
                node.children[FileName(entry.name)] = child
            }
        default:
            throw FileSystemError(
                .open, path: path, reason: "is a \(status.kind), not a regular file, directory or symbolic link")
        }
        let filled = node
        state.withLock { $0 = filled }
    }

    /// Opens the file a disk record describes and checks it still holds the same bytes.
    ///
    /// - Throws: `FileSystemError` saying what happened since the package was opened.
    /// - Complexity: one `openat` and one `fstat`.
    static func openVerified(_ record: DiskRecord) throws(FileSystemError) -> FileDescriptor {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(record.path, options: [.noFollow, .nonBlocking])
        } catch {
            throw error.explainedSincePackageOpened()
        }
        let current = try file.status()
        guard record.stillDescribes(current) else {
            throw FileSystemError(
                .read, path: record.path,
                reason: "it changed after the package was opened (\(FileStatus.describeChange(from: record.status, to: current)))")
        }
        return file
    }

    /// Reads the whole file a disk record describes.
    static func loadContents(of record: DiskRecord) throws -> Data {
        let file = try openVerified(record)
        let size = Int(record.status.size)
        var data = Data(count: size)
        let count = try data.withUnsafeMutableBytes { buffer in try file.readFully(into: buffer) }
        guard count == size else {
            throw FileSystemError(
                .read, path: record.path,
                reason: "it changed after the package was opened (\(size) bytes expected, \(count) read)")
        }
        return data
    }

}

extension FileSystemError {
    /// This error with a reason telling what must have happened to a file that existed and
    /// was readable when its package was opened.
    func explainedSincePackageOpened() -> FileSystemError {
        var explained = self
        switch errno {
        case .noSuchFileOrDirectory?, .notDirectory?:
            explained.reason = "it was removed or moved after the package was opened"
        case .tooManySymbolicLinks?:
            explained.reason = "it was replaced by a symbolic link after the package was opened"
        case .permissionDenied?, .notPermitted?:
            explained.reason = "it became unreadable after the package was opened"
        default:
            break
        }
        return explained
    }
}
