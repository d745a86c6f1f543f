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

    package init(
        _ operation: FileOperation, path: String, destination: String? = nil,
        errno: Errno? = nil, reason: String? = nil
    ) {
        self.operation = operation
        self.path = path
        self.destination = destination
        self.errno = errno
        self.reason = reason
    }

    /// The sentence a person reads: what could not be done to which path, and the cause
    /// (the reason, the errno's message and name, and the system call that returned it).
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
    /// What was attempted, as a verb phrase: "open", "rename", "set permissions of".
    public var verb: String
    /// The system call that does it: "openat", "renameat2", "fchmod".
    public var systemCall: String
    /// The word before a second path: "rename 'a' to 'b'", "link 'a' as 'b'".
    public var preposition: String

    package init(verb: String, systemCall: String, preposition: String = "to") {
        self.verb = verb
        self.systemCall = systemCall
        self.preposition = preposition
    }

    package static let open = FileOperation(verb: "open", systemCall: "openat")
    package static let create = FileOperation(verb: "create", systemCall: "openat")
    package static let read = FileOperation(verb: "read", systemCall: "read")
    package static let write = FileOperation(verb: "write", systemCall: "write")
    package static let sync = FileOperation(verb: "sync", systemCall: "fsync")
    package static let syncFileSystem = FileOperation(verb: "sync the file system of", systemCall: "syncfs")
    package static let stat = FileOperation(verb: "stat", systemCall: "fstatat")
    package static let readDirectory = FileOperation(verb: "list", systemCall: "readdir")
    package static let readLink = FileOperation(verb: "read link", systemCall: "readlinkat")
    package static let rename = FileOperation(verb: "rename", systemCall: "renameat2")
    package static let exchange = FileOperation(
        verb: "exchange", systemCall: "renameat2(RENAME_EXCHANGE)", preposition: "with")
    package static let link = FileOperation(verb: "link", systemCall: "linkat", preposition: "as")
    package static let symlink = FileOperation(verb: "create symbolic link", systemCall: "symlinkat")
    package static let remove = FileOperation(verb: "remove", systemCall: "unlinkat")
    package static let removeDirectory = FileOperation(verb: "remove directory", systemCall: "unlinkat")
    package static let makeDirectory = FileOperation(verb: "create directory", systemCall: "mkdirat")
    package static let setPermissions = FileOperation(verb: "set permissions of", systemCall: "fchmod")
    package static let setTimes = FileOperation(verb: "set times of", systemCall: "utimensat")
    package static let setOwner = FileOperation(verb: "set the owner of", systemCall: "fchown")
    package static let truncate = FileOperation(verb: "truncate", systemCall: "ftruncate")
    package static let allocate = FileOperation(verb: "reserve space for", systemCall: "fallocate")
    package static let copy = FileOperation(verb: "copy", systemCall: "copy_file_range")
    package static let lock = FileOperation(verb: "lock", systemCall: "flock")
    package static let close = FileOperation(verb: "close", systemCall: "close")
    package static let seek = FileOperation(verb: "seek in", systemCall: "lseek")
    package static let resolve = FileOperation(verb: "resolve", systemCall: "realpath")
}
