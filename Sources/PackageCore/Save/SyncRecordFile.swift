/// The sync record a package carries in `.pkgtool/sync`: what it was last pushed as or
/// pulled from (Specs/remote.md, "Local state"). PackageCore only stores the bytes — a save
/// given `SaveOptions.syncRecord` commits them with the new tree, any other save keeps the
/// package's record as it is — and PackageRemote gives them meaning.
///
/// The file is package metadata, so hostile input: it is read without following any link
/// (neither `.pkgtool` nor the file may be one), only when it is a regular file of at most
/// `limit` bytes.
package enum SyncRecordFile {
    /// The largest record read or written.
    package static let limit = 4096

    /// What `.pkgtool/sync` holds.
    package enum Contents: Equatable, Sendable {
        /// There is no record.
        case absent
        /// The record's bytes.
        case bytes([UInt8])
        /// Something that cannot be a record stands there, as the text says.
        case unusable(String)
    }

    /// Reads the record of the package at `packagePath` (a final link to the package is
    /// followed, as for any path given on the command line).
    /// - Complexity: three `openat`s, a `fstat` and one read of at most `limit` bytes.
    package static func read(packagePath: String) -> Contents {
        guard let root = try? FileDescriptor.openDirectory(packagePath, followingFinalLink: true) else { return .absent }
        return read(in: root.rawValue, shownAs: PackageLayout.metadataDirectory(of: packagePath))
    }

    /// Reads the record in the package open as `root`; `shownAs` names its `.pkgtool`.
    static func read(in root: Int32, shownAs metadataPath: String) -> Contents {
        let shown = metadataPath + "/" + PackageLayout.syncRecordFileName
        do throws(FileSystemError) {
            let file = try FileDescriptor.openWithoutSymlinks(
                PackageLayout.metadataDirectoryName + "/" + PackageLayout.syncRecordFileName, relativeTo: root,
                options: [.nonBlocking], displayPath: shown)
            return contents(of: file, shownAs: shown)
        } catch where error.errno == .noSuchFileOrDirectory || error.errno == .notDirectory {
            return .absent
        } catch {
            return .unusable("'\(shown)' cannot be read: \(error)")
        }
    }

    /// The bytes of the open record, when it is a regular file of at most `limit` bytes.
    private static func contents(of file: borrowing FileDescriptor, shownAs shown: String) -> Contents {
        guard let status = try? file.status(), status.kind == .regular else {
            return .unusable("'\(shown)' is not a regular file")
        }
        guard status.size <= Int64(limit) else { return .unusable("'\(shown)' is larger than \(limit) bytes") }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        guard let count = try? bytes.withUnsafeMutableBytes({ try file.readFully(into: $0, at: 0) }), count <= limit else {
            return .unusable("'\(shown)' cannot be read whole")
        }
        return .bytes(Array(bytes[..<count]))
    }

    /// Replaces the record of the package at `packagePath` with `bytes`, atomically, under
    /// the package's exclusive lock (after recovering an interrupted save), only while it
    /// still says what the package holds: when the package still hashes to `rootHash`, or
    /// when its record is still `unchanged` (the one the caller started from: no pull
    /// committed another since, and the saves that did keep it, so what they changed is
    /// rightly a change made since the version `bytes` names).
    ///
    /// - Returns: false when neither holds (nothing written).
    /// - Complexity: one read of the record; when it changed, a scan of the package with
    ///   its manifest's stat cache (a stat per entry); then one small file written and renamed.
    package static func replace(
        with bytes: [UInt8], packagePath: String, ifRootHash rootHash: ContentHash, orRecordIs unchanged: Contents? = nil,
        workers: Int, durability: Durability
    ) throws -> Bool {
        let package = try PackageLocation(packagePath)
        return try PackageScope.withPackage(at: package, access: .exclusive, durability: durability) { _ in
            let root = try FileDescriptor.openDirectory(package.path)
            let recordKept = unchanged.map { read(in: root.rawValue, shownAs: package.metadataPath) == $0 } ?? false
            if !recordKept {
                guard try PackageScan.scan(package.path, workers: workers).snapshot.rootHash == rootHash else { return false }
            }
            try write(bytes, in: root, package: package, durability: durability)
            return true
        }
    }

    /// Writes the record atomically into the package open as `root`, making `.pkgtool`
    /// when it is missing. Neither is reached through a link.
    static func write(
        _ bytes: [UInt8], in root: borrowing FileDescriptor, package: PackageLocation, durability: Durability
    ) throws {
        let metadataName = PackageLayout.metadataDirectoryName
        if try FileSystem.statusIfExists(metadataName, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(metadataName, relativeTo: root.rawValue, displayPath: package.metadataPath)
            if durability == .full { try root.sync() }
        }
        let metadata = try FileDescriptor.openDirectory(metadataName, relativeTo: root.rawValue, displayPath: package.metadataPath)
        try AtomicFile.write(
            named: PackageLayout.syncRecordFileName, in: metadata,
            displayPath: package.metadataPath + "/" + PackageLayout.syncRecordFileName, permissions: 0o644,
            durability: durability
        ) { file in
            try bytes.withUnsafeBytes { try file.write($0) }
        }
    }
}
