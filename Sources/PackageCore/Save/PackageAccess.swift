/// Consistent reading of a package by commands that only look at it.
public enum PackageAccess {
    /// Runs `body` while the package is in a consistent state, and never fails because an
    /// earlier save cannot be finished: a shared `PackageScope` for a body that needs only
    /// the path it already has.
    ///
    /// An interrupted save is recovered first, under the exclusive lock, when recovery
    /// finds a journal it validated (never one it refused) or leftovers; should that fail
    /// (a folder in the way, a full disk), `warn` hears why on one line and the package is
    /// read as it stands. A shared lock is held during `body` when the package exists, so
    /// that no save runs meanwhile; reading a directory that never saw a save writes
    /// nothing beside it. A path that cannot even be resolved is read without a lock (the
    /// body reports the real problem).
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
        return try PackageScope.withPackage(at: package, access: .shared, warn: warn) { _ in try body() }
    }
}
