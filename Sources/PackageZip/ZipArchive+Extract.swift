import Glibc
import PackageCore
import Synchronization

extension ZipArchive {
    /// What an extraction wrote.
    public struct ExtractReport: Sendable {
        public var files: Int
        public var directories: Int
        public var links: Int
        public var bytes: Int64
    }

    /// Extracts every entry into `destination`, which must not exist or be an empty directory.
    ///
    /// The tree is built in a hidden staging directory beside `destination`
    /// (`.NAME.pkgtool-tmp-…`) and renamed into place only when every entry has been written
    /// and checked (sizes, CRC-32, content hash); on any failure the staging directory is
    /// removed and `destination` is left as it was. Files are created with
    /// `openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)`, symbolic links last, so nothing
    /// outside the staging directory is ever written, whatever the archive holds. Modes
    /// (without set-id bits), modification times, links and empty directories are restored.
    ///
    /// - Parameters:
    ///   - durability: `.full` fsyncs every file and directory before the rename.
    ///   - progress: called from worker threads with the bytes of each file written.
    /// - Complexity: reads all compressed data once; one `openat2`, the writes, one
    ///   `fchmod` and one `futimens` per file, one `mkdirat` per directory; on `workers`
    ///   threads with about 2 MiB of buffers each.
    @discardableResult
    public func extract(
        to destination: String, workers: Int = ProcessInfoCores.active, durability: Durability = .none,
        progress: (@Sendable (Int64) -> Void)? = nil
    ) throws -> ExtractReport {
        var target = destination
        while target.count > 1 && target.hasSuffix("/") { target.removeLast() }
        let existing = try FileSystem.statusIfExists(target)
        if let existing {
            guard existing.kind == .directory else {
                throw FileSystemError(.create, path: target, errno: .fileExists, reason: "the destination exists and is not a directory")
            }
            let handle = try FileDescriptor.openDirectory(target)
            guard try DirectoryListing.names(in: handle).isEmpty else {
                throw FileSystemError(
                    .create, path: target, errno: .directoryNotEmpty, reason: "the destination exists and is not empty")
            }
        }
        let (parent, name) = Self.split(target)
        let staging = "." + name + AtomicFile.temporaryMarker + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let parentHandle = try FileDescriptor.openDirectory(parent)
        try FileSystem.makeDirectory(staging, relativeTo: parentHandle.rawValue, permissions: 0o700)
        let stagingPath = parent == "." ? staging : (parent.hasSuffix("/") ? parent + staging : parent + "/" + staging)
        do {
            let report = try populate(stagingPath, displayRoot: target, workers: workers, durability: durability, progress: progress)
            if existing != nil {
                try FileSystem.rename(
                    staging, to: name, fromDirectory: parentHandle.rawValue, toDirectory: parentHandle.rawValue)
            } else {
                try FileSystem.renameNoReplace(
                    staging, to: name, fromDirectory: parentHandle.rawValue, toDirectory: parentHandle.rawValue)
            }
            if durability == .full { try parentHandle.sync() }
            return report
        } catch {
            try? FileSystem.removeTree(staging, relativeTo: parentHandle.rawValue)
            throw error
        }
    }

    /// Writes the whole tree into the (empty, new) directory `root`.
    private func populate(
        _ root: String, displayRoot: String, workers: Int, durability: Durability, progress: (@Sendable (Int64) -> Void)?
    ) throws -> ExtractReport {
        let rootHandle = try FileDescriptor.openDirectory(root)
        let rootDescriptor = rootHandle.rawValue
        func shown(_ relative: String) -> String { displayRoot + "/" + relative }

        // Directories first, parents before children (explicit ones and the implied parents of entries).
        var directories: [PathKey: (path: String, entry: ZipEntry?)] = [:]
        for entry in entries {
            if entry.kind == .directory { directories[PathKey(entry.path)] = (entry.path, entry) }
            var parent = Substring(entry.path)
            while let slash = parent.lastIndex(of: "/") {
                parent = parent[..<slash]
                let key = PathKey(parent)
                if directories[key] == nil { directories[key] = (String(parent), nil) }
            }
        }
        let directoryPaths = directories.values.map(\.path).sorted { PathOrder.pathLess($0, $1) }
        for path in directoryPaths {
            do { try FileSystem.makeDirectory(path, relativeTo: rootDescriptor, permissions: 0o700) } catch {
                throw FileSystemError(.makeDirectory, path: shown(path), errno: error.errno, reason: error.reason)
            }
        }

        // Files, in parallel. Each is created exclusively, never through a link.
        let bytes = Atomic<Int64>(0)
        let files = Atomic<Int>(0)
        try forEachEntryInParallel(workers: workers, skipDirectories: true) { entry, reader in
            guard entry.kind == .regular else { return }
            let file = try FileDescriptor.openWithoutSymlinks(
                entry.path, relativeTo: rootDescriptor, access: .writeOnly, options: [.create, .exclusive],
                permissions: 0o600, beneath: true, displayPath: displayRoot + "/" + entry.path)
            try reader.read(entry, file: self.file, archivePath: self.path) { chunk in try file.write(chunk) }
            try file.setPermissions(entry.permissions)
            try file.setModificationTime(entry.modificationTime)
            if durability == .full { try file.sync() }
            try file.close()
            bytes.add(entry.uncompressedSize, ordering: .relaxed)
            files.add(1, ordering: .relaxed)
            progress?(entry.uncompressedSize)
        }

        // Links last: no file or directory is ever created after a link exists.
        var links = 0
        for entry in entries where entry.kind == .symbolicLink {
            guard let target = entry.linkTarget else { continue }
            do {
                try FileSystem.makeSymbolicLink(entry.path, target: target, relativeTo: rootDescriptor)
                try FileSystem.setModificationTime(entry.path, entry.modificationTime, relativeTo: rootDescriptor)
            } catch {
                throw FileSystemError(error.operation, path: shown(entry.path), errno: error.errno, reason: error.reason)
            }
            links += 1
        }

        // Directory modes and times last, deepest first (a read-only directory is finished).
        for path in directoryPaths.reversed() {
            let entry = directories[PathKey(path)]?.entry
            do {
                try FileSystem.setPermissions(path, entry?.permissions ?? 0o755, relativeTo: rootDescriptor)
                if let entry { try FileSystem.setModificationTime(path, entry.modificationTime, relativeTo: rootDescriptor) }
                if durability == .full { try FileSystem.syncDirectory(path, relativeTo: rootDescriptor) }
            } catch {
                throw FileSystemError(error.operation, path: shown(path), errno: error.errno, reason: error.reason)
            }
        }
        try rootHandle.setPermissions(0o755)
        if durability == .full { try rootHandle.sync() }
        return ExtractReport(
            files: files.load(ordering: .relaxed), directories: directoryPaths.count, links: links,
            bytes: bytes.load(ordering: .relaxed))
    }

    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = path[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(path[path.index(after: slash)...]))
    }
}
