import Glibc

/// Brings a package back to exactly one complete version after an interrupted save.
///
/// Run, under the package's exclusive lock, by every save before it starts and by every
/// command that finds leftovers: a committed journal is rolled forward; temporaries of
/// an uncommitted journaled save are removed; staging directories beside the package
/// are removed, and a package moved aside by the no-exchange fallback is put back.
public enum PackageRecovery {
    /// What recovery did.
    public struct Report: Sendable, Equatable {
        public var rolledForward = false
        public var temporariesRemoved = 0
        public var stagingDirectoriesRemoved = 0
        public var restoredFromAside = false
        public var didAnything: Bool {
            rolledForward || temporariesRemoved > 0 || stagingDirectoriesRemoved > 0 || restoredFromAside
        }
    }

    /// The names of staging and set-aside directories of the package called `name`.
    static func stagingPrefix(for name: String) -> String { "." + name + ".pkgtool-staging-" }
    static func asidePrefix(for name: String) -> String { "." + name + ".pkgtool-old-" }
    /// The previous version an atomic save keeps when asked (`SaveOptions.keepsPrevious`).
    /// Not a leftover: recovery leaves it alone.
    public static func previousName(for name: String) -> String { "." + name + ".pkgtool-previous" }

    /// Whether there is anything to recover (cheap: a few stats and one listing of the
    /// parent directory). A probe: where the package cannot even be looked into, it says
    /// no, and the operation that follows reports the real problem.
    public static func needsRecovery(packagePath: String) throws -> Bool {
        do {
            return try probe(packagePath)
        } catch {
            return false
        }
    }

    private static func probe(_ packagePath: String) throws -> Bool {
        let metadata = PackageLayout.metadataDirectory(of: packagePath)
        if try FileSystem.statusIfExists(PackageLayout.joined(metadata, SaveJournal.fileName)) != nil { return true }
        let temporary = PackageLayout.joined(metadata, SaveJournal.temporaryDirectoryName)
        if try FileSystem.statusIfExists(temporary) != nil {
            let directory = try FileDescriptor.openDirectory(temporary)
            if try !DirectoryListing.names(in: directory).isEmpty { return true }
        }
        return try !leftovers(packagePath: packagePath).isEmpty
    }

    /// Staging and set-aside directories beside the package.
    static func leftovers(packagePath: String) throws -> [String] {
        let (parent, name) = AtomicFile.split(PackageLock.trimmingTrailingSlashes(packagePath))
        let directory = try FileDescriptor.openDirectory(parent)
        let staging = stagingPrefix(for: name)
        let aside = asidePrefix(for: name)
        return try DirectoryListing.names(in: directory).filter { $0.hasPrefix(staging) || $0.hasPrefix(aside) }.sorted()
    }

    /// Recovers the package at `packagePath`. The caller holds the exclusive `PackageLock`.
    ///
    /// - Complexity: the journal's operations when one is committed; otherwise one removal
    ///   per leftover entry.
    @discardableResult
    public static func recover(packagePath: String, durability: Durability = .full) throws -> Report {
        var report = Report()
        let path = PackageLock.trimmingTrailingSlashes(packagePath)
        let (parentPath, name) = AtomicFile.split(path)
        let parent = try FileDescriptor.openDirectory(parentPath)

        // 1. A package set aside by the no-exchange fallback, with nothing in its place.
        let asides = try DirectoryListing.names(in: parent).filter { $0.hasPrefix(asidePrefix(for: name)) }.sorted()
        if try FileSystem.statusIfExists(name, relativeTo: parent.rawValue) == nil, let aside = asides.last {
            try FileSystem.rename(aside, to: name, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
            if durability == .full { try parent.sync() }
            report.restoredFromAside = true
        }

        // 2. Inside the package: roll a committed journal forward, drop uncommitted temporaries.
        if try FileSystem.statusIfExists(name, relativeTo: parent.rawValue)?.kind == .directory {
            let root = try FileDescriptor.openDirectory(name, relativeTo: parent.rawValue, displayPath: path)
            let metadataName = PackageLayout.metadataDirectoryName
            let journalPath = metadataName + "/" + SaveJournal.fileName
            if try FileSystem.statusIfExists(journalPath, relativeTo: root.rawValue) != nil {
                let bytes = try readAll(journalPath, relativeTo: root.rawValue, displayPath: PackageLayout.joined(path, journalPath))
                if let journal = SaveJournal.decode(bytes) {
                    _ = try journal.apply(root: root, rootPath: path, durability: durability)
                    report.rolledForward = true
                }
                try FileSystem.remove(journalPath, relativeTo: root.rawValue)
                if durability == .full { try FileSystem.syncDirectory(metadataName, relativeTo: root.rawValue) }
            }
            let temporaryPath = metadataName + "/" + SaveJournal.temporaryDirectoryName
            if try FileSystem.statusIfExists(temporaryPath, relativeTo: root.rawValue) != nil {
                let temporary = try FileDescriptor.openDirectory(temporaryPath, relativeTo: root.rawValue)
                for leftover in try DirectoryListing.names(in: temporary) {
                    try FileSystem.removeTree(leftover, relativeTo: temporary.rawValue)
                    report.temporariesRemoved += 1
                }
            }
            // Half-written atomic replacements of the journal or manifest files.
            if try FileSystem.statusIfExists(metadataName, relativeTo: root.rawValue)?.kind == .directory {
                let metadata = try FileDescriptor.openDirectory(metadataName, relativeTo: root.rawValue)
                for leftover in try DirectoryListing.names(in: metadata) where leftover.contains(AtomicFile.temporaryMarker) {
                    try FileSystem.remove(leftover, relativeTo: metadata.rawValue)
                    report.temporariesRemoved += 1
                }
            }
        }

        // 3. Staging directories (a new tree never swapped in, or an old one not yet
        //    removed) and set-aside copies that are no longer needed.
        for leftover in try DirectoryListing.names(in: parent)
        where leftover.hasPrefix(stagingPrefix(for: name)) || leftover.hasPrefix(asidePrefix(for: name)) {
            try FileSystem.removeTree(leftover, relativeTo: parent.rawValue)
            report.stagingDirectoriesRemoved += 1
        }
        return report
    }

    static func readAll(_ path: String, relativeTo directory: Int32, displayPath: String) throws -> [UInt8] {
        let file = try FileDescriptor.open(path, relativeTo: directory, options: [.noFollow])
        let size = Int(try file.status().size)
        var bytes = [UInt8](repeating: 0, count: size)
        let count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }
        return Array(bytes[..<count])
    }
}
