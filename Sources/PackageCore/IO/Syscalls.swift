import CSystemShims
import Glibc

/// One function per system call: the fault-injection check, the call, and the retry on EINTR.
///
/// Nothing else in the package calls libc for file-system work; everything above goes
/// through here, which is what lets the crash and error sweeps reach every step.
/// `close` is never retried: on Linux the descriptor is gone even when close reports EINTR.
enum Syscall {
    @inline(__always)
    private static func retrying<T: BinaryInteger>(_ call: () -> T) throws(Errno) -> T {
        while true {
            let result = call()
            if result >= 0 { return result }
            let code = Errno.current
            if code != .interrupted { throw code }
        }
    }

    @inline(__always)
    private static func inject(_ step: IOStep, _ path: String) throws(Errno) -> Bool {
        switch IOFaultInjection.check(step, path) {
        case nil: return false
        case .error(let code)?:
            if code == .interrupted { return false }  // EINTR is retried: model it as absorbed
            throw code
        case .partialTransfer?: return true
        }
    }

    static func openat(_ directory: Int32, _ path: String, _ flags: Int32, _ mode: UInt32, step: IOStep = .open)
        throws(Errno) -> Int32
    {
        _ = try inject(step, path)
        return try retrying { pkg_openat(directory, path, flags | O_CLOEXEC, mode) }
    }

    /// openat with no symbolic link allowed in any component (openat2 RESOLVE_NO_SYMLINKS).
    static func openatNoFollow(
        _ directory: Int32, _ path: String, _ flags: Int32, _ mode: UInt32, beneath: Bool, step: IOStep = .open
    ) throws(Errno) -> Int32 {
        _ = try inject(step, path)
        return try retrying { pkg_openat_nofollow(directory, path, flags | O_CLOEXEC, mode, beneath ? 1 : 0) }
    }

    static func close(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    static func read(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, path: String) throws(Errno) -> Int {
        guard buffer.count > 0 else { return 0 }
        let partial = try inject(.read, path)
        let count = partial ? max(1, buffer.count / 2) : buffer.count
        return try retrying { Glibc.read(descriptor, buffer.baseAddress, count) }
    }

    static func pread(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ offset: Int64, path: String)
        throws(Errno) -> Int
    {
        guard buffer.count > 0 else { return 0 }
        let partial = try inject(.read, path)
        let count = partial ? max(1, buffer.count / 2) : buffer.count
        return try retrying { Glibc.pread(descriptor, buffer.baseAddress, count, off_t(offset)) }
    }

    static func write(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, path: String) throws(Errno) -> Int {
        guard buffer.count > 0 else { return 0 }
        let partial = try inject(.write, path)
        let count = partial ? max(1, buffer.count / 2) : buffer.count
        return try retrying { Glibc.write(descriptor, buffer.baseAddress, count) }
    }

    static func pwrite(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, _ offset: Int64, path: String)
        throws(Errno) -> Int
    {
        guard buffer.count > 0 else { return 0 }
        let partial = try inject(.write, path)
        let count = partial ? max(1, buffer.count / 2) : buffer.count
        return try retrying { Glibc.pwrite(descriptor, buffer.baseAddress, count, off_t(offset)) }
    }

    static func lseek(_ descriptor: Int32, _ offset: Int64, _ whence: Int32) throws(Errno) -> Int64 {
        Int64(try retrying { Glibc.lseek(descriptor, off_t(offset), whence) })
    }

    static func fsync(_ descriptor: Int32, path: String) throws(Errno) {
        _ = try inject(.sync, path)
        // fsync is not retried on EINTR either: a failed flush may have dropped the pages,
        // so the caller must treat any failure as final (see Specs/save.md).
        if Glibc.fsync(descriptor) != 0 { throw Errno.current }
    }

    /// syncfs(2): every dirty page and inode of the file system `descriptor` is on, flushed
    /// and waited for, then the file system's own commit. Since Linux 5.8 it reports a
    /// write-back error that happened on that file system since `descriptor` was opened.
    /// A sync point for fault injection, as `fsync` is; never retried, for the same reason.
    static func syncfs(_ descriptor: Int32, path: String) throws(Errno) {
        _ = try inject(.sync, path)
        if pkg_syncfs(descriptor) != 0 { throw Errno.current }
    }

    static func ftruncate(_ descriptor: Int32, _ length: Int64, path: String) throws(Errno) {
        _ = try inject(.truncate, path)
        _ = try retrying { Glibc.ftruncate(descriptor, off_t(length)) }
    }

    static func fstat(_ descriptor: Int32, path: String) throws(Errno) -> stat {
        _ = try inject(.stat, path)
        var info = stat()
        _ = try retrying { Glibc.fstat(descriptor, &info) }
        return info
    }

    static func fstatat(_ directory: Int32, _ path: String, followSymlinks: Bool) throws(Errno) -> stat {
        _ = try inject(.stat, path)
        var info = stat()
        let flags = followSymlinks ? 0 : PKG_AT_SYMLINK_NOFOLLOW
        _ = try retrying { Glibc.fstatat(directory, path, &info, flags) }
        return info
    }

    static func fchmod(_ descriptor: Int32, _ mode: UInt32, path: String) throws(Errno) {
        _ = try inject(.setPermissions, path)
        _ = try retrying { Glibc.fchmod(descriptor, mode_t(mode)) }
    }

    static func fchown(_ descriptor: Int32, _ user: UInt32, _ group: UInt32, path: String) throws(Errno) {
        _ = try inject(.setPermissions, path)
        _ = try retrying { Glibc.fchown(descriptor, uid_t(user), gid_t(group)) }
    }

    static func fchmodat(_ directory: Int32, _ path: String, _ mode: UInt32) throws(Errno) {
        _ = try inject(.setPermissions, path)
        _ = try retrying { Glibc.fchmodat(directory, path, mode_t(mode), 0) }
    }

    static func utimensat(_ directory: Int32, _ path: String, _ times: [timespec], followSymlinks: Bool)
        throws(Errno)
    {
        _ = try inject(.setTimes, path)
        let flags = followSymlinks ? 0 : PKG_AT_SYMLINK_NOFOLLOW
        _ = try retrying { times.withUnsafeBufferPointer { Glibc.utimensat(directory, path, $0.baseAddress, flags) } }
    }

    static func futimens(_ descriptor: Int32, _ times: [timespec], path: String) throws(Errno) {
        _ = try inject(.setTimes, path)
        _ = try retrying { times.withUnsafeBufferPointer { Glibc.futimens(descriptor, $0.baseAddress) } }
    }

    static func mkdirat(_ directory: Int32, _ path: String, _ mode: UInt32) throws(Errno) {
        _ = try inject(.makeDirectory, path)
        _ = try retrying { Glibc.mkdirat(directory, path, mode_t(mode)) }
    }

    static func unlinkat(_ directory: Int32, _ path: String, removeDirectory: Bool) throws(Errno) {
        _ = try inject(removeDirectory ? .removeDirectory : .remove, path)
        _ = try retrying { Glibc.unlinkat(directory, path, removeDirectory ? PKG_AT_REMOVEDIR : 0) }
    }

    static func renameat2(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String, flags: UInt32)
        throws(Errno)
    {
        _ = try inject(flags & PKG_RENAME_EXCHANGE != 0 ? .exchange : .rename, from)
        _ = try retrying { pkg_renameat2(fromDirectory, from, toDirectory, to, flags) }
    }

    static func linkat(_ fromDirectory: Int32, _ from: String, _ toDirectory: Int32, _ to: String, flags: Int32)
        throws(Errno)
    {
        _ = try inject(.link, to)
        _ = try retrying { Glibc.linkat(fromDirectory, from, toDirectory, to, flags) }
    }

    static func symlinkat(_ target: String, _ directory: Int32, _ path: String) throws(Errno) {
        _ = try inject(.symlink, path)
        _ = try retrying { Glibc.symlinkat(target, directory, path) }
    }

    /// readlinkat into a growing buffer; returns the target's raw bytes.
    static func readlinkat(_ directory: Int32, _ path: String, sizeHint: Int) throws(Errno) -> [UInt8] {
        _ = try inject(.readLink, path)
        var capacity = max(64, sizeHint + 1)
        while true {
            var bytes = [UInt8](repeating: 0, count: capacity)
            let count = try retrying {
                bytes.withUnsafeMutableBufferPointer { buffer in
                    buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: capacity) {
                        Glibc.readlinkat(directory, path, $0, capacity)
                    }
                }
            }
            if count < capacity {
                bytes.removeSubrange(count...)
                return bytes
            }
            capacity *= 2
        }
    }

    static func copyFileRange(
        _ input: Int32, _ inputOffset: inout Int64, _ output: Int32, _ outputOffset: inout Int64, _ count: Int,
        path: String
    ) throws(Errno) -> Int {
        let partial = try inject(.copy, path)
        let length = partial ? max(1, count / 2) : count
        return try retrying { pkg_copy_file_range(input, &inputOffset, output, &outputOffset, length) }
    }

    static func allocateKeepingSize(_ descriptor: Int32, offset: Int64, length: Int64, path: String) throws(Errno) {
        _ = try inject(.allocate, path)
        _ = try retrying { pkg_fallocate_keep_size(descriptor, offset, length) }
    }

    static func lock(_ descriptor: Int32, exclusive: Bool, wait: Bool, path: String) throws(Errno) {
        _ = try inject(.lock, path)
        _ = try retrying { pkg_ofd_lock(descriptor, exclusive ? 1 : 0, wait ? 1 : 0) }
    }

    static func unlock(_ descriptor: Int32) {
        _ = pkg_ofd_unlock(descriptor)
    }

    /// sync_file_range(SYNC_FILE_RANGE_WRITE) over the whole file: best effort.
    static func startWriteback(_ descriptor: Int32) { _ = pkg_start_writeback(descriptor) }

    /// posix_fadvise(POSIX_FADV_SEQUENTIAL): a hint.
    static func adviseSequential(_ descriptor: Int32) { pkg_advise_sequential(descriptor) }

    /// flock(2) on the whole file (`LOCK_EX`, `LOCK_SH`, `LOCK_UN`, with `LOCK_NB`).
    static func flock(_ descriptor: Int32, _ operation: Int32, path: String) throws(Errno) {
        _ = try inject(.lock, path)
        _ = try retrying { pkg_flock(descriptor, operation) }
    }

    /// ioctl(FICLONE): `destination` shares `source`'s extents (a reflink).
    static func ficlone(_ destination: Int32, from source: Int32, path: String) throws(Errno) {
        _ = try inject(.copy, path)
        _ = try retrying { pkg_ficlone(destination, source) }
    }

    /// sched_getaffinity(2): the processors this process may run on (at least 1).
    static func availableProcessors() -> Int { Int(pkg_available_cpus()) }

    /// realpath(3): the canonical absolute path, every symbolic link resolved.
    static func realpath(_ path: String) throws(Errno) -> String {
        guard let resolved = Glibc.realpath(path, nil) else { throw Errno.current }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// clock_gettime(2) in nanoseconds.
    static func clockNanoseconds(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// time(2).
    static func secondsSinceEpoch() -> Int64 { Int64(Glibc.time(nil)) }

    /// nanosleep(2), once: a signal ends it early (EINTR is not resumed).
    static func sleep(nanoseconds: Int64) {
        guard nanoseconds > 0 else { return }
        var duration = timespec(nanoseconds: nanoseconds)
        _ = Glibc.nanosleep(&duration, nil)
    }

    /// getdents64(2) into `buffer`; 0 at the end of the directory.
    static func getdents64(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, path: String) throws(Errno) -> Int {
        _ = try inject(.readDirectory, path)
        return try retrying { pkg_getdents64(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// close(2), reporting its error (never retried: the descriptor is gone even on EINTR).
    static func closeReporting(_ descriptor: Int32) throws(Errno) {
        if Glibc.close(descriptor) != 0 {
            let code = Errno.current
            if code != .interrupted { throw code }
        }
    }
}

// The calls a command-line front end needs beside files: standard streams, the
// environment, running another program, leaving. Not package I/O, so no fault injection.
extension Syscall {
    /// isatty(3).
    static func isatty(_ descriptor: Int32) -> Bool {
        Glibc.isatty(descriptor) == 1
    }

    /// The width of the terminal `descriptor` is, in columns; nil when it is not one.
    static func terminalColumns(_ descriptor: Int32) -> Int? {
        let columns = Int(pkg_terminal_columns(descriptor))
        return columns > 0 ? columns : nil
    }

    /// Whether `descriptor` is open (fcntl F_GETFD succeeds).
    static func isOpen(_ descriptor: Int32) -> Bool {
        Glibc.fcntl(descriptor, F_GETFD) != -1 || errno != EBADF
    }

    /// Opens /dev/null on the lowest free descriptor, inherited across exec (it stands in
    /// for a closed standard stream). -1 when it cannot be opened.
    static func openDevNull(forWriting: Bool) -> Int32 {
        Glibc.open("/dev/null", forWriting ? O_WRONLY : O_RDONLY)
    }

    /// write(2) on a standard stream, retried on EINTR.
    static func writeStream(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws(Errno) -> Int {
        guard buffer.count > 0 else { return 0 }
        return try retrying { Glibc.write(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// getenv(3): the value, or nil when the variable is unset.
    static func getenv(_ name: String) -> String? {
        Glibc.getenv(name).map { String(cString: $0) }
    }

    /// gethostname(2): the bytes of this machine's name (at most 255), nil when it fails.
    static func gethostname() -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard Glibc.gethostname(&buffer, buffer.count - 1) == 0 else { return nil }
        return buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    }

    /// time(2) and localtime_r(3): seconds since the epoch now, and this machine's time
    /// zone's offset east of UTC then (0 when it cannot be known).
    static func nowWithLocalOffset() -> (seconds: Int64, offset: Int64) {
        var now = Glibc.time(nil)
        var parts = tm()
        guard Glibc.localtime_r(&now, &parts) != nil else { return (Int64(now), 0) }
        return (Int64(now), Int64(parts.tm_gmtoff))
    }

    /// access(2).
    static func access(_ path: String, _ mode: Int32) throws(Errno) {
        _ = try retrying { Glibc.access(path, mode) }
    }

    /// execv(2): replaces the process; returns only with the reason it could not.
    static func execv(_ path: String, _ arguments: [String]) -> Errno {
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        _ = Glibc.execv(path, argv)
        return Errno.current
    }

    /// exit(3).
    static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }
}
