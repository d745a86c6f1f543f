/// The package locks the current task (and, inherited, its child tasks) holds, so that a
/// `PackageScope` nested in another for the same package does not wait for itself.
///
/// Keyed by the identity of the item the lock is on — device and inode, as `PackageLock`
/// knows it — because that is what a `flock` is on: `é` and `e\u{301}` are two directories
/// and two entries whatever their names look like, and a lock taken on a package's folder
/// (the package did not exist yet) covers that folder, as the kernel's lock does.
enum HeldLocks {
    @TaskLocal static var held: [ItemIdentity: PackageScope.Access] = [:]

    /// How this task holds the lock that a `PackageLock.acquire` for `location` would take
    /// now (on the package, or on its folder when the package does not exist); nil when it
    /// holds none.
    static func access(coveringLockOf location: PackageLocation) -> PackageScope.Access? {
        guard !held.isEmpty, let target = lockTarget(of: location) else { return nil }
        return held[target]
    }

    /// The item a lock for `location` would be on: the package, else its folder.
    private static func lockTarget(of location: PackageLocation) -> ItemIdentity? {
        if let item = try? FileSystem.statusIfExists(location.path) { return ItemIdentity(item) }
        return (try? FileSystem.status(location.parentPath, followSymlinks: true)).map(ItemIdentity.init)
    }

    /// Runs `body` with `lock` (when there is one) recorded as held by the current task.
    static func with<R>(_ lock: PackageLock?, _ body: () throws -> R) rethrows -> R {
        guard let lock else { return try body() }
        return try $held.withValue(recording(lock), operation: body)
    }

    /// `with(_:_:)` for async work.
    static func with<R>(
        _ lock: PackageLock?, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async rethrows -> R {
        guard let lock else { return try await body() }
        return try await $held.withValue(recording(lock), operation: body)
    }

    private static func recording(_ lock: PackageLock) -> [ItemIdentity: PackageScope.Access] {
        var locks = held
        locks[lock.identity] = lock.exclusive ? .exclusive : .shared
        return locks
    }
}

/// A file's identity on this machine: its device and inode.
struct ItemIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
    }
}
