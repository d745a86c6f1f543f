/// The redo journal of a journaled save: the renames, removals, directory creations and
/// permission changes that turn the package into the new snapshot once every new file
/// sits, fsynced, under a temporary name in `.pkgtool/tmp` (Specs/save.md).
///
/// Its presence at `.pkgtool/journal` is the commit point. Applying it is idempotent, so
/// recovery simply applies it again after a crash, however far the first attempt got.
struct SaveJournal: Equatable {
    enum Operation: Equatable {
        /// Remove the entry at `path` and everything beneath it, when it is still of kind
        /// `kind` (missing, or already replaced by the new entry of another kind, is fine).
        case remove(path: String, kind: FileKind)
        /// Create the directory `path` (existing is fine) with these permission bits.
        case makeDirectory(path: String, permissions: UInt32)
        /// Move `.pkgtool/tmp/<temporary>` to `path`, replacing a file or link there.
        /// A missing temporary means the move already happened.
        case rename(temporary: String, path: String)
        /// Set the permission bits of `path`.
        case setPermissions(path: String, permissions: UInt32)
    }

    static let fileName = "journal"
    static let temporaryDirectoryName = "tmp"
    static let magic: [UInt8] = Array("PKGJRNL".utf8) + [0]
    static let version: UInt32 = 1

    var operations: [Operation]

    func encoded() -> [UInt8] {
        var writer = ByteWriter()
        writer.append(contentsOf: Self.magic)
        writer.append(Self.version)
        writer.append(UInt32(0))
        writer.append(UInt64(operations.count))
        func appendString(_ text: String) {
            let bytes = Array(text.utf8)
            writer.append(UInt16(bytes.count))
            writer.append(contentsOf: bytes)
        }
        for operation in operations {
            switch operation {
            case .remove(let path, let kind):
                writer.append(UInt8(1))
                appendString(path)
                writer.append(kind.rawValue)
            case .makeDirectory(let path, let permissions):
                writer.append(UInt8(2))
                appendString(path)
                writer.append(permissions)
            case .rename(let temporary, let path):
                writer.append(UInt8(3))
                appendString(temporary)
                appendString(path)
            case .setPermissions(let path, let permissions):
                writer.append(UInt8(4))
                appendString(path)
                writer.append(permissions)
            }
        }
        let checksum = writer.bytes.withUnsafeBytes { ContentHash.of($0) }
        writer.append(checksum)
        return writer.bytes
    }

    /// Decodes a journal; nil when it is not one we wrote whole (wrong magic, version or checksum).
    static func decode(_ bytes: [UInt8]) -> SaveJournal? {
        guard bytes.count >= 8 + 16 + 16 else { return nil }
        return bytes.withUnsafeBytes { raw -> SaveJournal? in
            let body = UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 16)])
            let stored = ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: raw[(raw.count - 16)...]))
            guard body.prefix(8).elementsEqual(magic), ContentHash.of(body) == stored else { return nil }
            var reader = ByteReader(body, offset: 8)
            do {
                guard try reader.read(UInt32.self) == version else { return nil }
                _ = try reader.read(UInt32.self)
                let count = try reader.read(UInt64.self)
                guard count <= UInt64(reader.remaining / 3) else { return nil }
                func readString() throws(ByteReader.Truncated) -> String? {
                    let length = Int(try reader.read(UInt16.self))
                    return String(validating: try reader.bytes(length), as: UTF8.self)
                }
                var operations: [Operation] = []
                for _ in 0..<count {
                    switch try reader.read(UInt8.self) {
                    case 1:
                        guard let path = try readString(), let kind = FileKind(rawValue: try reader.read(UInt8.self))
                        else { return nil }
                        operations.append(.remove(path: path, kind: kind))
                    case 2:
                        guard let path = try readString() else { return nil }
                        operations.append(.makeDirectory(path: path, permissions: try reader.read(UInt32.self)))
                    case 3:
                        guard let temporary = try readString(), let path = try readString() else { return nil }
                        operations.append(.rename(temporary: temporary, path: path))
                    case 4:
                        guard let path = try readString() else { return nil }
                        operations.append(.setPermissions(path: path, permissions: try reader.read(UInt32.self)))
                    default:
                        return nil
                    }
                }
                guard reader.remaining == 0 else { return nil }
                return SaveJournal(operations: operations)
            } catch {
                return nil
            }
        }
    }

    /// Applies every operation to the package whose root is open as `root`, then fsyncs
    /// every directory whose entries changed (children before parents) when durability asks.
    /// Safe to run again on a partly applied package.
    ///
    /// - Complexity: one system call per operation (a removal: one per removed entry),
    ///   plus one fsync per touched directory.
    func apply(root: borrowing FileDescriptor, rootPath: String, durability: Durability) throws -> Int {
        var touched = Set<String>()
        var removedEntries = 0
        let temporaryPrefix = PackageLayout.metadataDirectoryName + "/" + Self.temporaryDirectoryName + "/"
        for operation in operations {
            switch operation {
            case .remove(let path, let kind):
                if let status = try FileSystem.statusIfExists(path, relativeTo: root.rawValue), status.kind == kind {
                    removedEntries += status.kind == .directory ? try countEntries(path, root: root) : 1
                    try FileSystem.removeTree(path, relativeTo: root.rawValue)
                    touched.insert(Self.parent(of: path))
                }
            case .makeDirectory(let path, let permissions):
                if let status = try FileSystem.statusIfExists(path, relativeTo: root.rawValue) {
                    if status.kind != .directory {
                        throw FileSystemError(.makeDirectory, path: PackageLayout.joined(rootPath, path), errno: .fileExists)
                    }
                } else {
                    try FileSystem.makeDirectory(path, relativeTo: root.rawValue, permissions: permissions)
                    touched.insert(Self.parent(of: path))
                }
                try FileSystem.setPermissions(path, permissions, relativeTo: root.rawValue)
            case .rename(let temporary, let path):
                let from = temporaryPrefix + temporary
                if try FileSystem.statusIfExists(from, relativeTo: root.rawValue) != nil {
                    try FileSystem.rename(from, to: path, fromDirectory: root.rawValue, toDirectory: root.rawValue)
                    touched.insert(Self.parent(of: path))
                    touched.insert(PackageLayout.metadataDirectoryName + "/" + Self.temporaryDirectoryName)
                }
            case .setPermissions(let path, let permissions):
                try FileSystem.setPermissions(path, permissions, relativeTo: root.rawValue)
            }
        }
        if durability == .full {
            // Deeper directories first, so a parent's entry for a new child directory is
            // flushed after the child's own entries.
            for directory in touched.sorted(by: { $0.split(separator: "/").count > $1.split(separator: "/").count }) {
                try FileSystem.syncDirectory(directory.isEmpty ? "." : directory, relativeTo: root.rawValue)
            }
        }
        return removedEntries
    }

    private func countEntries(_ path: String, root: borrowing FileDescriptor) throws -> Int {
        let directory = try FileDescriptor.openDirectory(path, relativeTo: root.rawValue)
        var count = 1
        for entry in try DirectoryListing.entries(in: directory) {
            if entry.kind == .directory {
                count += try countEntries(path + "/" + entry.name, root: root)
            } else {
                count += 1
            }
        }
        return count
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }
}
