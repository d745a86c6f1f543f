import Foundation

/// A temporary location beside a destination, for writers that write in place: the
/// document is written there, flushed, and swapped in with one `renameat2`, so a failed or
/// cancelled write leaves the destination as it was and no partial file behind.
struct StagedDestination {
    let finalPath: String
    let stagingPath: String

    /// A fresh hidden name in the destination's directory, recognisable by its marker.
    init(for destination: URL) throws {
        finalPath = try FileCoordinator.path(of: destination)
        let (directory, name) = DocumentPaths.split(finalPath)
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        stagingPath = DocumentPaths.join(directory, "." + name + AtomicFile.temporaryMarker + suffix)
    }

    var url: URL { URL(fileURLWithPath: stagingPath) }

    /// Flushes what was written and swaps it in: RENAME_EXCHANGE over an existing
    /// destination (whose old version is then removed), RENAME_NOREPLACE otherwise.
    ///
    /// - Complexity: one fsync per file and directory written (with `.full`), one rename.
    func commit(durability: Durability) throws {
        guard try FileSystem.statusIfExists(stagingPath) != nil else {
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [NSLocalizedDescriptionKey: "the writer wrote nothing to its destination", NSFilePathErrorKey: finalPath])
        }
        if durability == .full { try StagedDestination.syncTree(stagingPath) }
        let parent = DocumentPaths.split(finalPath).directory
        if try FileSystem.statusIfExists(finalPath) == nil {
            try FileSystem.renameNoReplace(stagingPath, to: finalPath)
            if durability == .full { try FileSystem.syncDirectory(parent) }
        } else {
            try FileSystem.exchange(stagingPath, with: finalPath)
            if durability == .full { try FileSystem.syncDirectory(parent) }
            // The staging name now holds the previous version.
            try? FileSystem.removeTree(stagingPath)
        }
    }

    /// Removes whatever the writer left at the staging name.
    func discard() {
        try? FileSystem.removeTree(stagingPath)
    }

    /// fsyncs every file and directory below `path`, children before parents.
    static func syncTree(_ path: String) throws {
        let status = try FileSystem.status(path)
        switch status.kind {
        case .regular:
            let file = try FileDescriptor.open(path, options: .noFollow)
            try file.sync()
        case .directory:
            let directory = try FileDescriptor.openDirectory(path)
            for name in try DirectoryListing.names(in: directory) { try syncTree(path + "/" + name) }
            try directory.sync()
        default:
            break
        }
    }
}
