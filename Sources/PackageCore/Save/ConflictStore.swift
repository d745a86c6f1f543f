import Glibc

/// The folder `.pkgtool/conflicts/` of a package: its conflicts record (`list`,
/// `ConflictList`) and the bytes of every conflict version that is a file, each named by
/// its content (`<content hash>-<size>`), so it survives moves, renames and `cp -a` of the
/// package (it is inside it) and needs no network to be restored.
///
/// Contents are written *before* the save that commits the record listing them (each one
/// atomically, checked against its content hash as it is copied): a crash in between
/// leaves an unlisted content, which `removeUnlisted` clears later, never a listed one
/// that is missing. The record itself rides in the save's commit
/// (`SaveOptions.conflictsRecord`); a staged save hard-links the folder into the new tree.
///
/// Everything here is read as hostile input: no link is followed, the record only as a
/// regular file of at most `ConflictList.limit` bytes, a content only when it is a regular
/// file of its name's size whose bytes hash to its name.
package enum ConflictStore {
    /// What `.pkgtool/conflicts/list` holds.
    package enum Contents: Sendable {
        case absent
        case list(ConflictList)
        /// Something that cannot be a record stands there, as the text says.
        case unusable(String)
    }

    /// The name a file content is kept under.
    package static func contentName(_ hash: ContentHash, size: Int64) -> String { "\(hash)-\(size)" }

    /// The path of the folder, for messages.
    static func folderPath(_ packagePath: String) -> String {
        PackageLayout.metadataDirectory(of: packagePath) + "/" + PackageLayout.conflictsDirectoryName
    }

    /// The path of a kept content, to read it (through no link: open it with `openContent`).
    package static func contentPath(_ packagePath: String, hash: ContentHash, size: Int64) -> String {
        folderPath(packagePath) + "/" + contentName(hash, size: size)
    }

    /// Reads the conflicts record of the package at `packagePath`.
    /// - Complexity: four `openat`s, a `fstat` and one read of the record.
    package static func read(packagePath: String) -> Contents {
        guard let root = try? FileDescriptor.openDirectory(packagePath, followingFinalLink: true) else { return .absent }
        let shown = PackageLayout.joined(packagePath, PackageLayout.conflictsRecordPath)
        do throws(FileSystemError) {
            let file = try FileDescriptor.openWithoutSymlinks(
                PackageLayout.conflictsRecordPath, relativeTo: root.rawValue, options: [.nonBlocking], displayPath: shown)
            return contents(of: file, shownAs: shown)
        } catch where error.errno == .noSuchFileOrDirectory || error.errno == .notDirectory {
            return .absent
        } catch {
            return .unusable("'\(shown)' cannot be read: \(error)")
        }
    }

    private static func contents(of file: borrowing FileDescriptor, shownAs shown: String) -> Contents {
        guard let status = try? file.status(), status.kind == .regular else { return .unusable("'\(shown)' is not a regular file") }
        guard status.size <= Int64(ConflictList.limit) else {
            return .unusable("'\(shown)' is larger than \(ConflictList.limit) bytes")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.size) + 1)
        guard let count = try? bytes.withUnsafeMutableBytes({ try file.readFully(into: $0, at: 0) }), count == Int(status.size)
        else { return .unusable("'\(shown)' cannot be read whole") }
        do {
            return .list(try ConflictList.decode(Array(bytes[..<count])))
        } catch {
            return .unusable("'\(shown)' is not a conflicts record: \(error.reason)")
        }
    }

    /// The package's conflicts; none when it has no record. An unusable record is an error
    /// (its conflict versions must not be forgotten silently).
    package static func list(packagePath: String) throws(ConflictListRefusal) -> ConflictList {
        switch read(packagePath: packagePath) {
        case .absent: return ConflictList()
        case .list(let list): return list
        case .unusable(let why): throw ConflictListRefusal(why)
        }
    }

    /// Makes `.pkgtool` and `.pkgtool/conflicts` where missing; neither is reached through a link.
    package static func makeDirectory(packagePath: String, durability: Durability) throws {
        let root = try FileDescriptor.openDirectory(packagePath, followingFinalLink: true)
        let metadataName = PackageLayout.metadataDirectoryName
        let metadataPath = PackageLayout.metadataDirectory(of: packagePath)
        if try FileSystem.statusIfExists(metadataName, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(metadataName, relativeTo: root.rawValue, displayPath: metadataPath)
            if durability == .full { try root.sync() }
        }
        let metadata = try FileDescriptor.openDirectory(metadataName, relativeTo: root.rawValue, displayPath: metadataPath)
        let name = PackageLayout.conflictsDirectoryName
        if try FileSystem.statusIfExists(name, relativeTo: metadata.rawValue) == nil {
            try FileSystem.makeDirectory(name, relativeTo: metadata.rawValue, displayPath: folderPath(packagePath))
            if durability == .full { try metadata.sync() }
        }
    }

    /// Replaces the record atomically on its own (a save that writes no new tree, or a
    /// resolve under the package's lock).
    package static func writeRecord(_ bytes: [UInt8], packagePath: String, durability: Durability) throws {
        try makeDirectory(packagePath: packagePath, durability: durability)
        let folder = try openFolder(packagePath: packagePath)
        try AtomicFile.write(
            named: PackageLayout.conflictsRecordFileName, in: folder,
            displayPath: folderPath(packagePath) + "/" + PackageLayout.conflictsRecordFileName, durability: durability
        ) { file in
            try bytes.withUnsafeBytes { try file.write($0) }
        }
    }

    /// Opens the folder (never through a link).
    static func openFolder(packagePath: String) throws -> FileDescriptor {
        let root = try FileDescriptor.openDirectory(packagePath, followingFinalLink: true)
        return try FileDescriptor.openWithoutSymlinks(
            PackageLayout.metadataDirectoryName + "/" + PackageLayout.conflictsDirectoryName, relativeTo: root.rawValue,
            options: [.directory], displayPath: folderPath(packagePath))
    }

    /// Keeps the bytes of the file at `source` (opened without following a final link) as
    /// the content `hash`/`size`, unless it is kept already: copied to a temporary name,
    /// hashed as it is copied, renamed into place only when they match.
    /// - Throws: `FileSystemError`, or `ConflictListRefusal` when the bytes are not the content.
    /// - Complexity: one read and one write of the file's bytes (nothing when kept already).
    package static func keepContent(
        from source: String, hash: ContentHash, size: Int64, packagePath: String, durability: Durability
    ) throws {
        try makeDirectory(packagePath: packagePath, durability: durability)
        let folder = try openFolder(packagePath: packagePath)
        let name = contentName(hash, size: size)
        if let status = try FileSystem.statusIfExists(name, relativeTo: folder.rawValue), status.kind == .regular,
            status.size == size
        {
            return
        }
        let input = try FileDescriptor.open(source, options: [.noFollow])
        let buffer = ChunkBuffer()
        let hasher = ContentHasher()
        try AtomicFile.write(
            named: name, in: folder, displayPath: folderPath(packagePath) + "/" + name, permissions: 0o644,
            durability: durability
        ) { output in
            try FileCopy.copyHashing(
                from: input, size: size, sparse: false, to: output, buffer: buffer, hash: { hasher.update($0) },
                chunkCompleted: { _ in })
            guard try input.status().size == size, hasher.digest() == hash else {
                throw ConflictListRefusal("'\(source)' changed while it was kept as a conflict version")
            }
        }
    }

    /// Opens a kept content and checks it is a regular file of its size (its bytes are
    /// checked by whoever copies them: the save engine hashes every byte it writes).
    package static func contentStatus(packagePath: String, hash: ContentHash, size: Int64) throws -> FileStatus {
        let folder = try openFolder(packagePath: packagePath)
        let name = contentName(hash, size: size)
        let file = try FileDescriptor.openWithoutSymlinks(
            name, relativeTo: folder.rawValue, options: [.nonBlocking], displayPath: folderPath(packagePath) + "/" + name)
        let status = try file.status()
        guard status.kind == .regular, status.size == size else {
            throw ConflictListRefusal("'\(folderPath(packagePath))/\(name)' is not the conflict version it names")
        }
        return status
    }

    /// Removes the contents `list` does not name (a crash between keeping a content and
    /// committing its record, or a resolved conflict), and anything else that is not the
    /// record. Call under the package's exclusive lock.
    /// - Returns: how many names were removed.
    @discardableResult
    package static func removeUnlisted(packagePath: String, keeping list: ConflictList) throws -> Int {
        guard let folder = try? openFolder(packagePath: packagePath) else { return 0 }
        let unlisted = try unlistedNames(in: folder, keeping: list)
        for name in unlisted {
            try FileSystem.removeTree(name, relativeTo: folder.rawValue, displayPath: folderPath(packagePath) + "/" + name)
        }
        return unlisted.count
    }

    /// The names in the open folder that are neither the record nor a content `list` names.
    private static func unlistedNames(in folder: borrowing FileDescriptor, keeping list: ConflictList) throws -> [String] {
        var named = Set<RelativePath>()  // names are bytes
        for version in list.lines where version.kind == .file {
            named.insert(RelativePath(trusted: contentName(version.hash, size: version.size)))
        }
        return try DirectoryListing.entries(in: folder, skippingNonUTF8Names: true).map(\.name).filter { name in
            !PathOrder.sameBytes(name, PackageLayout.conflictsRecordFileName) && !named.contains(RelativePath(trusted: name))
        }
    }

    /// Whether the folder holds anything its record does not list (a crash's leftovers).
    /// Takes no lock: a hint for whether `sweep` is worth its locks. False when the record
    /// cannot be read.
    /// - Complexity: one read of the record and one listing of the folder.
    package static func hasUnlisted(packagePath: String) -> Bool {
        let list: ConflictList
        switch read(packagePath: packagePath) {
        case .list(let read): list = read
        case .absent: list = ConflictList()
        case .unusable: return false
        }
        guard let folder = try? openFolder(packagePath: packagePath),
            let unlisted = try? unlistedNames(in: folder, keeping: list)
        else { return false }
        return !unlisted.isEmpty
    }

    /// Removes what a crash left unlisted in the folder (`removeUnlisted`), under the
    /// package's exclusive lock, after recovering an interrupted save (whose commit may list
    /// them). A record that cannot be read leaves everything as it is.
    ///
    /// The caller must also keep out whoever keeps contents before committing a record that
    /// lists them: `sync` does so under its pull staging lock, and sweeps under that lock.
    /// - Returns: how many names were removed.
    /// - Complexity: the lock, a recovery check, one read of the record, one listing.
    @discardableResult
    package static func sweep(packagePath: String, durability: Durability) throws -> Int {
        let package = try PackageLocation(packagePath)
        return try PackageScope.withPackage(at: package, access: .exclusive, durability: durability) { _ in
            switch read(packagePath: package.path) {
            case .list(let list): return try removeUnlisted(packagePath: package.path, keeping: list)
            case .absent: return try removeUnlisted(packagePath: package.path, keeping: ConflictList())
            case .unusable: return 0
            }
        }
    }

    /// Carries the package's conflicts folder into a staged tree's `.pkgtool` (`metadata`):
    /// hard links of its regular files (copies where links are impossible), the record left
    /// out when the save commits a new one (`withoutRecord`).
    static func carry(
        from package: Int32, into metadata: borrowing FileDescriptor, withoutRecord: Bool, shownAs packagePath: String
    ) throws {
        let name = PackageLayout.conflictsDirectoryName
        let relative = PackageLayout.metadataDirectoryName + "/" + name
        guard let source = try? FileDescriptor.openWithoutSymlinks(relative, relativeTo: package, options: [.directory]) else {
            if withoutRecord { try FileSystem.makeDirectory(name, relativeTo: metadata.rawValue) }
            return
        }
        if try FileSystem.statusIfExists(name, relativeTo: metadata.rawValue) != nil {
            try FileSystem.removeTree(name, relativeTo: metadata.rawValue)
        }
        try FileSystem.makeDirectory(name, relativeTo: metadata.rawValue)
        let target = try FileDescriptor.openDirectory(name, relativeTo: metadata.rawValue)
        for entry in try DirectoryListing.entries(in: source, skippingNonUTF8Names: true) {
            if withoutRecord && PathOrder.sameBytes(entry.name, PackageLayout.conflictsRecordFileName) { continue }
            guard let status = try FileSystem.statusIfExists(entry.name, relativeTo: source.rawValue), status.kind == .regular
            else { continue }
            do {
                try FileSystem.link(entry.name, to: entry.name, fromDirectory: source.rawValue, toDirectory: target.rawValue)
            } catch {
                let input = try FileDescriptor.openWithoutSymlinks(entry.name, relativeTo: source.rawValue)
                let output = try FileDescriptor.open(
                    entry.name, relativeTo: target.rawValue, access: .writeOnly, options: [.create, .exclusive, .noFollow])
                try FileCopy.copyHashing(
                    from: input, size: status.size, sparse: false, to: output, buffer: ChunkBuffer(), hash: { _ in },
                    chunkCompleted: { _ in })
            }
        }
        _ = packagePath
    }
}
