/// A failed file-system operation: what was attempted, on which path, and why.
///
/// The description is the sentence a person reads, for example
/// `cannot open 'Notes.pkg/pages/1.txt': No such file or directory (ENOENT from openat)`.
public struct FileSystemError: Error, Sendable, CustomStringConvertible {
    /// What the caller was doing, as a verb phrase ("open", "rename").
    public var operation: FileOperation
    /// The path the operation was applied to.
    public var path: String
    /// The second path of two-path operations (rename, link, exchange).
    public var destination: String?
    /// The kernel's error, when the failure came from a system call.
    public var errno: Errno?
    /// Extra words when `errno` alone does not say enough ("is a FIFO, not a regular file").
    public var reason: String?

    public init(
        _ operation: FileOperation, path: String, destination: String? = nil,
        errno: Errno? = nil, reason: String? = nil
    ) {
        self.operation = operation
        self.path = path
        self.destination = destination
        self.errno = errno
        self.reason = reason
    }

    public var description: String {
        var text = "cannot \(operation.verb) '\(path)'"
        if let destination { text += " \(operation.preposition) '\(destination)'" }
        var causes: [String] = []
        if let reason { causes.append(reason) }
        if let errno { causes.append("\(errno.message) (\(errno.name) from \(operation.systemCall))") }
        if !causes.isEmpty { text += ": " + causes.joined(separator: ": ") }
        return text
    }

    /// Whether the path (or a component of it) did not exist.
    public var isNotFound: Bool { errno == .noSuchFileOrDirectory }
}

/// The operations the I/O layer performs, each with its verb and the call that does it.
public struct FileOperation: Hashable, Sendable {
    public var verb: String
    public var systemCall: String
    public var preposition: String

    public init(verb: String, systemCall: String, preposition: String = "to") {
        self.verb = verb
        self.systemCall = systemCall
        self.preposition = preposition
    }

    public static let open = FileOperation(verb: "open", systemCall: "openat")
    public static let create = FileOperation(verb: "create", systemCall: "openat")
    public static let read = FileOperation(verb: "read", systemCall: "read")
    public static let write = FileOperation(verb: "write", systemCall: "write")
    public static let sync = FileOperation(verb: "sync", systemCall: "fsync")
    public static let stat = FileOperation(verb: "stat", systemCall: "fstatat")
    public static let readDirectory = FileOperation(verb: "list", systemCall: "readdir")
    public static let readLink = FileOperation(verb: "read link", systemCall: "readlinkat")
    public static let rename = FileOperation(verb: "rename", systemCall: "renameat2")
    public static let exchange = FileOperation(
        verb: "exchange", systemCall: "renameat2(RENAME_EXCHANGE)", preposition: "with")
    public static let link = FileOperation(verb: "link", systemCall: "linkat", preposition: "as")
    public static let symlink = FileOperation(verb: "create symbolic link", systemCall: "symlinkat")
    public static let remove = FileOperation(verb: "remove", systemCall: "unlinkat")
    public static let removeDirectory = FileOperation(verb: "remove directory", systemCall: "unlinkat")
    public static let makeDirectory = FileOperation(verb: "create directory", systemCall: "mkdirat")
    public static let setPermissions = FileOperation(verb: "set permissions of", systemCall: "fchmod")
    public static let setTimes = FileOperation(verb: "set times of", systemCall: "utimensat")
    public static let setOwner = FileOperation(verb: "set the owner of", systemCall: "fchown")
    public static let truncate = FileOperation(verb: "truncate", systemCall: "ftruncate")
    public static let copy = FileOperation(verb: "copy", systemCall: "copy_file_range")
    public static let lock = FileOperation(verb: "lock", systemCall: "flock")
    public static let close = FileOperation(verb: "close", systemCall: "close")
    public static let seek = FileOperation(verb: "seek in", systemCall: "lseek")
}
