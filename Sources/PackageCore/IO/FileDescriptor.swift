import CSystemShims
import Glibc

/// An open file descriptor that closes itself: the owner of one kernel file description.
///
/// Non-copyable, so it has exactly one owner and cannot be closed twice or leaked;
/// `close()` reports errors, dropping it closes silently. Every error it throws names
/// the path it was opened with, the operation and the errno.
package struct FileDescriptor: ~Copyable {
    /// The kernel's descriptor number; -1 once closed.
    package private(set) var rawValue: Int32
    /// The path this descriptor was opened with, for messages.
    package let path: String

    /// Adopts an open descriptor; it will be closed when this value is dropped.
    package init(adopting rawValue: Int32, path: String) {
        self.rawValue = rawValue
        self.path = path
    }

    deinit {
        if rawValue >= 0 { Syscall.close(rawValue) }
    }

    /// Closes the descriptor, reporting an error (never retried: see `Syscall`).
    package consuming func close() throws(FileSystemError) {
        let descriptor = rawValue
        rawValue = -1
        do { try Syscall.closeReporting(descriptor) } catch {
            throw FileSystemError(.close, path: path, errno: error)
        }
    }

    /// How a file is opened for access.
    package enum Access: Sendable {
        case readOnly, writeOnly, readWrite
        var flags: Int32 {
            switch self {
            case .readOnly: return O_RDONLY
            case .writeOnly: return O_WRONLY
            case .readWrite: return O_RDWR
            }
        }
    }

    /// Options for `open`.
    package struct Options: OptionSet, Sendable {
        package let rawValue: Int32
        package init(rawValue: Int32) { self.rawValue = rawValue }
        /// Create the file if it does not exist.
        package static let create = Options(rawValue: O_CREAT)
        /// With `create`: fail with EEXIST when the name exists (never reuse an inode).
        package static let exclusive = Options(rawValue: O_EXCL)
        package static let truncate = Options(rawValue: O_TRUNC)
        package static let append = Options(rawValue: O_APPEND)
        /// Fail unless the path is a directory.
        package static let directory = Options(rawValue: PKG_O_DIRECTORY)
        /// Fail with ELOOP when the last component is a symbolic link.
        package static let noFollow = Options(rawValue: PKG_O_NOFOLLOW)
        /// Do not block opening a FIFO (used to refuse FIFOs instead of hanging on them).
        package static let nonBlocking = Options(rawValue: O_NONBLOCK)
    }

    /// Opens `path`, relative to `directory` (a descriptor, or the working directory).
    ///
    /// - Complexity: one `openat`.
    /// - Parameter displayPath: the path errors name, when `path` is relative to a
    ///   directory the person does not know about (a staging directory, say).
    package static func open(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, access: Access = .readOnly,
        options: Options = [], permissions: UInt32 = 0o644, displayPath: String? = nil
    ) throws(FileSystemError) -> FileDescriptor {
        let creating = options.contains(.create)
        do {
            let descriptor = try Syscall.openat(
                directory, path, access.flags | options.rawValue, permissions, step: creating ? .create : .open)
            return FileDescriptor(adopting: descriptor, path: displayPath ?? path)
        } catch {
            throw FileSystemError(creating ? .create : .open, path: displayPath ?? path, errno: error)
        }
    }

    /// Opens `path` with no symbolic link allowed in any of its components, and with
    /// `beneath`, no `..` or absolute path leading out of `directory` (openat2).
    package static func openWithoutSymlinks(
        _ path: String, relativeTo directory: Int32, access: Access = .readOnly,
        options: Options = [], permissions: UInt32 = 0o644, beneath: Bool = true,
        displayPath: String? = nil
    ) throws(FileSystemError) -> FileDescriptor {
        let creating = options.contains(.create)
        let shown = displayPath ?? path
        do {
            let descriptor = try Syscall.openatNoFollow(
                directory, path, access.flags | options.rawValue, permissions, beneath: beneath,
                step: creating ? .create : .open)
            return FileDescriptor(adopting: descriptor, path: shown)
        } catch {
            throw FileSystemError(creating ? .create : .open, path: shown, errno: error)
        }
    }

    /// Opens a directory for use as the base of `*at` calls, never through a symbolic link
    /// (unless `followingFinalLink`).
    ///
    /// `followingFinalLink`: for a folder named on the command line or holding such a path
    /// (`lnk/dest`, `/var/run/x`), which a person expects to be followed like any shell
    /// argument; walks inside a tree never follow one.
    package static func openDirectory(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, displayPath: String? = nil,
        followingFinalLink: Bool = false
    ) throws(FileSystemError) -> FileDescriptor {
        do {
            let descriptor = try Syscall.openat(
                directory, path, O_RDONLY | PKG_O_DIRECTORY | (followingFinalLink ? 0 : PKG_O_NOFOLLOW), 0, step: .open)
            return FileDescriptor(adopting: descriptor, path: displayPath ?? path)
        } catch {
            throw FileSystemError(.open, path: displayPath ?? path, errno: error)
        }
    }

    /// Creates an unnamed regular file in `directory` (O_TMPFILE). It gets a name only
    /// through `linkat`, so a crash before that leaves nothing behind.
    ///
    /// `displayPath`: the file it will become, which errors (a full disk while writing it)
    /// then name; the folder by default.
    package static func openUnnamed(
        inDirectory directory: borrowing FileDescriptor, permissions: UInt32 = 0o644, displayPath: String? = nil
    ) throws(FileSystemError) -> FileDescriptor {
        do {
            let descriptor = try Syscall.openat(
                directory.rawValue, ".", O_RDWR | PKG_O_TMPFILE, permissions, step: .create)
            return FileDescriptor(adopting: descriptor, path: displayPath ?? directory.path)
        } catch {
            throw FileSystemError(.create, path: displayPath ?? directory.path, errno: error, reason: "unnamed temporary file")
        }
    }

    /// Runs `body` with `path` open, closing it afterwards even when `body` throws.
    package static func withOpened<R>(
        _ path: String, relativeTo directory: Int32 = AT_FDCWD, access: Access = .readOnly,
        options: Options = [], permissions: UInt32 = 0o644,
        _ body: (borrowing FileDescriptor) throws -> R
    ) throws -> R {
        let descriptor = try open(
            path, relativeTo: directory, access: access, options: options, permissions: permissions)
        return try body(descriptor)
    }

    // MARK: Reading

    /// Reads at most `buffer.count` bytes at the current offset; 0 means end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(FileSystemError) -> Int {
        do { return try Syscall.read(rawValue, buffer, path: path) } catch {
            throw FileSystemError(.read, path: path, errno: error)
        }
    }

    /// Reads at most `buffer.count` bytes at `offset`, leaving the file offset alone.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileSystemError) -> Int {
        do { return try Syscall.pread(rawValue, buffer, offset, path: path) } catch {
            throw FileSystemError(.read, path: path, errno: error)
        }
    }

    /// Reads until `buffer` is full or the file ends, looping over short reads.
    /// Returns the number of bytes read; less than `buffer.count` only at end of file.
    package func readFully(into buffer: UnsafeMutableRawBufferPointer) throws(FileSystemError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Reads until `buffer` is full or the file ends, starting at `offset`.
    package func readFully(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(FileSystemError)
        -> Int
    {
        try Self.readFully(rawValue, path: path, into: buffer, at: offset)
    }

    /// `readFully(into:at:)` through a descriptor borrowed by number, for a thread that
    /// reads a file its owner holds open (`pread` leaves the shared offset alone).
    package static func readFully(
        _ descriptor: Int32, path: String, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) throws(FileSystemError) -> Int {
        var filled = 0
        while filled < buffer.count {
            let count: Int
            do {
                count = try Syscall.pread(
                    descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), offset + Int64(filled),
                    path: path)
            } catch {
                throw FileSystemError(.read, path: path, errno: error)
            }
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    // MARK: Writing

    /// Writes all of `bytes` at the current offset, looping over short writes.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(FileSystemError) {
        var written = 0
        while written < bytes.count {
            do {
                written += try Syscall.write(rawValue, UnsafeRawBufferPointer(rebasing: bytes[written...]), path: path)
            } catch {
                throw FileSystemError(.write, path: path, errno: error)
            }
        }
    }

    /// Writes all of `bytes` at `offset`, looping over short writes.
    package func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(FileSystemError) {
        var written = 0
        while written < bytes.count {
            do {
                written += try Syscall.pwrite(
                    rawValue, UnsafeRawBufferPointer(rebasing: bytes[written...]), offset + Int64(written), path: path)
            } catch {
                throw FileSystemError(.write, path: path, errno: error)
            }
        }
    }

    /// Writes all of `bytes`.
    package func write<Bytes: Sequence>(contentsOf bytes: Bytes) throws(FileSystemError) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        let failure: FileSystemError? = array.withUnsafeBytes { buffer in
            do throws(FileSystemError) { try write(buffer) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Flushes the file's data and metadata to the device (fsync). A failure is final:
    /// the kernel may have dropped the unwritten pages, so callers never retry and succeed.
    package func sync() throws(FileSystemError) {
        do { try Syscall.fsync(rawValue, path: path) } catch {
            throw FileSystemError(.sync, path: path, errno: error)
        }
    }

    /// Flushes everything written to the file system this descriptor is on (syncfs): one
    /// call making a whole tree of new files durable, where an fsync per file would cost
    /// a journal commit each. A failure is final, as for `sync()`.
    package func syncFileSystem() throws(FileSystemError) {
        do { try Syscall.syncfs(rawValue, path: path) } catch {
            throw FileSystemError(.syncFileSystem, path: path, errno: error)
        }
    }

    /// Starts writing the file's dirty pages back without waiting for them
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`): what ext4 does by itself when a file
    /// renamed over another was just written (`auto_da_alloc`), for writes that replace a
    /// file by other means. Not a durability promise; best effort, errors ignored.
    package func startWriteback() {
        Syscall.startWriteback(rawValue)
    }

    /// Allocates the blocks of `range` (beyond the end of the file too) without changing its
    /// size (`fallocate` with `FALLOC_FL_KEEP_SIZE`): writes there later cannot run out of
    /// space. False when the file system cannot (EOPNOTSUPP): nothing is promised then.
    ///
    /// - Throws: ENOSPC when the space is not there, and any other error.
    @discardableResult
    package func reserve(_ range: Range<Int64>) throws(FileSystemError) -> Bool {
        guard !range.isEmpty else { return true }
        do {
            try Syscall.allocateKeepingSize(rawValue, offset: range.lowerBound, length: Int64(range.count), path: path)
            return true
        } catch {
            if error == .notSupported || error == Errno(rawValue: ENOSYS) { return false }
            throw FileSystemError(.allocate, path: path, errno: error)
        }
    }

    package func truncate(to length: Int64) throws(FileSystemError) {
        do { try Syscall.ftruncate(rawValue, length, path: path) } catch {
            throw FileSystemError(.truncate, path: path, errno: error)
        }
    }

    /// Moves the file offset; returns the new offset.
    @discardableResult
    package func seek(to offset: Int64, from whence: Int32 = SEEK_SET) throws(FileSystemError) -> Int64 {
        do { return try Syscall.lseek(rawValue, offset, whence) } catch {
            throw FileSystemError(.seek, path: path, errno: error)
        }
    }

    /// The file offset (ESPIPE for a pipe or socket, which has none).
    package func currentOffset() throws(FileSystemError) -> Int64 {
        try seek(to: 0, from: SEEK_CUR)
    }

    // MARK: Metadata

    package func status() throws(FileSystemError) -> FileStatus {
        do { return FileStatus(try Syscall.fstat(rawValue, path: path)) } catch {
            throw FileSystemError(.stat, path: path, errno: error)
        }
    }

    /// The status and the bytes of storage the file occupies (`st_blocks` × 512): fewer
    /// than its size means it has holes.
    package func statusAndAllocation() throws(FileSystemError) -> (status: FileStatus, allocated: Int64) {
        do {
            let info = try Syscall.fstat(rawValue, path: path)
            return (FileStatus(info), Int64(info.st_blocks) * 512)
        } catch {
            throw FileSystemError(.stat, path: path, errno: error)
        }
    }

    package func setPermissions(_ permissions: UInt32) throws(FileSystemError) {
        do { try Syscall.fchmod(rawValue, permissions & 0o7777, path: path) } catch {
            throw FileSystemError(.setPermissions, path: path, errno: error)
        }
    }

    /// Gives the file to `userID` and `groupID` (fchown; set-id bits are cleared, as the
    /// kernel does). Root may give a file to anyone; others only to a group they are in.
    package func setOwner(userID: UInt32, groupID: UInt32) throws(FileSystemError) {
        do { try Syscall.fchown(rawValue, userID, groupID, path: path) } catch {
            throw FileSystemError(.setOwner, path: path, errno: error)
        }
    }

    /// Sets access and modification times to `modificationTime` (nanoseconds since the epoch).
    package func setModificationTime(_ modificationTime: Int64) throws(FileSystemError) {
        let time = timespec(nanoseconds: modificationTime)
        do { try Syscall.futimens(rawValue, [time, time], path: path) } catch {
            throw FileSystemError(.setTimes, path: path, errno: error)
        }
    }

    /// Takes an advisory lock on the whole file (an OFD lock: owned by this descriptor,
    /// not the process, so two threads with two descriptors exclude each other too).
    /// Returns false when `wait` is false and the lock is held elsewhere.
    @discardableResult
    package func lock(exclusive: Bool, wait: Bool = true) throws(FileSystemError) -> Bool {
        do {
            try Syscall.lock(rawValue, exclusive: exclusive, wait: wait, path: path)
            return true
        } catch {
            if !wait && (error == .wouldBlock || error == Errno(rawValue: EACCES)) { return false }
            throw FileSystemError(.lock, path: path, errno: error)
        }
    }

    package func unlock() { Syscall.unlock(rawValue) }

    /// `flock(operation)` (`LOCK_EX`, `LOCK_SH`, `LOCK_UN`, with `LOCK_NB`), for the package
    /// lock; a file system without `flock` (ENOLCK, EOPNOTSUPP) is taken as granting it,
    /// since nothing else can be locked there either.
    func flock(_ operation: Int32, shownAs path: String) throws(FileSystemError) {
        do {
            try Syscall.flock(rawValue, operation, path: path)
        } catch {
            if error == Errno(rawValue: ENOLCK) || error == .notSupported { return }
            throw FileSystemError(.lock, path: path, errno: error)
        }
    }

    /// Hints sequential reading to the kernel (larger read-ahead).
    package func adviseSequential() { Syscall.adviseSequential(rawValue) }
}

extension timespec {
    init(nanoseconds: Int64) {
        var seconds = nanoseconds / 1_000_000_000
        var remainder = nanoseconds % 1_000_000_000
        if remainder < 0 {
            seconds -= 1
            remainder += 1_000_000_000
        }
        self.init(tv_sec: Int(seconds), tv_nsec: Int(remainder))
    }
}

/// A file descriptor shared by reference: for the places where one owner is too strict
/// (optional descriptors, descriptors captured by closures). Closed when the last
/// reference goes.
package final class SharedDescriptor {
    package let descriptor: FileDescriptor
    package var rawValue: Int32 { descriptor.rawValue }
    package var path: String { descriptor.path }

    package init(_ descriptor: consuming FileDescriptor) { self.descriptor = descriptor }
}
