import FoundationEssentials
import PackageCore

/// Hands a pulled version to the save engine: DEST becomes exactly the version, written
/// crash-safely, only changed entries written, its manifest recorded.
///
/// Interim (until the engine's single entry `PackageSaver.save(_: some SaveSource, …)` is on
/// main): DEST is read as a `FileWrapper` (names and stat data only), and the version's
/// differences are applied to it — removed entries removed, changed and new files replaced
/// by wrappers of the checked contents in the staging area, links and directories made —
/// then saved with `PackageSaver.save(_:to:options:)`. The edited-tree save visits only
/// the directories touched, so an incremental pull writes in proportion to the change.
/// The switch to a `SaveSource` replaces this file alone.
enum PullHandoff {
    static func save(
        _ manifest: VersionManifest, to destination: String, current: TreeSnapshot?, staging: PullStaging,
        options: SaveOptions
    ) throws -> SaveStatistics {
        let root: FileWrapper
        if current != nil {
            root = try FileWrapper(url: URL(fileURLWithPath: destination))
        } else {
            root = FileWrapper(directoryWithFileWrappers: [:])
            root.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: 0o755]
        }
        var targetByPath: [String: RemoteEntry] = [:]
        targetByPath.reserveCapacity(manifest.entries.count)
        for entry in manifest.entries { targetByPath[entry.path] = entry }
        var currentByPath: [String: SnapshotEntry] = [:]

        // What DEST holds and the version does not (or holds as another kind) goes first.
        if let current {
            currentByPath.reserveCapacity(current.entries.count)
            var removedPrefix: String?
            for entry in current.entries {
                currentByPath[entry.path] = entry
                if let prefix = removedPrefix, entry.path.hasPrefix(prefix) { continue }
                removedPrefix = nil
                if let target = targetByPath[entry.path], target.kind == entry.kind { continue }
                let (parentPath, name) = split(entry.path)
                guard let parent = wrapper(at: parentPath, in: root), let child = parent.fileWrapper(forKey: name) else {
                    continue
                }
                parent.removeFileWrapper(child)
                if entry.kind == .directory { removedPrefix = entry.path + "/" }
            }
        }

        // Then every entry of the version, parents before children.
        var directories: [String: FileWrapper] = ["": root]
        for (index, entry) in manifest.entries.enumerated() {
            let (parentPath, name) = split(entry.path)
            guard let parent = directories[parentPath] else {
                throw RemoteError(.localFailure, "internal error: no directory '\(parentPath)' for '\(entry.path)'")
            }
            let existing = parent.fileWrapper(forKey: name)
            let known = currentByPath[entry.path]
            switch entry.kind {
            case .directory:
                if let existing, existing.isDirectory {
                    setPermissions(existing, entry.permissions, known: known?.permissions)
                    directories[entry.path] = existing
                } else {
                    if let existing { parent.removeFileWrapper(existing) }
                    let directory = FileWrapper(directoryWithFileWrappers: [:])
                    directory.preferredFilename = name
                    directory.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: Int(entry.permissions)]
                    parent.addFileWrapper(directory)
                    directories[entry.path] = directory
                }
            case .symbolicLink:
                if let existing, existing.isSymbolicLink, existing.symbolicLinkDestination == entry.linkTarget { continue }
                if let existing { parent.removeFileWrapper(existing) }
                let link = try FileWrapper(url: URL(fileURLWithPath: try staging.makeLink(index, target: entry.linkTarget ?? "")))
                link.preferredFilename = name
                parent.addFileWrapper(link)
            default:
                if let existing, existing.isRegularFile, let known, known.kind == .regular, known.hash == entry.contentHash,
                    known.size == entry.size
                {
                    setPermissions(existing, entry.permissions, known: known.permissions)
                    continue
                }
                if let existing { parent.removeFileWrapper(existing) }
                let file: FileWrapper
                if entry.size == 0 {
                    file = FileWrapper(regularFileWithContents: Data())
                } else {
                    file = try FileWrapper(url: URL(fileURLWithPath: staging.readyPath(FileKey(entry.contentHash, entry.size))))
                }
                file.preferredFilename = name
                file.fileAttributes = [
                    FileAttributeKey.posixPermissions.rawValue: Int(entry.permissions),
                    FileAttributeKey.modificationDate.rawValue: date(entry.modificationTime),
                ]
                parent.addFileWrapper(file)
            }
        }
        return try PackageSaver.save(root, to: destination, options: options)
    }

    private static func setPermissions(_ wrapper: FileWrapper, _ permissions: UInt32, known: UInt32?) {
        guard known != permissions else { return }
        wrapper.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: Int(permissions)]
    }

    /// The wrapper of the directory at `path` below `root` ("" is the root), if there is one.
    private static func wrapper(at path: String, in root: FileWrapper) -> FileWrapper? {
        var node = root
        if path.isEmpty { return root }
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            guard let child = node.fileWrapper(forKey: String(component)) else { return nil }
            node = child
        }
        return node
    }

    private static func split(_ path: String) -> (parent: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    private static func date(_ nanoseconds: Int64) -> Date {
        let parts = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return Date(timeIntervalSince1970: Double(parts.quotient) + Double(parts.remainder) / 1e9)
    }
}
