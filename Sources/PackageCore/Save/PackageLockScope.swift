/// The package locks the current task holds, so that code running under a lock does not
/// wait for it again.
///
/// OFD locks belong to open file descriptions, not to threads: a second `PackageLock.acquire`
/// for a package the same task already locked (a document host coordinating a save, whose
/// writer calls `FileWrapper.write`, which runs the save engine) would wait for itself
/// forever. Whoever takes a lock and then runs code that may lock again records it here
/// with `withLock(_:)`; whoever is about to lock asks `covers(_:exclusive:)` first.
package enum PackageLockScope {
    /// By the bytes of the package's canonical path (`FileName` compares bytes): `é` and
    /// `e\u{301}` are two packages.
    @TaskLocal static var held: [FileName: Bool] = [:]

    private static func key(_ package: PackageLocation) -> FileName { FileName(package.path) }

    /// Whether the current task holds the lock of the package at `packagePath`, exclusive
    /// if `exclusive` is asked for (a shared lock does not cover a write).
    package static func covers(_ package: PackageLocation, exclusive: Bool) -> Bool {
        guard let mode = held[key(package)] else { return false }
        return mode || !exclusive
    }

    /// `covers(_:exclusive:)` for a path (false when it cannot be resolved).
    package static func covers(_ packagePath: String, exclusive: Bool) -> Bool {
        guard let package = try? PackageLocation(packagePath) else { return false }
        return covers(package, exclusive: exclusive)
    }

    /// Whether the current task holds a shared lock only on the package at `packagePath`:
    /// asking for the exclusive lock now would deadlock against itself.
    package static func holdsSharedOnly(_ package: PackageLocation) -> Bool {
        held[key(package)] == false
    }

    /// `holdsSharedOnly(_:)` for a path.
    package static func holdsSharedOnly(_ packagePath: String) -> Bool {
        guard let package = try? PackageLocation(packagePath) else { return false }
        return holdsSharedOnly(package)
    }

    /// Runs `body` with `lock` recorded as held by the current task (and its child tasks).
    package static func withLock<R>(_ lock: PackageLock, _ body: () throws -> R) rethrows -> R {
        var locks = held
        locks[key(lock.package)] = lock.exclusive
        return try $held.withValue(locks, operation: body)
    }

    /// `withLock(_:_:)` for async work.
    package static func withLock<R>(
        _ lock: PackageLock, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async rethrows -> R {
        var locks = held
        locks[key(lock.package)] = lock.exclusive
        return try await $held.withValue(locks, operation: body)
    }
}
