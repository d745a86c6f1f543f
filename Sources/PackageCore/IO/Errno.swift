import CSystemShims
import Glibc

/// An error number reported by the kernel.
///
/// A struct over the C value rather than an enum, so values we do not name survive intact.
/// `name` gives the symbolic constant ("ENOENT") and `message` the C library's text.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C value, as `errno` holds it.
    public var rawValue: Int32

    /// The error of C value `rawValue`, named or not.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The value of the calling thread's `errno`.
    static var current: Errno { Errno(rawValue: Glibc.errno) }

    /// The symbolic name, such as `ENOENT`, or `errno N` when it has none.
    public var name: String {
        guard let cName = pkg_errno_name(rawValue) else { return "errno \(rawValue)" }
        return String(cString: cName)
    }

    /// The C library's description, such as "No such file or directory".
    public var message: String { String(cString: strerror(rawValue)) }

    /// The message and the name: "No such file or directory (ENOENT)".
    public var description: String { "\(message) (\(name))" }

    /// ENOENT.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// EINTR: the call was interrupted by a signal and may be retried.
    public static let interrupted = Errno(rawValue: EINTR)
    /// EIO.
    public static let ioError = Errno(rawValue: EIO)
    /// EACCES.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// EPERM.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// EEXIST.
    public static let fileExists = Errno(rawValue: EEXIST)
    /// EXDEV: a link or rename across file systems.
    public static let crossDevice = Errno(rawValue: EXDEV)
    /// ENOTDIR.
    public static let notDirectory = Errno(rawValue: ENOTDIR)
    /// EISDIR.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// EINVAL.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// ENOSPC.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// EDQUOT.
    public static let quotaExceeded = Errno(rawValue: EDQUOT)
    /// EROFS.
    public static let readOnlyFileSystem = Errno(rawValue: EROFS)
    /// ENOTEMPTY.
    public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)
    /// ELOOP: too many symbolic links, or a symbolic link where none is allowed.
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// EOPNOTSUPP.
    public static let notSupported = Errno(rawValue: EOPNOTSUPP)
    /// ENOSYS.
    public static let notImplemented = Errno(rawValue: ENOSYS)
    /// EAGAIN / EWOULDBLOCK.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// ENAMETOOLONG.
    public static let nameTooLong = Errno(rawValue: ENAMETOOLONG)
    /// ENXIO: for example opening a FIFO for writing with no reader.
    public static let noDevice = Errno(rawValue: ENXIO)
    /// ECANCELED.
    public static let canceled = Errno(rawValue: ECANCELED)
    /// EBADF: for example writing to a standard output that was closed.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
}

extension Errno {
    /// Lets `catch Errno.noSuchFileOrDirectory` match a thrown `Errno`.
    public static func ~= (pattern: Errno, error: any Error) -> Bool {
        (error as? Errno) == pattern
    }
}
