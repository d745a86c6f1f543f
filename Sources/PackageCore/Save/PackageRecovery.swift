/// Brings a package back to exactly one complete version after an interrupted save, and
/// keeps pkgtool's own metadata in it sound.
///
/// Run, under the package's exclusive lock, by every save before it starts and by the
/// commands that find leftovers. In order:
/// 1. Beside the package: a version set aside by the no-exchange fallback with nothing at
///    the package's path is put back; staging trees and set-aside versions whose owner is
///    gone are removed (`StagedReplacement.sweepLeftovers`).
/// 2. Inside `.pkgtool`: pieces of the wrong type are set aside; a committed journal is
///    validated (`SaveJournal.decode`) and rolled forward, or — refused — set aside with a
///    warning and never applied; temporaries of an uncommitted save are removed.
///
/// Whenever the package may hold something its manifest does not say (a journal refused or
/// lost, a damaged manifest), a marker asks the next save to check the package before
/// trusting its manifest (`PackageRecovery.checkMarkerName`).
package enum PackageRecovery {
    /// What recovery did.
    package struct Report: Sendable, Equatable {
        package var rolledForward = false
        package var temporariesRemoved = 0
        package var stagingDirectoriesRemoved = 0
        package var restoredFromAside = false
        /// Things set aside or left undone, one sentence each, for the person to read.
        package var warnings: [String] = []
        package var didAnything: Bool {
            rolledForward || temporariesRemoved > 0 || stagingDirectoriesRemoved > 0 || restoredFromAside
                || !warnings.isEmpty
        }
    }

    /// The marker file in `.pkgtool` that tells the next save not to trust the manifest
    /// until it has checked the package against it (as `--check-package` does).
    package static let checkMarkerName = "check"
    /// Where pieces of `.pkgtool` that cannot be used are set aside, inside `.pkgtool`.
    package static let setAsideDirectoryName = "set-aside"

    /// Whether there is anything to recover (cheap: a few stats and one listing of the
    /// package's folder). A probe: where the package cannot even be looked into, it says
    /// no, and the operation that follows reports the real problem.
    package static func needsRecovery(packagePath: String) throws -> Bool {
        guard let package = try? PackageLocation(packagePath) else { return false }
        return needsRecovery(package)
    }

    /// `needsRecovery(packagePath:)` for a resolved location.
    package static func needsRecovery(_ package: PackageLocation) -> Bool {
        (try? probe(package)) ?? false
    }

    private static func probe(_ package: PackageLocation) throws -> Bool {
        let metadata = package.metadataPath
        if let status = try FileSystem.statusIfExists(metadata), status.kind != .directory { return true }
        if try FileSystem.statusIfExists(RelativePath.join(metadata, SaveJournal.fileName)) != nil { return true }
        let temporary = RelativePath.join(metadata, SaveJournal.temporaryDirectoryName)
        if let status = try FileSystem.statusIfExists(temporary) {
            guard status.kind == .directory else { return true }
            let directory = try FileDescriptor.openDirectory(temporary)
            if try !DirectoryListing.names(in: directory, skippingNonUTF8Names: true).isEmpty { return true }
        }
        let parent = try FileDescriptor.openDirectory(package.parentPath)
        return try DirectoryListing.names(in: parent, skippingNonUTF8Names: true).contains {
            package.siblings.role(of: $0) != nil
        }
    }

    /// Recovers the package at `packagePath`. The caller holds the exclusive `PackageLock`.
    @discardableResult
    package static func recover(packagePath: String, durability: Durability = .full) throws -> Report {
        try recover(try PackageLocation(packagePath), durability: durability)
    }

    /// Recovers the package at `package`. The caller holds the exclusive `PackageLock`.
    ///
    /// - Throws: `FileSystemError` when a committed journal cannot be applied (it names the
    ///   path in the way and stays, so that the next command finishes once the obstacle is
    ///   gone), or the package cannot be put back from a set-aside version.
    /// - Complexity: the journal's operations when one is committed; otherwise one removal
    ///   per leftover entry.
    @discardableResult
    package static func recover(_ package: PackageLocation, durability: Durability = .full) throws -> Report {
        var report = Report()

        // 1. Beside the package.
        var status = try FileSystem.statusIfExists(package.path)
        do {
            let swept = try StagedReplacement.sweepLeftovers(beside: package.path, durability: durability)
            if status == nil, swept > 0 {
                status = try FileSystem.statusIfExists(package.path)
                report.restoredFromAside = status != nil
            }
            report.stagingDirectoriesRemoved = swept - (report.restoredFromAside ? 1 : 0)
        } catch {
            guard status != nil else { throw error }
            report.warnings.append("leftovers of an earlier save beside '\(package)' could not be removed: \(error)")
        }

        // 2. Inside the package.
        guard status?.kind == .directory else { return report }
        let root = try FileDescriptor.openDirectory(package.path)
        try recoverMetadata(of: package, root: root, durability: durability, report: &report)
        return report
    }

    private static func recoverMetadata(
        of package: PackageLocation, root: borrowing FileDescriptor, durability: Durability, report: inout Report
    ) throws {
        let metadataName = PackageLayout.metadataDirectoryName
        guard let metadataStatus = try FileSystem.statusIfExists(metadataName, relativeTo: root.rawValue) else { return }
        guard metadataStatus.kind == .directory else {
            // The name is pkgtool's (Specs/manifest.md): whatever stands there is not content.
            try FileSystem.removeTree(metadataName, relativeTo: root.rawValue, displayPath: package.metadataPath)
            report.warnings.append(
                "'\(package.metadataPath)' was a \(metadataStatus.kind), not pkgtool's metadata folder: removed; the next save rebuilds the manifest")
            return
        }
        let metadata = try FileDescriptor.openDirectory(metadataName, relativeTo: root.rawValue, displayPath: package.metadataPath)
        var (present, needsCheck) = try setAsideMisplacedPieces(in: metadata, package: package, report: &report)
        if present.contains(RelativePath(trusted: SaveJournal.fileName)) {
            switch try recoverJournal(of: package, root: root, metadata: metadata, durability: durability, report: &report) {
            case .rolledForward: break
            case .refused: needsCheck = true
            case .abandoned: return
            }
        }
        if present.contains(RelativePath(trusted: SaveJournal.temporaryDirectoryName)) {
            let removed = try removeTemporaries(in: metadata, package: package)
            report.temporariesRemoved += removed
            if removed > 0 { needsCheck = true }
        }
        if needsCheck { try markForCheck(metadata, durability: durability) }
    }

    /// Sets aside the pieces of `.pkgtool` of the wrong type, which cannot be used nor
    /// trusted, and removes half-written atomic replacements of the journal or manifest
    /// files. Returns the names present afterwards, and whether the package needs a check
    /// (a piece that speaks for its content was set aside).
    private static func setAsideMisplacedPieces(
        in metadata: borrowing FileDescriptor, package: PackageLocation, report: inout Report
    ) throws -> (present: Set<RelativePath>, needsCheck: Bool) {
        var needsCheck = false
        let expectedKinds: [String: FileKind] = [
            SaveJournal.fileName: .regular, SaveJournal.temporaryDirectoryName: .directory,
            PackageLayout.indexFileName: .regular, checkMarkerName: .regular, setAsideDirectoryName: .directory,
            PackageLayout.syncRecordFileName: .regular, PackageLayout.conflictsDirectoryName: .directory,
        ]
        // (The listing's d_type spares a stat per entry; `unknown` costs one.)
        var present = Set<RelativePath>()
        for entry in try DirectoryListing.entries(in: metadata) {
            present.insert(RelativePath(trusted: entry.name))
            let name = entry.name
            let expected =
                expectedKinds.first { PathOrder.sameBytes($0.key, name) }?.value
                ?? (PackageLayout.hasDeltaPrefix(name) ? .regular : nil)
            if name.contains(".pkgtool-") {
                // Half-written atomic replacements of the journal or manifest files.
                try FileSystem.removeTree(name, relativeTo: metadata.rawValue, displayPath: package.metadataPath + "/" + name)
                report.temporariesRemoved += 1
                continue
            }
            guard let expected else { continue }
            var kind = entry.kind
            if kind == .unknown {
                guard let status = try FileSystem.statusIfExists(name, relativeTo: metadata.rawValue) else { continue }
                kind = status.kind
            }
            if kind != expected {
                try setAside(name, in: metadata, package: package)
                present.remove(RelativePath(trusted: name))
                report.warnings.append(
                    "'\(package.metadataPath)/\(name)' was a \(kind), not a \(expected): set aside; the next save rebuilds it")
                // (The sync record says nothing of the package's content.)
                needsCheck =
                    needsCheck
                    || (!PathOrder.sameBytes(name, SaveJournal.temporaryDirectoryName)
                        && !PathOrder.sameBytes(name, PackageLayout.syncRecordFileName)
                        && !PathOrder.sameBytes(name, PackageLayout.conflictsDirectoryName))
            }
        }
        return (present, needsCheck)
    }

    /// What became of a committed journal.
    private enum JournalRecovery {
        /// Applied, removed, `.pkgtool` fsynced.
        case rolledForward
        /// Refused by validation, set aside unapplied: the package needs a check.
        case refused
        /// Set aside halfway, the check marker already left: recovery stops there.
        case abandoned
    }

    /// A committed journal: validated (its bytes, and its binding to this package root and
    /// its `.pkgtool/tmp`), then rolled forward; refused, set aside and never applied.
    private static func recoverJournal(
        of package: PackageLocation, root: borrowing FileDescriptor, metadata: borrowing FileDescriptor,
        durability: Durability, report: inout Report
    ) throws -> JournalRecovery {
        let journalPath = package.metadataPath + "/" + SaveJournal.fileName
        let bytes = try readAll(SaveJournal.fileName, relativeTo: metadata.rawValue, displayPath: journalPath)
        let temporaryInode =
            (try? FileSystem.status(SaveJournal.temporaryDirectoryName, relativeTo: metadata.rawValue).inode) ?? 0
        let binding = SaveJournal.Binding(root: try root.status().inode, temporaryDirectory: temporaryInode)
        switch SaveJournal.decode(bytes, expected: binding) {
        case .success(let journal):
            guard try rollForward(journal, of: package, root: root, metadata: metadata, durability: durability, report: &report)
            else { return .abandoned }
            try FileSystem.remove(SaveJournal.fileName, relativeTo: metadata.rawValue)
            if durability == .full { try metadata.sync() }
            report.rolledForward = true
            return .rolledForward
        case .failure(let refusal):
            try setAside(SaveJournal.fileName, in: metadata, package: package)
            report.warnings.append(
                "set aside the journal '\(journalPath)' without applying it: \(refusal.reason)")
            return .refused
        }
    }

    /// Applies a valid journal. False when the package no longer is what the journal was
    /// written for (a patched file replaced, a link where it expects a folder): then it is
    /// set aside unfinished, never forced, and the package marked for a check. Any other
    /// error is an obstacle to wait out: thrown, the journal kept for the next command.
    private static func rollForward(
        _ journal: SaveJournal, of package: PackageLocation, root: borrowing FileDescriptor,
        metadata: borrowing FileDescriptor, durability: Durability, report: inout Report
    ) throws -> Bool {
        let journalPath = package.metadataPath + "/" + SaveJournal.fileName
        do {
            _ = try journal.apply(root: root, package: package, durability: durability)
            return true
        } catch let refusal as SaveJournal.Refusal {
            // The package no longer is what the journal was written for (a patched
            // file replaced, its data gone): never forced; set aside.
            try setAside(SaveJournal.fileName, in: metadata, package: package)
            report.warnings.append(
                "set aside the journal '\(journalPath)' without finishing it: \(refusal.reason); the next save checks the package")
            try markForCheck(metadata, durability: durability)
            return false
        } catch let error as FileSystemError
            where error.errno == .tooManySymbolicLinks || error.errno == .notDirectory
        {
            // A link (or a file) stands where the journal expects a folder: it was
            // never pkgtool's to follow. Not an obstacle to wait out: set aside.
            try setAside(SaveJournal.fileName, in: metadata, package: package)
            report.warnings.append(
                "set aside the journal '\(journalPath)' without finishing it: \(error); the next save checks the package")
            try markForCheck(metadata, durability: durability)
            return false
        } catch let error as FileSystemError {
            var explained = error
            explained.reason = [error.reason, "an earlier save of '\(package)' could not be finished; once this is fixed, any pkgtool command on it finishes it"]
                .compactMap { $0 }.joined(separator: "; ")
            throw explained
        }
    }

    /// Removes the temporaries of a save that never committed and returns how many. (Without
    /// a journal they may also be what is left of one applied halfway and then lost: the
    /// caller marks the package for a check.)
    private static func removeTemporaries(in metadata: borrowing FileDescriptor, package: PackageLocation) throws -> Int {
        let temporaryName = SaveJournal.temporaryDirectoryName
        let temporary = try FileDescriptor.openDirectory(
            temporaryName, relativeTo: metadata.rawValue, displayPath: package.metadataPath + "/" + temporaryName)
        var removed = 0
        for leftover in try DirectoryListing.names(in: temporary) {
            try FileSystem.removeTree(
                leftover, relativeTo: temporary.rawValue, displayPath: package.metadataPath + "/" + temporaryName + "/" + leftover)
            removed += 1
        }
        return removed
    }

    /// Moves `name` out of the way into `.pkgtool/set-aside/` (replacing what an earlier
    /// refusal put there under the same name), where a person can still look at it.
    private static func setAside(_ name: String, in metadata: borrowing FileDescriptor, package: PackageLocation) throws {
        if try FileSystem.statusIfExists(setAsideDirectoryName, relativeTo: metadata.rawValue)?.kind != .directory {
            try FileSystem.removeTree(setAsideDirectoryName, relativeTo: metadata.rawValue)
            try FileSystem.makeDirectory(setAsideDirectoryName, relativeTo: metadata.rawValue, permissions: 0o700)
        }
        let target = setAsideDirectoryName + "/" + name
        try FileSystem.removeTree(target, relativeTo: metadata.rawValue, displayPath: package.metadataPath + "/" + target)
        try FileSystem.rename(name, to: target, fromDirectory: metadata.rawValue, toDirectory: metadata.rawValue)
    }

    /// Leaves the marker that makes the next save check the package before trusting its
    /// manifest.
    static func markForCheck(_ metadata: borrowing FileDescriptor, durability: Durability) throws {
        let marker = try FileDescriptor.open(
            checkMarkerName, relativeTo: metadata.rawValue, access: .writeOnly, options: [.create, .noFollow])
        if durability == .full { try marker.sync() }
        try marker.close()
        if durability == .full { try metadata.sync() }
    }

    /// Whether the package carries the marker of `markForCheck`.
    static func isMarkedForCheck(_ package: PackageLocation) -> Bool {
        (try? FileSystem.statusIfExists(package.metadataPath + "/" + checkMarkerName)) != nil
    }

    static func readAll(_ path: String, relativeTo directory: Int32, displayPath: String) throws -> [UInt8] {
        let file = try FileDescriptor.open(path, relativeTo: directory, options: [.noFollow], displayPath: displayPath)
        let size = Int(try file.status().size)
        // A journal is a few bytes per operation; a huge one is not ours.
        guard size <= 1 << 30 else {
            throw FileSystemError(.read, path: displayPath, reason: "it is too large to be a pkgtool journal")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        let count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }
        return Array(bytes[..<count])
    }
}
