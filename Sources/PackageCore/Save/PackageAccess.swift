/// Consistent reading of a package by commands that only look at it.
public enum PackageAccess {
    /// Runs `body` while the package is in a consistent state, and never fails because an
    /// earlier save cannot be finished.
    ///
    /// An interrupted save is recovered first, under the exclusive lock, when recovery
    /// finds a journal it validated (never one it refused) or leftovers; should that fail
    /// (a folder in the way, a full disk), `warn` hears why on one line and the package is
    /// read as it stands. A shared lock is held during `body` when the package has a lock
    /// file, so that no save runs meanwhile. Directories that never saw a save have no lock
    /// file and get none: reading them writes nothing beside them.
    ///
    /// - Parameters:
    ///   - packagePath: the package to read (any spelling: relative, through a symlinked folder).
    ///   - warn: called with each warning (a journal set aside, an unfinished save).
    ///   - body: reads the package; its result is returned.
    /// - Complexity: a few `stat`s and a shared `flock`; recovery's work only when an
    ///   earlier save was interrupted.
    public static func reading<R>(
        _ packagePath: String, warn: (String) -> Void = { _ in }, _ body: () throws -> R
    ) throws -> R {
        guard let package = try? PackageLocation(packagePath) else { return try body() }
        // A task already holding the lock (a coordinated access) reads under it.
        if PackageLockScope.covers(package, exclusive: false) { return try body() }
        if PackageRecovery.needsRecovery(package) {
            do {
                let lock = try PackageLock.acquire(for: package, exclusive: true)
                defer { lock.release() }
                let report = try PackageRecovery.recover(package)
                report.warnings.forEach(warn)
            } catch {
                warn("an earlier save of '\(package)' is unfinished (\(error)); reading it as it stands")
            }
        }
        let lock = try? PackageLock.acquireSharedIfPresent(for: package)
        defer { lock?.release() }
        return try body()
    }
}
