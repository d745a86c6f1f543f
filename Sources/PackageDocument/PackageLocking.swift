import Foundation
import Synchronization

/// Takes the advisory lock that serialises access to one package (or flat document)
/// across threads and processes: shared for readers, exclusive for writers.
///
/// The coordinator depends on this seam only. `SiblingLockFile` is the implementation until
/// PackageCore's `PackageLock` (the lock the save engine takes) is available; both must
/// take the same lock for saves and coordinated reads to exclude each other.
protocol PackageLocking: Sendable {
    /// Blocks until the lock on the item at `path` is granted.
    func lock(itemAt path: String, exclusive: Bool) throws -> HeldPackageLock
}

/// A granted lock; released by `release()` or when dropped.
final class HeldPackageLock: Sendable {
    /// The descriptor that owns the OFD lock: closing it releases the lock.
    private let descriptor: Mutex<FileDescriptor?>
    let path: String
    let exclusive: Bool

    init(owning descriptor: consuming sending FileDescriptor, path: String, exclusive: Bool) {
        self.descriptor = Mutex(Optional(descriptor))
        self.path = path
        self.exclusive = exclusive
    }

    /// Releases the lock. Idempotent.
    func release() {
        descriptor.withLock { $0 = nil }
    }
}

/// An OFD lock on a lock file beside the item: `.NAME.pkgtool-lock` in the same directory.
///
/// Beside, not inside, so that locking never changes the package's content and works for
/// flat files and for packages that do not exist yet. Lock files are never removed: removing
/// one while another process waits on it would let two processes lock two different files.
struct SiblingLockFile: PackageLocking {
    static func lockFilePath(forItemAt path: String) -> String {
        let (directory, name) = DocumentPaths.split(path)
        return DocumentPaths.join(directory, "." + name + ".pkgtool-lock")
    }

    func lock(itemAt path: String, exclusive: Bool) throws -> HeldPackageLock {
        let lockPath = SiblingLockFile.lockFilePath(forItemAt: path)
        let file = try FileDescriptor.open(lockPath, access: .readWrite, options: [.create, .noFollow], permissions: 0o644)
        try file.lock(exclusive: exclusive, wait: true)
        return HeldPackageLock(owning: file, path: lockPath, exclusive: exclusive)
    }
}

/// The locks the current task holds, by item path: a coordinated access nested inside
/// another on the same item (a coordinated write whose writer reads) must not wait for
/// itself. OFD locks belong to open descriptions, not threads, so without this a nested
/// request would deadlock.
enum HeldLocks {
    @TaskLocal static var current: [String: Bool] = [:]

    /// Whether the current task already holds a lock on `path` good enough for the request.
    /// - Throws: when it holds a shared lock and asks for an exclusive one (an upgrade would
    ///   deadlock against itself).
    static func satisfies(_ path: String, exclusive: Bool) throws -> Bool {
        guard let held = current[path] else { return false }
        if exclusive && !held {
            throw CocoaError(
                .fileLocking,
                userInfo: [
                    NSFilePathErrorKey: path,
                    NSLocalizedDescriptionKey:
                        "cannot write '\(path)' inside a coordinated read of it: release the read first",
                ])
        }
        return true
    }
}
