import Glibc
import PackageCore

/// A ZIP archive opened for reading, its structure checked.
///
/// `open` reads the end record, the central directory and every local header, and refuses
/// (`ZipError`, one line naming the entry) anything corrupt, inconsistent or hostile before
/// a byte of data is inflated: see Specs/zip.md, "What we accept and refuse". The data is
/// checked when read (`verify`, `extract`, `withContents`): sizes, CRC-32 and our content
/// hash. Reading is thread-safe (positioned reads only), so verification and extraction
/// run on all cores.
///
/// ```swift
/// let archive = try ZipArchive.open("doc.zip")
/// for entry in archive.entries { print(entry.path, entry.uncompressedSize) }
/// try archive.verify()
/// try archive.extract(to: "doc")
/// ```
public final class ZipArchive: @unchecked Sendable {
    // @unchecked: every stored property is immutable after `open`, and the descriptor is
    // only used with positioned reads (pread), which share no offset between threads.

    /// The path the archive was opened with.
    public let path: String
    /// Entries in central-directory order.
    public let entries: [ZipEntry]
    /// The archive's size in bytes.
    public let fileSize: Int64
    /// The archive comment (raw bytes decoded as UTF-8, repaired).
    public let comment: String
    /// Where the central directory starts: every entry ends at or before it.
    package let centralDirectoryOffset: Int64
    /// Whether the archive used ZIP64 end records.
    public let isZip64: Bool
    /// The limits the archive was opened with; extraction checks them again.
    public let limits: ZipLimits
    /// Bytes below the central directory that in-place appends left dead (old versions of
    /// entries, old central directories), as the archive declares them.
    package let deadRanges: [Range<Int64>]
    let file: FileDescriptor
    /// The entries' paths as a tree (parents, implied directories): see `PathTree`.
    let tree: PathTree
    private let indexByPath: [RelativePath: Int]

    private init(
        path: String, file: consuming FileDescriptor, fileSize: Int64, entries: [ZipEntry], tree: PathTree,
        comment: String, centralDirectoryOffset: Int64, isZip64: Bool, limits: ZipLimits, deadRanges: [Range<Int64>]
    ) {
        self.deadRanges = deadRanges
        self.path = path
        self.file = file
        self.fileSize = fileSize
        self.entries = entries
        self.tree = tree
        self.comment = comment
        self.centralDirectoryOffset = centralDirectoryOffset
        self.isZip64 = isZip64
        self.limits = limits
        var index: [RelativePath: Int] = [:]
        index.reserveCapacity(entries.count)
        for (position, entry) in entries.enumerated() { index[entry.relativePath] = position }
        self.indexByPath = index
    }

    /// The entry at `path`, byte for byte (`é` does not find `e\u{301}`).
    public func entry(at path: RelativePath) -> ZipEntry? { indexByPath[path].map { entries[$0] } }

    /// The entry at `path` (no trailing slash for directories), byte for byte; nil when
    /// `path` is not a normalised relative path.
    public func entry(at path: String) -> ZipEntry? { RelativePath(validating: path).flatMap { entry(at: $0) } }

    /// Whether the file at `path` starts like a ZIP archive (a local header, or an empty
    /// archive's end record): a cheap test for commands that accept trees or archives.
    ///
    /// - Complexity: one `open` and one 4-byte read.
    public static func looksLikeArchive(_ path: String) -> Bool {
        guard let file = try? FileDescriptor.open(path, options: .nonBlocking),
            let status = try? file.status(), status.kind == .regular
        else { return false }
        var signature: UInt32 = 0
        let count = (try? withUnsafeMutableBytes(of: &signature) { try file.readFully(into: $0, at: 0) }) ?? 0
        let value = UInt32(littleEndian: signature)
        return count == 4 && (value == ZipFormat.localHeaderSignature || value == ZipFormat.endSignature)
    }

    /// Opens and checks the archive at `path`.
    ///
    /// - Throws: `ZipError` when the archive is refused; `FileSystemError` when it cannot be read.
    /// - Complexity: reads the last 64 KiB, the central directory, every local header (in
    ///   256 KiB windows, in file order) and the targets of symbolic links; memory is about
    ///   the central directory's size.
    public static func open(_ path: String, limits: ZipLimits = .default) throws -> ZipArchive {
        // An in-place append that was interrupted is finished or undone first (when this
        // process may write), and an append in progress is waited for (Specs/zip.md,
        // "Appending in place").
        AppendRecovery.recover(path)
        let file = try FileDescriptor.open(path, options: .nonBlocking)
        let kind = try file.status().kind
        guard kind == .regular else {
            throw FileSystemError(.open, path: path, reason: "is a \(kind), not a ZIP archive")
        }
        let locked = (try? file.lock(exclusive: false)) != nil
        let status = try file.status()
        let length = AppendRecovery.readableLength(of: file, path: path, status: status)
        var parser = ArchiveParser(path: path, size: length, limits: limits)
        let parsed: ParsedArchive
        do {
            parsed = try parser.parse(file)
        } catch {
            if locked { file.unlock() }
            throw error
        }
        // Appends never write below the length read, so the lock need not outlive the parse.
        if locked { file.unlock() }
        var entries = parsed.entries
        try readLinkTargets(&entries, tree: parsed.tree, file: file, path: path, limits: limits)
        return ZipArchive(
            path: path, file: file, fileSize: length, entries: entries, tree: parsed.tree, comment: parsed.comment,
            centralDirectoryOffset: parsed.centralDirectoryOffset, isZip64: parsed.isZip64, limits: limits,
            deadRanges: parsed.deadRanges)
    }

    /// Reads every link's target, checks it, and refuses links that would lead outside.
    private static func readLinkTargets(
        _ entries: inout [ZipEntry], tree: PathTree, file: borrowing FileDescriptor, path: String, limits: ZipLimits
    ) throws {
        let links = entries.indices.filter { entries[$0].kind == .symbolicLink }
        guard !links.isEmpty else { return }
        let reader = EntryReader()
        for index in links {
            let entry = entries[index]
            guard entry.uncompressedSize <= Int64(limits.maximumLinkTargetLength) else {
                throw ZipError(
                    .limit, archive: path, entry: entry.path,
                    "the link target is \(entry.uncompressedSize) bytes, over the limit of \(limits.maximumLinkTargetLength)")
            }
            var bytes: [UInt8] = []
            try reader.read(entry, file: file, archivePath: path) { bytes.append(contentsOf: $0) }
            guard !bytes.isEmpty else { throw ZipError(.malformed, archive: path, entry: entry.path, "the link target is empty") }
            guard !bytes.contains(0) else {
                throw ZipError(.malformed, archive: path, entry: entry.path, "the link target contains a NUL byte")
            }
            guard let target = String(validating: bytes, as: UTF8.self) else {
                throw ZipError(.malformed, archive: path, entry: entry.path, "the link target is not valid UTF-8")
            }
            entries[index].linkTarget = target
        }
        var resolution = LinkResolution(tree: tree, entries: entries)
        for index in links {
            if let problem = resolution.problem(link: index) {
                throw ZipError(.symlinkEscape, archive: path, entry: entries[index].path, problem)
            }
        }
    }
}
