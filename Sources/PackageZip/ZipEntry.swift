import PackageCore

/// One entry of an opened archive, as its central directory describes it after every
/// check of `ZipArchive.open` passed.
public struct ZipEntry: Sendable, Equatable {
    /// The relative path, without a directory's trailing slash: what the entry is compared,
    /// looked up, ordered and extracted by, as bytes (`é` and `e\u{301}` are two entries).
    /// It passed `RelativePath`'s rules and the ZIP-only ones of `ZipNames` at open.
    public var relativePath: RelativePath
    /// Regular file, directory or symbolic link (other Unix types are read as files).
    public var kind: FileKind
    /// Permission bits (`0o777`): from the Unix mode when the archive records one (made on
    /// Unix or macOS, upper 16 bits of the external attributes not all zero), 0000 included;
    /// otherwise 0o644 for files and links, 0o755 for directories. Set-id and sticky bits
    /// are dropped.
    public var permissions: UInt32
    /// Modification time, nanoseconds since the epoch (whole seconds: from the extended
    /// timestamp field 0x5455 when present, else from the DOS fields, read as UTC).
    public var modificationTime: Int64
    /// How the data is compressed: stored or deflated.
    public var method: ZipMethod
    /// The CRC-32 of the uncompressed bytes, as the headers declare it (checked on read).
    public var crc32: UInt32
    /// The bytes the entry's data occupies in the archive.
    public var compressedSize: Int64
    /// The declared size; inflation is checked against it and never goes past it.
    public var uncompressedSize: Int64
    /// Our XXH3-128 content hash, when the archive carries it (field 0x6870; pkgtool writes
    /// it for files and links).
    public var contentHash: ContentHash?
    /// A symbolic link's target (read and checked at open).
    public var linkTarget: String?
    /// Where the local header starts, and where the entry's data starts.
    package var localHeaderOffset: Int64
    package var dataOffset: Int64
    /// Whether a data descriptor follows the data (general-purpose bit 3).
    package var hasDataDescriptor: Bool
    /// Index in the central directory.
    package var index: Int
    /// Where the entry (data and descriptor) ends in the file.
    var endOffset: Int64
    /// The DOS (time, date) pair, kept for repack and the local-header check.
    var dosTime: UInt16
    var dosDate: UInt16
    var flags: UInt16
    /// The modification time of the central extended-timestamp field (0x5455), in
    /// seconds, when it has one: the local field's must be the same.
    var extendedModificationTime: Int64?
    /// Which of the fields that must be in both headers the central header has.
    var pairedExtras: Set<UInt16> = []
    /// The name's bytes as the central header stores them, kept when a Unicode path field
    /// (0x7075) gave the entry another name: the local header must store the same bytes.
    var storedNameBytes: [UInt8]? = nil
    /// Whether the archive was made on MS-DOS or Windows and its names use `\` between
    /// components, which are read as "/" (as unzip and bsdtar do).
    var usesBackslashSeparators = false

    /// The relative path's text, for display ("/"-separated, without a directory's trailing
    /// slash). Compare and look up entries by `relativePath`, never by this string.
    public var path: String { relativePath.string }

    /// The name as stored in the archive: the path, with "/" after a directory's.
    public var name: String { kind == .directory ? path + "/" : path }

    /// The entry as a snapshot entry (a directory's hash is filled in by `TreeSnapshot.assemble`).
    /// Without our hash field the hash is `ContentHash.empty` unless `hash` is given.
    public func snapshotEntry(hash: ContentHash? = nil) -> SnapshotEntry {
        SnapshotEntry(
            path: relativePath.string, kind: kind, permissions: permissions,
            size: kind == .directory ? 0 : uncompressedSize, hash: hash ?? contentHash ?? .empty,
            modificationTime: modificationTime, linkTarget: linkTarget)
    }
}
