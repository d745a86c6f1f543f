import Glibc

/// The kind of a file-system object.
public enum FileKind: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// A regular file: package content.
    case regular
    /// A directory: package content.
    case directory
    /// A symbolic link, never followed inside a package: package content.
    case symbolicLink
    /// A named pipe (FIFO): not package content, left out of scans.
    case fifo
    /// A Unix-domain socket: not package content.
    case socket
    /// A character device: not package content.
    case characterDevice
    /// A block device: not package content.
    case blockDevice
    /// A type `stat` reported that none of the above matches.
    case unknown

    init(mode: UInt32) {
        switch mode & 0o170000 {
        case 0o100000: self = .regular
        case 0o040000: self = .directory
        case 0o120000: self = .symbolicLink
        case 0o010000: self = .fifo
        case 0o140000: self = .socket
        case 0o020000: self = .characterDevice
        case 0o060000: self = .blockDevice
        default: self = .unknown
        }
    }

    /// The `S_IFMT` bits of this kind.
    public var typeBits: UInt32 {
        switch self {
        case .regular: return 0o100000
        case .directory: return 0o040000
        case .symbolicLink: return 0o120000
        case .fifo: return 0o010000
        case .socket: return 0o140000
        case .characterDevice: return 0o020000
        case .blockDevice: return 0o060000
        case .unknown: return 0
        }
    }

    /// The kind in words, as errors print it ("symbolic link", "FIFO").
    public var description: String {
        switch self {
        case .regular: return "regular file"
        case .directory: return "directory"
        case .symbolicLink: return "symbolic link"
        case .fifo: return "FIFO"
        case .socket: return "socket"
        case .characterDevice: return "character device"
        case .blockDevice: return "block device"
        case .unknown: return "file of unknown type"
        }
    }

    /// Whether a package may hold this kind. FIFOs, sockets and devices are not content.
    public var isPackageContent: Bool {
        self == .regular || self == .directory || self == .symbolicLink
    }
}

/// What `stat` says of a file, with nanosecond times: the fields change detection needs.
public struct FileStatus: Sendable, Hashable {
    /// What the path is: a regular file, a directory, a link…
    public var kind: FileKind
    /// Permission bits (`0o7777`), without the type bits.
    public var permissions: UInt32
    /// Bytes of a regular file; bytes of a link's target text; what the file system says for the rest.
    public var size: Int64
    /// Modification time, nanoseconds since the epoch.
    public var modificationTime: Int64
    /// Status change time, nanoseconds since the epoch. Bumped by writes, chmod, link and rename.
    public var changeTime: Int64
    /// The inode number: with `device`, the file's identity.
    public var inode: UInt64
    /// The device the file lives on.
    public var device: UInt64
    /// Names the file has (hard links).
    public var linkCount: UInt64
    /// The owner's user ID.
    public var userID: UInt32
    /// The owner's group ID.
    public var groupID: UInt32

    /// A status made by hand (tests, custom sources); `fileStatus(atPath:followSymlinks:)`
    /// reads a real one.
    public init(
        kind: FileKind, permissions: UInt32, size: Int64, modificationTime: Int64, changeTime: Int64,
        inode: UInt64 = 0, device: UInt64 = 0, linkCount: UInt64 = 1, userID: UInt32 = 0, groupID: UInt32 = 0
    ) {
        self.kind = kind
        self.permissions = permissions
        self.size = size
        self.modificationTime = modificationTime
        self.changeTime = changeTime
        self.inode = inode
        self.device = device
        self.linkCount = linkCount
        self.userID = userID
        self.groupID = groupID
    }

    init(_ info: stat) {
        let mode = UInt32(info.st_mode)
        self.kind = FileKind(mode: mode)
        self.permissions = mode & 0o7777
        self.size = Int64(info.st_size)
        self.modificationTime = Self.nanoseconds(info.st_mtim)
        self.changeTime = Self.nanoseconds(info.st_ctim)
        self.inode = UInt64(info.st_ino)
        self.device = UInt64(info.st_dev)
        self.linkCount = UInt64(info.st_nlink)
        self.userID = info.st_uid
        self.groupID = info.st_gid
    }

    /// A timestamp in nanoseconds since the epoch, saturating at Int64's range (years 1677 to
    /// 2262): ext4 and XFS store times well past it (`touch -d 2300-01-01` is enough), and
    /// such a file must read, not trap. Two times beyond the range compare equal.
    static func nanoseconds(_ time: timespec) -> Int64 {
        let (product, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return time.tv_sec < 0 ? .min : .max }
        let (sum, carried) = product.addingReportingOverflow(Int64(time.tv_nsec))
        return carried ? .max : sum
    }

    /// Whether the owner may execute the file: the one mode bit content hashes record.
    public var isExecutable: Bool { permissions & 0o100 != 0 }
}

extension FileStatus {
    /// What differs between two stats of one path, in words.
    static func describeChange(from old: FileStatus, to new: FileStatus) -> String {
        if old.kind != new.kind { return "was a \(old.kind), now a \(new.kind)" }
        if old.inode != new.inode || old.device != new.device { return "replaced by another file" }
        if old.size != new.size { return "size \(old.size) → \(new.size) bytes" }
        if old.modificationTime != new.modificationTime { return "modified: modification time \(old.modificationTime) → \(new.modificationTime) ns" }
        return "its status changed"
    }
}

/// Reads the status of `path` without following a final symbolic link.
///
/// - Complexity: one `fstatat`.
public func fileStatus(atPath path: String, followSymlinks: Bool = false) throws(FileSystemError) -> FileStatus {
    do {
        return FileStatus(try Syscall.fstatat(AT_FDCWD, path, followSymlinks: followSymlinks))
    } catch {
        throw FileSystemError(.stat, path: path, errno: error)
    }
}
