import Synchronization

/// What a tree read from (or saved as) a package remembers of the package's manifest
/// between saves: its head, and the identity of the manifest files, so that a later save
/// can tell in a few `stat` calls whether anything else wrote the package meanwhile.
package final class TreePackageState: Sendable {
    /// The identity of the manifest's files at the time the head was taken.
    struct Identity: Equatable, Sendable {
        var index: FileStatus
        var lastDelta: FileStatus?

        /// The identity on disk now, for the given head; nil (by throwing) when the files
        /// are not what the head says (a missing delta, a newer one).
        static func current(packagePath: String, head: PackageManifest.Head) throws -> Identity? {
            let metadata = PackageLayout.metadataDirectory(of: packagePath)
            guard let index = try FileSystem.statusIfExists(PackageLayout.joined(metadata, PackageLayout.indexFileName))
            else { return nil }
            var lastDelta: FileStatus?
            if head.lastSequence > 0 {
                let name = PackageManifest.deltaFileName(head.lastSequence)
                guard let status = try FileSystem.statusIfExists(PackageLayout.joined(metadata, name)) else { return nil }
                lastDelta = status
            }
            let next = PackageManifest.deltaFileName(head.lastSequence + 1)
            if try FileSystem.statusIfExists(PackageLayout.joined(metadata, next)) != nil { return nil }
            return Identity(index: index, lastDelta: lastDelta)
        }

        /// Same files, unchanged: inode, size, modification time.
        func matches(_ other: Identity) -> Bool {
            func same(_ a: FileStatus?, _ b: FileStatus?) -> Bool {
                guard let a, let b else { return a == nil && b == nil }
                return a.inode == b.inode && a.size == b.size && a.modificationTime == b.modificationTime
            }
            return same(index, other.index) && same(lastDelta, other.lastDelta)
        }
    }

    struct Values: Sendable {
        var head: PackageManifest.Head
        var identity: Identity
    }

    /// The canonical path of the package this state describes.
    let packagePath: String
    let values: Mutex<Values>

    init(packagePath: String, head: PackageManifest.Head, identity: Identity) {
        self.packagePath = (try? PackageLocation(packagePath).path) ?? packagePath
        values = Mutex(Values(head: head, identity: identity))
    }

    /// The state of the manifest at `packagePath` whose head is `head`, as its files stand
    /// now (taken under the package's lock, with the manifest just read); nil when they
    /// are not what the head says.
    package static func taken(packagePath: String, head: PackageManifest.Head) -> TreePackageState? {
        guard let identity = try? Identity.current(packagePath: packagePath, head: head) else { return nil }
        return TreePackageState(packagePath: packagePath, head: head, identity: identity)
    }

    /// The head, when the manifest on disk is still exactly the one it describes.
    package func currentHead(packagePath: String) -> PackageManifest.Head? {
        // Compared as bytes: `é` and `e\u{301}` are two folders.
        guard let canonical = try? PackageLocation(packagePath).path, PathOrder.sameBytes(canonical, self.packagePath)
        else { return nil }
        let (head, identity) = values.withLock { ($0.head, $0.identity) }
        guard let now = try? Identity.current(packagePath: packagePath, head: head), now.matches(identity) else {
            return nil
        }
        return head
    }

    /// Records the head after a save (and the manifest files it left).
    func update(head: PackageManifest.Head, packagePath: String) {
        guard let identity = try? Identity.current(packagePath: packagePath, head: head) else { return }
        values.withLock { $0 = Values(head: head, identity: identity) }
    }
}
