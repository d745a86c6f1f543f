import FoundationEssentials
import Glibc

extension FileWrapper {
    /// Whether the node at `url` holds what this wrapper holds: the same kinds and names,
    /// the same link targets, and regular files with the same bytes and executable bit.
    ///
    /// Apple's compares regular files by modification date only; this one answers from
    /// stat data when the file is the very one the wrapper was read from (same device,
    /// inode, size and modification time) and otherwise compares sizes, then content hashes.
    /// A file whose bytes the wrapper never loaded nor hashed, and that changed on disk
    /// since, cannot be compared: it does not match. Any error reading either side answers false.
    /// - Complexity: one `lstat` per entry; files not provably identical by stat are hashed.
    public func matchesContents(of url: URL) -> Bool {
        guard let path = try? FileWrapper.filePath(of: url, for: .stat) else { return false }
        return (try? matches(path: path, isRoot: true)) ?? false
    }

    /// Whether this wrapper no longer reflects the node at `url`, by Apple's rules: a
    /// regular file's modification date or permissions differ, a directory's names differ
    /// (or a child needs updating, recursively), a link's target differs. A wrapper made in
    /// memory, never read from disk, always needs updating.
    ///
    /// - Complexity: one `lstat` per entry, one listing per directory; no file is read.
    public func needsToBeUpdated(from url: URL) -> Bool {
        guard let path = try? FileWrapper.filePath(of: url, for: .stat) else { return true }
        return needsToBeUpdated(fromPath: path)
    }

    /// `needsToBeUpdated(from:)` for a path.
    ///
    /// - Complexity: one `lstat` per node, and a listing per directory; no file is read.
    public func needsToBeUpdated(fromPath path: String) -> Bool {
        (try? differsFromDisk(path: path, isRoot: true)) ?? true
    }

    // MARK: Internals

    private func differsFromDisk(path: String, isRoot: Bool) throws -> Bool {
        let node = state.withLock { $0 }
        let status = try FileSystem.status(path)
        guard status.kind == node.kind, node.diskRecord != nil else { return true }
        switch node.kind {
        case .regular:
            return status.modificationTime != node.modificationTime || status.permissions != node.effectivePermissions
        case .symbolicLink:
            return try FileSystem.readSymbolicLinkBytes(path) != Array((node.linkTarget ?? "").utf8)
        default:
            let names = try FileWrapper.contentNames(inDirectory: path, isRoot: isRoot)
            guard names.count == node.children.count else { return true }
            for name in names {
                guard let child = node.children[FileName(name)] else { return true }
                if try child.differsFromDisk(path: path + "/" + name, isRoot: false) { return true }
            }
            return false
        }
    }

    private func matches(path: String, isRoot: Bool) throws -> Bool {
        let node = state.withLock { $0 }
        let status = try FileSystem.status(path)
        guard status.kind == node.kind else { return false }
        switch node.kind {
        case .regular:
            guard status.isExecutable == (node.entryTag == .executableFile), status.size == node.regularFileSize else {
                return false
            }
            if node.contents == nil, let record = node.diskRecord, record.path == path, record.stillDescribes(status) {
                return true
            }
            let (hash, _) = try ContentHash.ofFile(atPath: path, buffer: ChunkBuffer())
            return try hash == contentHash
        case .symbolicLink:
            return try FileSystem.readSymbolicLinkBytes(path) == Array((node.linkTarget ?? "").utf8)
        default:
            let names = try FileWrapper.contentNames(inDirectory: path, isRoot: isRoot)
            guard names.count == node.children.count else { return false }
            for name in names {
                guard let child = node.children[FileName(name)] else { return false }
                if try !child.matches(path: path + "/" + name, isRoot: false) { return false }
            }
            return true
        }
    }

    /// The names in a directory that are package content, as `init(url:)` would read them.
    static func contentNames(inDirectory path: String, isRoot: Bool) throws -> [String] {
        let handle = try FileDescriptor.openDirectory(path)
        var names: [String] = []
        for entry in try DirectoryListing.entries(in: handle) {
            if isRoot && PackageReservedNames.isReserved(entry.name) { continue }
            var kind = entry.kind
            if kind == .unknown {
                kind = try FileSystem.status(entry.name, relativeTo: handle.rawValue).kind
            }
            if kind.isPackageContent { names.append(entry.name) }
        }
        return names
    }
}
