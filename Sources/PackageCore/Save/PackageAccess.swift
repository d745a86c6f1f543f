/// Consistent reading of a package by commands that only look at it.
public enum PackageAccess {
    /// Runs `body` while the package is in a consistent state: an interrupted save is
    /// recovered first (under the exclusive lock), and a shared lock is held during
    /// `body` when the package has a lock file, so that no save runs meanwhile.
    ///
    /// Directories that never saw a save have no lock file and get none: reading them
    /// never writes anything beside them.
    public static func reading<R>(_ packagePath: String, _ body: () throws -> R) throws -> R {
        // A task already holding the lock (a coordinated access) reads under it.
        if PackageLockScope.covers(packagePath, exclusive: false) { return try body() }
        if try PackageRecovery.needsRecovery(packagePath: packagePath) {
            let lock = try PackageLock.acquire(for: packagePath, exclusive: true)
            defer { lock.release() }
            try PackageRecovery.recover(packagePath: packagePath)
        }
        let lock = try PackageLock.acquireSharedIfPresent(for: packagePath)
        defer { lock?.release() }
        return try body()
    }
}
