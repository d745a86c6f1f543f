import Glibc

/// The advisory lock that serialises everything that writes a package, and lets readers
/// that need a consistent view wait for a save to finish.
///
/// It is a `flock` on the package directory itself — nothing is created for it, inside the
/// package or beside it. A save that swaps the whole directory (`full`, `atomic`) keeps
/// holding the lock on the old directory, now under a staging name; so whoever waited for
/// it checks, once granted, that the package's path still names the directory it locked,
/// and if not, locks the new one (the usual protocol for locks on files that get replaced).
/// A package that does not exist yet is created under a lock on its folder.
///
/// The package is found through its one canonical `PackageLocation`, whatever path the
/// caller used. `flock` locks belong to the open file description: two threads of one
/// process exclude each other as two processes do, and the lock goes when the process
/// dies. Works on any item, a flat file included (the document layer locks those too).
package final class PackageLock: @unchecked Sendable {
    // @unchecked: the descriptor is only closed by `release()` / deinit, which callers do
    // once; the lock itself is the kernel's.
    private var descriptor: SharedDescriptor?
    package let package: PackageLocation
    package var packagePath: String { package.path }
    package let exclusive: Bool
    /// Whether the lock is on the folder (the package did not exist when it was taken).
    package let isOnFolder: Bool
    /// The item the lock is on (the package, or its folder): what `HeldLocks` records.
    let identity: ItemIdentity

    private init(
        descriptor: SharedDescriptor, package: PackageLocation, exclusive: Bool, isOnFolder: Bool, identity: ItemIdentity
    ) {
        self.descriptor = descriptor
        self.package = package
        self.exclusive = exclusive
        self.isOnFolder = isOnFolder
        self.identity = identity
    }

    deinit { release() }

    /// Takes the lock, waiting for it.
    ///
    /// - Parameter exclusive: true for writers (saves, recovery), false for readers.
    /// - Complexity: one `open`, one `flock` and two `stat`s, again after each swap that
    ///   happened while waiting.
    package static func acquire(for package: PackageLocation, exclusive: Bool) throws -> PackageLock {
        let operation = exclusive ? LOCK_EX : LOCK_SH
        while true {
            guard let item = try openIfPresent(package.path) else {
                // Not there yet: creating it is serialised on its folder.
                let folder = SharedDescriptor(try FileDescriptor.openDirectory(package.parentPath))
                try folder.descriptor.flock(operation, shownAs: package.parentPath)
                if try FileSystem.statusIfExists(package.path) == nil {
                    return PackageLock(
                        descriptor: folder, package: package, exclusive: exclusive, isOnFolder: true,
                        identity: ItemIdentity(try folder.descriptor.status()))
                }
                continue
            }
            try item.descriptor.flock(operation, shownAs: package.path)
            // Granted: is the path still the item we locked (no swap meanwhile)?
            let locked = try item.descriptor.status()
            if let current = try FileSystem.statusIfExists(package.path),
                current.inode == locked.inode, current.device == locked.device
            {
                return PackageLock(
                    descriptor: item, package: package, exclusive: exclusive, isOnFolder: false, identity: ItemIdentity(locked))
            }
        }
    }

    /// The item at `path` open for locking, or nil when nothing is there.
    private static func openIfPresent(_ path: String) throws -> SharedDescriptor? {
        do {
            return SharedDescriptor(try FileDescriptor.open(path, options: [.noFollow, .nonBlocking], displayPath: path))
        } catch {
            if error.isNotFound { return nil }
            throw error
        }
    }

    /// `acquire(for:exclusive:)` for a path, resolved to the package's location first.
    package static func acquire(for packagePath: String, exclusive: Bool) throws -> PackageLock {
        try acquire(for: try PackageLocation(packagePath), exclusive: exclusive)
    }

    /// Takes a shared lock when the package exists; nil when it does not (nothing to read).
    package static func acquireSharedIfPresent(for package: PackageLocation) throws -> PackageLock? {
        guard try FileSystem.statusIfExists(package.path) != nil else { return nil }
        let lock = try acquire(for: package, exclusive: false)
        if lock.isOnFolder {
            lock.release()
            return nil
        }
        return lock
    }

    /// Releases the lock (closing its descriptor). Idempotent.
    package func release() {
        descriptor = nil
    }
}
