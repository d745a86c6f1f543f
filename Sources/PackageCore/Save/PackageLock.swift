import Glibc

/// The advisory lock that serialises everything that writes a package, and lets readers
/// that need a consistent view wait for a save to finish.
///
/// It is an OFD lock (`fcntl(F_OFD_SETLKW)`) on a zero-byte sibling file,
/// `.<name>.pkgtool-lock`, beside the package: a sibling rather than a file inside,
/// because saves that swap the whole package directory would swap a lock inside with it.
/// OFD locks belong to the open file description, so two threads of one process exclude
/// each other as two processes do, and the lock is released when the descriptor closes,
/// even if the process dies. The lock file is never deleted (deleting lock files races).
public final class PackageLock: @unchecked Sendable {
    // @unchecked: the descriptor is only closed by `release()` / deinit, which callers do
    // once; the lock itself is the kernel's.
    private var descriptor: FileDescriptor?
    public let packagePath: String
    public let exclusive: Bool

    /// The lock file's path for the package at `packagePath`.
    public static func lockFilePath(for packagePath: String) -> String {
        let (parent, name) = AtomicFile.split(trimmingTrailingSlashes(packagePath))
        return PackageLayout.joined(parent, "." + name + ".pkgtool-lock")
    }

    private init(descriptor: consuming FileDescriptor, packagePath: String, exclusive: Bool) {
        self.descriptor = consume descriptor
        self.packagePath = packagePath
        self.exclusive = exclusive
    }

    deinit { release() }

    /// Takes the lock, waiting for it, creating the lock file when needed.
    ///
    /// - Parameter exclusive: true for writers (saves, recovery), false for readers.
    public static func acquire(for packagePath: String, exclusive: Bool) throws -> PackageLock {
        let path = lockFilePath(for: packagePath)
        let file = try FileDescriptor.open(
            path, access: .readWrite, options: [.create, .noFollow], permissions: 0o644)
        try file.lock(exclusive: exclusive, wait: true)
        return PackageLock(descriptor: file, packagePath: packagePath, exclusive: exclusive)
    }

    /// Takes a shared lock when the lock file already exists; nil when no save has ever
    /// created one (so that reading a directory never litters its parent).
    public static func acquireSharedIfPresent(for packagePath: String) throws -> PackageLock? {
        let path = lockFilePath(for: packagePath)
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, access: .readWrite, options: [.noFollow])
        } catch {
            if error.isNotFound || error.errno == .readOnlyFileSystem || error.errno == .permissionDenied {
                return nil
            }
            throw error
        }
        try file.lock(exclusive: false, wait: true)
        return PackageLock(descriptor: file, packagePath: packagePath, exclusive: false)
    }

    /// Releases the lock (closing the lock file). Idempotent.
    public func release() {
        if let descriptor = descriptor.take() {
            descriptor.unlock()
            _ = try? descriptor.close()
        }
    }

    static func trimmingTrailingSlashes(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
}
