/// The redo journal of a journaled save: the renames, removals, directory creations and
/// permission changes that turn the package into the new snapshot once every new file
/// sits, fsynced, under a temporary name in `.pkgtool/tmp` (Specs/save.md).
///
/// Its presence at `.pkgtool/journal` is the commit point. Applying it is idempotent, so
/// recovery simply applies it again after a crash, however far the first attempt got.
///
/// A journal is input, not trusted state: a package can arrive from anywhere (an archive,
/// a tarball, a shared folder) carrying one. `decode` accepts only a journal whose every
/// path is a normalised relative path (`RelativePath`) that names package content or one
/// of pkgtool's own manifest files (or, renamed into place, the sync record), and which is bound to this very package directory: it
/// records the inodes of the package root and of `.pkgtool/tmp` when it was written, which
/// a copy of the package does not have. `apply` then resolves every path beneath the
/// package root without following any symbolic link (`openat2` with `RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS`), so even a journal that passed would stay inside the package.
package struct SaveJournal: Equatable {
    package enum Operation: Equatable {
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
        /// Write the bytes of `.pkgtool/tmp/<data>` over the file at `path` — which must
        /// still be the inode `inode`, linked once — range after range, then give it `size`,
        /// `permissions` and `modificationTime`: a chunk patch, written again identically
        /// when applied again.
        case patch(
            path: String, data: String, inode: UInt64, size: Int64, permissions: UInt32, modificationTime: Int64,
            ranges: [Range<Int64>])
    }

    static let fileName = "journal"
    static let temporaryDirectoryName = "tmp"
    static let magic: [UInt8] = Array("PKGJRNL".utf8) + [0]
    static let version: UInt32 = 2

    /// The directories this journal was written for (their inodes).
    package struct Binding: Equatable {
        package var root: UInt64
        package var temporaryDirectory: UInt64

        package init(root: UInt64, temporaryDirectory: UInt64) {
            self.root = root
            self.temporaryDirectory = temporaryDirectory
        }
    }

    package var binding: Binding
    package var operations: [Operation]

    package init(binding: Binding, operations: [Operation]) {
        self.binding = binding
        self.operations = operations
    }

    /// The journal's bytes, one `ChecksummedFrame` (the fuzzer's seeds use it too).
    package func encoded() -> [UInt8] {
        ChecksummedFrame.encode(magic: Self.magic, version: Self.version) { writer in encode(to: &writer) }
    }

    /// The frame's payload: flags, binding, operations.
    private func encode(to writer: inout ByteWriter) {
        writer.append(UInt32(0))
        writer.append(binding.root)
        writer.append(binding.temporaryDirectory)
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
            case .patch(let path, let data, let inode, let size, let permissions, let modificationTime, let ranges):
                writer.append(UInt8(5))
                appendString(path)
                appendString(data)
                writer.append(inode)
                writer.append(size)
                writer.append(permissions)
                writer.append(modificationTime)
                writer.append(UInt32(ranges.count))
                for range in ranges {
                    writer.append(range.lowerBound)
                    writer.append(range.upperBound)
                }
            }
        }
    }

    /// Why a journal was refused: a sentence for the warning that sets it aside.
    struct Refusal: Error, Equatable {
        var reason: String
    }

    /// The refusal of bytes that are not a whole journal frame.
    private static func refusal(_ frame: ChecksummedFrame.Refusal) -> Refusal {
        switch frame {
        case .truncated: return Refusal(reason: "it is truncated")
        case .badMagic: return Refusal(reason: "it is not a pkgtool journal")
        case .checksumMismatch: return Refusal(reason: "its checksum does not match")
        case .futureVersion(let found): return versionRefusal(found)
        }
    }

    private static func versionRefusal(_ found: UInt32) -> Refusal {
        Refusal(reason: "it is version \(found), and only version \(version) journals are applied")
    }

    /// Decodes and validates a journal. Refused (never to be applied): bytes that are not a
    /// whole journal of this version (magic, version, checksum, truncation), a path that is
    /// not a normalised relative path or that reaches into pkgtool's metadata beyond the
    /// manifest's own files, a temporary that is not a plain name, permission bits beyond
    /// 0o7777, and a binding to another directory than `expected`.
    static func decode(_ bytes: [UInt8], expected: Binding) -> Result<SaveJournal, Refusal> {
        bytes.withUnsafeBytes { raw -> Result<SaveJournal, Refusal> in
            let frame: ChecksummedFrame.Opened
            do throws(ChecksummedFrame.Refusal) {
                // Flags, binding and operation count at least.
                frame = try ChecksummedFrame.open(raw, magic: magic, highestVersion: version, minimumPayload: 4 + 16 + 8)
            } catch {
                return .failure(refusal(error))
            }
            guard frame.version == version else { return .failure(versionRefusal(frame.version)) }
            var reader = ByteReader(frame.payload)
            do {
                _ = try reader.read(UInt32.self)
                let binding = Binding(root: try reader.read(UInt64.self), temporaryDirectory: try reader.read(UInt64.self))
                guard binding == expected else {
                    return .failure(Refusal(reason: "it was not written for this directory (it came with a copy of the package)"))
                }
                let count = try reader.read(UInt64.self)
                guard count <= UInt64(reader.remaining / 3) else { return .failure(Refusal(reason: "it is truncated")) }
                var operations: [Operation] = []
                for _ in 0..<count {
                    let operation: Operation
                    switch try decodeOperation(&reader) {
                    case .success(let decoded): operation = decoded
                    case .failure(let refusal): return .failure(refusal)
                    }
                    if let problem = validate(operation) { return .failure(Refusal(reason: problem)) }
                    operations.append(operation)
                }
                guard reader.remaining == 0 else { return .failure(Refusal(reason: "it has trailing bytes")) }
                return .success(SaveJournal(binding: binding, operations: operations))
            } catch {
                return .failure(Refusal(reason: "it is truncated"))
            }
        }
    }

    /// Decodes one operation, its code first; a refusal when it is malformed.
    private static func decodeOperation(_ reader: inout ByteReader) throws(ByteReader.Truncated) -> Result<Operation, Refusal> {
        let malformed = Result<Operation, Refusal>.failure(Refusal(reason: "an operation is malformed"))
        let code = try reader.read(UInt8.self)
        switch code {
        case 1:
            guard let path = try readString(&reader), let kind = FileKind(rawValue: try reader.read(UInt8.self)) else {
                return malformed
            }
            return .success(.remove(path: path, kind: kind))
        case 2:
            guard let path = try readString(&reader) else { return malformed }
            return .success(.makeDirectory(path: path, permissions: try reader.read(UInt32.self)))
        case 3:
            guard let temporary = try readString(&reader), let path = try readString(&reader) else { return malformed }
            return .success(.rename(temporary: temporary, path: path))
        case 4:
            guard let path = try readString(&reader) else { return malformed }
            return .success(.setPermissions(path: path, permissions: try reader.read(UInt32.self)))
        case 5:
            guard let path = try readString(&reader), let data = try readString(&reader) else { return malformed }
            return try decodePatch(path: path, data: data, &reader)
        default:
            return .failure(Refusal(reason: "it holds an unknown operation (\(code))"))
        }
    }

    /// A patch's fields after its paths: the file it patches and its ranges, which must be
    /// in order, disjoint and inside the file.
    private static func decodePatch(
        path: String, data: String, _ reader: inout ByteReader
    ) throws(ByteReader.Truncated) -> Result<Operation, Refusal> {
        let inode = try reader.read(UInt64.self)
        let size = try reader.read(Int64.self)
        let permissions = try reader.read(UInt32.self)
        let modificationTime = try reader.read(Int64.self)
        let count = Int(try reader.read(UInt32.self))
        guard count <= reader.remaining / 16 else { return .failure(Refusal(reason: "it is truncated")) }
        var ranges: [Range<Int64>] = []
        ranges.reserveCapacity(count)
        for _ in 0..<count {
            let lower = try reader.read(Int64.self)
            let upper = try reader.read(Int64.self)
            guard lower >= 0, lower < upper, upper <= size, lower >= (ranges.last?.upperBound ?? 0) else {
                return .failure(Refusal(reason: "a patch's ranges are malformed"))
            }
            ranges.append(lower..<upper)
        }
        return .success(
            .patch(
                path: path, data: data, inode: inode, size: size, permissions: permissions,
                modificationTime: modificationTime, ranges: ranges))
    }

    /// A string of at most 65,535 bytes, its length first; nil when it is not UTF-8.
    private static func readString(_ reader: inout ByteReader) throws(ByteReader.Truncated) -> String? {
        let length = Int(try reader.read(UInt16.self))
        return String(validating: try reader.bytes(length), as: UTF8.self)
    }

    /// Why `operation` may not be applied, or nil when it may.
    static func validate(_ operation: Operation) -> String? {
        let metadata = PackageLayout.metadataDirectoryName
        func contentPath(_ path: String) -> String? {
            guard !path.isEmpty, RelativePath.isNormalized(path) else {
                return "it names '\(path)', which is not a relative path inside the package"
            }
            if RelativePath(trusted: path).isSelfOrDescendant(of: RelativePath(trusted: metadata)) {
                return "it names '\(path)', inside pkgtool's own metadata"
            }
            return nil
        }
        func isManifestFile(_ path: String) -> Bool {
            guard PathOrder.hasBytePrefix(path, metadata + "/") else { return false }
            let name = PathOrder.droppingBytes(metadata.utf8.count + 1, from: path)
            return PathOrder.sameBytes(name, PackageLayout.indexFileName) || PackageLayout.deltaSequence(name) != nil
        }
        switch operation {
        case .remove(let path, let kind):
            if isManifestFile(path) && kind == .regular { return nil }
            return contentPath(path)
        case .makeDirectory(let path, let permissions), .setPermissions(let path, let permissions):
            if permissions & ~0o7777 != 0 { return "it sets permission bits \(String(permissions, radix: 8))" }
            return contentPath(path)
        case .rename(let temporary, let path):
            guard RelativePath.isValidName(temporary) else { return "it moves '\(temporary)', which is not a temporary of its own" }
            if isManifestFile(path) || PathOrder.sameBytes(path, metadata + "/" + PackageLayout.syncRecordFileName)
                || PathOrder.sameBytes(path, PackageLayout.conflictsRecordPath)
            {
                return nil
            }
            return contentPath(path)
        case .patch(let path, let data, _, let size, let permissions, _, _):
            guard RelativePath.isValidName(data) else { return "it patches from '\(data)', which is not a temporary of its own" }
            if permissions & ~0o7777 != 0 { return "it sets permission bits \(String(permissions, radix: 8))" }
            if size < 0 { return "it gives a file a negative size" }
            return contentPath(path)
        }
    }

    /// Applies every operation to the package open as `root`, then fsyncs every directory
    /// whose entries changed (children before parents) when durability asks. Safe to run
    /// again on a partly applied package. Every path is resolved beneath `root` without
    /// following a symbolic link; a directory of the package that refuses a change (no
    /// write permission) is opened up for it and given its bits back.
    ///
    /// - Returns: the number of entries removed.
    /// - Throws: `FileSystemError` naming the package path that could not be changed.
    /// - Complexity: one system call per operation (a removal: one per removed entry),
    ///   one `openat2` per operation's parent, plus one fsync per touched directory.
    func apply(root: borrowing FileDescriptor, package: PackageLocation, durability: Durability) throws -> Int {
        var touched = Set<RelativePath>()  // by bytes: twin folders are two
        var removedEntries = 0
        let temporaryPath = PackageLayout.metadataDirectoryName + "/" + Self.temporaryDirectoryName
        let temporary = try PackageTreeAccess.openDirectory(temporaryPath, in: root, package: package)
        for operation in operations {
            let path = operation.path
            let (parentPath, name) = (RelativePath.parent(of: path), RelativePath.lastComponent(of: path))
            let parent = try PackageTreeAccess.openDirectory(parentPath, in: root, package: package)
            let shown = package.inside(path)
            switch operation {
            case .remove(_, let kind):
                if let status = try FileSystem.statusIfExists(name, relativeTo: parent.rawValue), status.kind == kind {
                    removedEntries += try PackageTreeAccess.withWritable(parent, shownAs: package.inside(parentPath)) {
                        try FileSystem.removeTreeCountingEntries(name, relativeTo: parent.rawValue, displayPath: shown)
                    }
                    touched.insert(RelativePath(trusted: parentPath))
                }
            case .makeDirectory(_, let permissions):
                if try Self.makeDirectory(
                    name, in: parent, permissions: permissions, shownAs: shown, parentShownAs: package.inside(parentPath))
                {
                    touched.insert(RelativePath(trusted: parentPath))
                }
            case .rename(let temporaryName, _):
                if try Self.rename(
                    temporaryName, from: temporary, to: name, in: parent, shownAs: shown,
                    parentShownAs: package.inside(parentPath))
                {
                    touched.insert(RelativePath(trusted: parentPath))
                    touched.insert(RelativePath(trusted: temporaryPath))
                }
            case .patch(_, let data, let inode, let size, let permissions, let modificationTime, let ranges):
                try applyPatch(
                    name, in: parent, shownAs: shown, data: data, temporary: temporary, inode: inode, size: size,
                    permissions: permissions, modificationTime: modificationTime, ranges: ranges, durability: durability)
            case .setPermissions(_, let permissions):
                try Self.setPermissions(name, in: parent, to: permissions, shownAs: shown)
            }
        }
        if durability == .full { try Self.syncDirectories(touched, in: root, package: package) }
        return removedEntries
    }

    /// Applies one `.makeDirectory`: nothing when the folder is there already (applied
    /// before), refused when something else stands there. Returns whether it made one.
    private static func makeDirectory(
        _ name: String, in parent: borrowing FileDescriptor, permissions: UInt32, shownAs shown: String,
        parentShownAs parentShown: String
    ) throws -> Bool {
        if let status = try FileSystem.statusIfExists(name, relativeTo: parent.rawValue) {
            if status.kind != .directory {
                throw FileSystemError(
                    .makeDirectory, path: shown, errno: .fileExists,
                    reason: "a \(status.kind) stands where the saved version has a folder")
            }
            return false
        }
        try PackageTreeAccess.withWritable(parent, shownAs: parentShown) {
            do throws(FileSystemError) {
                try FileSystem.makeDirectory(name, relativeTo: parent.rawValue, permissions: permissions)
            } catch {
                throw error.naming(shown)
            }
        }
        return true
    }

    /// Applies one `.rename`, skipped when the temporary is gone (already done). Returns
    /// whether it renamed.
    private static func rename(
        _ temporaryName: String, from temporary: borrowing FileDescriptor, to name: String,
        in parent: borrowing FileDescriptor, shownAs shown: String, parentShownAs parentShown: String
    ) throws -> Bool {
        guard try FileSystem.statusIfExists(temporaryName, relativeTo: temporary.rawValue) != nil else { return false }
        try PackageTreeAccess.withWritable(parent, shownAs: parentShown) {
            do throws(FileSystemError) {
                try FileSystem.rename(
                    temporaryName, to: name, fromDirectory: temporary.rawValue, toDirectory: parent.rawValue)
            } catch {
                throw error.naming(shown, destination: nil)
            }
        }
        return true
    }

    /// Applies one `.setPermissions`, never through a link: permissions of link targets are
    /// not the package's.
    private static func setPermissions(
        _ name: String, in parent: borrowing FileDescriptor, to permissions: UInt32, shownAs shown: String
    ) throws {
        guard let status = try FileSystem.statusIfExists(name, relativeTo: parent.rawValue) else {
            throw FileSystemError(.setPermissions, path: shown, errno: .noSuchFileOrDirectory)
        }
        if status.kind != .symbolicLink {
            do throws(FileSystemError) { try FileSystem.setPermissions(name, permissions, relativeTo: parent.rawValue) } catch {
                throw error.naming(shown)
            }
        }
    }

    /// fsyncs every directory whose entries changed, deeper ones first, so a parent's entry
    /// for a new child directory is flushed after the child's own entries.
    private static func syncDirectories(
        _ touched: Set<RelativePath>, in root: borrowing FileDescriptor, package: PackageLocation
    ) throws {
        for directory in touched.map(\.string).sorted(by: { RelativePath.depth(of: $0) > RelativePath.depth(of: $1) }) {
            let handle = try PackageTreeAccess.openDirectory(directory, in: root, package: package)
            try handle.sync()
        }
    }
}

extension SaveJournal {
    /// Applies one `.patch` operation (see `Operation.patch`). Refused — the journal then set
    /// aside — when the file is no longer the one the save patched, or its data is not whole.
    fileprivate func applyPatch(
        _ name: String, in parent: borrowing FileDescriptor, shownAs shown: String, data: String,
        temporary: borrowing FileDescriptor, inode: UInt64, size: Int64, permissions: UInt32, modificationTime: Int64,
        ranges: [Range<Int64>], durability: Durability
    ) throws {
        let source: FileDescriptor
        do {
            source = try FileDescriptor.open(data, relativeTo: temporary.rawValue, options: [.noFollow, .nonBlocking])
        } catch {
            throw Refusal(reason: "the data of its patch of '\(shown)' is missing")
        }
        let length = ranges.reduce(Int64(0)) { $0 + ($1.upperBound - $1.lowerBound) }
        guard try source.status().size == length else {
            throw Refusal(reason: "the data of its patch of '\(shown)' is not whole")
        }
        let target = try FileDescriptor.open(
            name, relativeTo: parent.rawValue, access: .writeOnly, options: [.noFollow, .nonBlocking], displayPath: shown)
        let status = try target.status()
        guard status.kind == .regular, status.inode == inode, status.linkCount == 1 else {
            throw Refusal(reason: "'\(shown)' is no longer the file its save patched")
        }
        let buffer = ChunkBuffer()
        var offset: Int64 = 0
        for range in ranges {
            try FileCopy.copyRange(
                from: source.rawValue, path: source.path, at: offset, to: target.rawValue, path: shown, at: range.lowerBound,
                length: range.upperBound - range.lowerBound, buffer: buffer)
            offset += range.upperBound - range.lowerBound
        }
        try target.truncate(to: size)
        try target.setPermissions(permissions)
        try target.setModificationTime(modificationTime)
        if durability == .full { try target.sync() }
    }
}
