import Glibc
import Synchronization

/// Carries out a `SavePlan` with one strategy, and records the result in the manifest.
final class SaveContext {
    let packagePath: String
    let plan: SavePlan
    let manifest: PackageManifest?
    let options: SaveOptions
    /// Permission bits for the package directory when it is created.
    let rootPermissions: UInt32
    let progress: SaveProgressTracker
    let writer: EntryWriter
    /// The package-side status of each new entry this save wrote (by index in `plan.new`).
    var writtenStatus: [Int: FileStatus] = [:]
    /// Where the manifest's delta chain stands after this save's own record, so that a
    /// follow-up delta can chain to it.
    var chain: (base: ContentHash, last: ContentHash, sequence: UInt64)?
    /// Unchanged files hard-linked into the new tree (atomic).
    var linkedFiles = 0
    /// The number of entries of the new tree, when the plan holds only part of it (a save
    /// of an edited tree visits only what changed).
    var entryCountOverride: Int?
    var newEntryCount: Int { entryCountOverride ?? plan.new.entries.count }
    /// Records written to manifest deltas by this save.
    var deltaRecordsWritten = 0

    init(packagePath: String, plan: SavePlan, manifest: PackageManifest?, options: SaveOptions, rootPermissions: UInt32) {
        self.packagePath = packagePath
        self.plan = plan
        self.manifest = manifest
        self.options = options
        self.rootPermissions = rootPermissions
        self.progress = SaveProgressTracker(report: options.progress)
        self.writer = EntryWriter(durability: options.durability, progress: progress)
    }

    var durable: Bool { options.durability == .full }

    func execute(packageExists: Bool, statistics: inout SaveStatistics) throws {
        if options.keepsPrevious && options.strategy != .atomic {
            throw SaveRefusal("keeping the previous version applies to the atomic strategy, not \(options.strategy)")
        }
        let manifestIsCurrent = manifest != nil && plan.refreshes.isEmpty && manifest?.snapshot.rootHash == plan.new.rootHash
        if packageExists && plan.isEmpty && manifestIsCurrent && options.strategy != .full {
            statistics.unchanged = true
            progress.plan(files: 0, bytes: 0)
            progress.finish()
            return
        }
        if packageExists && plan.isEmpty, options.strategy != .full, let manifest {
            // Only stat data to record afresh: a new delta file, no new tree.
            try recordMetadataOnly(manifest, statistics: &statistics)
            progress.finish()
            statistics.unchanged = true
            return
        }
        switch options.strategy {
        case .journaled where packageExists:
            try saveJournaled(statistics: &statistics)
        case .journaled, .atomic:
            try saveStaged(copyEverything: false, packageExists: packageExists, statistics: &statistics)
        case .full:
            try saveStaged(copyEverything: true, packageExists: packageExists, statistics: &statistics)
        }
        progress.finish()
        statistics.unchanged = plan.isEmpty
    }

    // MARK: Metadata only

    /// Adds one delta file to the package's manifest. Safe under every strategy: the file is
    /// new (no linked inode is touched) and both the old and the new manifest describe the
    /// same content.
    private func recordMetadataOnly(_ manifest: PackageManifest, statistics: inout SaveStatistics) throws {
        let record = manifestRecord()
        let metadataPath = PackageLayout.metadataDirectory(of: packagePath)
        let metadata = try FileDescriptor.openDirectory(metadataPath)
        if manifest.needsCompaction {
            let bytes = PackageManifest.encodedIndex(TreeSnapshot(entries: record.entries, rootHash: plan.new.rootHash))
            try PackageManifest.writeIndexBytes(bytes, packagePath: packagePath, durability: options.durability)
            statistics.metadataBytesWritten += Int64(bytes.count)
            statistics.manifestCompacted = true
            return
        }
        let delta = manifest.encodedDelta(
            upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
            newEntryCount: newEntryCount, relinkWindow: nil)
        // Atomically: a crash must not leave a torn delta, which would discredit the manifest.
        try AtomicFile.write(delta.bytes, to: PackageLayout.joined(metadataPath, delta.name), durability: options.durability)
        withExtendedLifetime(metadata) {}
        statistics.metadataBytesWritten += Int64(delta.bytes.count)
    }

    // MARK: Journaled

    /// New files under temporary names in `.pkgtool/tmp`, a redo journal committed with one
    /// atomic file write, then applied; recovery re-applies it after a crash.
    private func saveJournaled(statistics: inout SaveStatistics) throws {
        let root = try FileDescriptor.openDirectory(packagePath)
        let metadataName = PackageLayout.metadataDirectoryName
        let temporaryName = metadataName + "/" + SaveJournal.temporaryDirectoryName
        if try FileSystem.statusIfExists(metadataName, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(metadataName, relativeTo: root.rawValue)
            if durable { try root.sync() }
        }
        if try FileSystem.statusIfExists(temporaryName, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(temporaryName, relativeTo: root.rawValue, permissions: 0o700)
        }
        let temporary = try FileDescriptor.openDirectory(temporaryName, relativeTo: root.rawValue)
        planProgress(linking: false)

        var removals: [SaveJournal.Operation] = []
        var directories: [SaveJournal.Operation] = []
        var renames: [SaveJournal.Operation] = []
        var permissions: [SaveJournal.Operation] = []
        for index in plan.removals {
            let entry = plan.old.entries[index]
            removals.append(.remove(path: entry.path, kind: entry.kind))
        }
        var counter = 0
        func nextTemporary() -> String {
            counter += 1
            return "n" + String(counter)
        }
        for index in plan.creations {
            let entry = plan.new.entries[index]
            switch entry.kind {
            case .directory:
                directories.append(.makeDirectory(path: entry.path, permissions: entry.permissions))
                statistics.directoriesCreated += 1
            case .symbolicLink:
                let name = nextTemporary()
                writtenStatus[index] = try writer.writeSymbolicLink(
                    target: entry.linkTarget ?? "", named: name, in: temporary.rawValue)
                renames.append(.rename(temporary: name, path: entry.path))
                statistics.symbolicLinksWritten += 1
            default:
                let name = nextTemporary()
                let written = try writeFile(index, named: name, in: temporary.rawValue)
                writtenStatus[index] = written.status
                renames.append(.rename(temporary: name, path: entry.path))
                statistics.filesWritten += 1
                statistics.bytesWritten += written.size
            }
        }
        for index in plan.permissionChanges {
            let entry = plan.new.entries[index]
            permissions.append(.setPermissions(path: entry.path, permissions: entry.permissions))
        }
        statistics.permissionsChanged = plan.permissionChanges.count

        // The manifest: a delta, or a new base when there is none or the deltas grew.
        var metadataOperations: [SaveJournal.Operation] = []
        let record = manifestRecord()
        if let manifest, !manifest.needsCompaction {
            let delta = manifest.encodedDelta(
                upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
                newEntryCount: newEntryCount, relinkWindow: nil)
            let name = nextTemporary()
            try writeMetadata(delta.bytes, named: name, in: temporary.rawValue)
            metadataOperations.append(.rename(temporary: name, path: metadataName + "/" + delta.name))
            statistics.metadataBytesWritten += Int64(delta.bytes.count)
            chain = (manifest.baseChecksum, Self.trailingChecksum(delta.bytes), manifest.lastSequence + 1)
            deltaRecordsWritten += record.upserts.count + record.removals.count
        } else {
            let bytes = PackageManifest.encodedIndex(TreeSnapshot(entries: record.entries, rootHash: plan.new.rootHash))
            let name = nextTemporary()
            try writeMetadata(bytes, named: name, in: temporary.rawValue)
            metadataOperations.append(.rename(temporary: name, path: metadataName + "/" + PackageLayout.indexFileName))
            for stale in manifest?.deltaFileNames ?? [] {
                metadataOperations.append(.remove(path: metadataName + "/" + stale, kind: .regular))
            }
            statistics.metadataBytesWritten += Int64(bytes.count)
            statistics.manifestCompacted = manifest != nil
            chain = (Self.trailingChecksum(bytes), ContentHash(high: 0, low: 0), 0)
        }
        if durable { try temporary.sync() }

        // Commit, apply, and retire the journal.
        let journal = SaveJournal(operations: removals + directories + renames + permissions + metadataOperations)
        let journalBytes = journal.encoded()
        try AtomicFile.write(
            journalBytes, to: PackageLayout.joined(packagePath, metadataName + "/" + SaveJournal.fileName),
            durability: options.durability)
        statistics.metadataBytesWritten += Int64(journalBytes.count)
        let applyStart = FileClock.lowerBound()
        statistics.entriesRemoved = try journal.apply(root: root, rootPath: packagePath, durability: options.durability)
        let applyEnd = FileClock.upperBound()
        try FileSystem.remove(metadataName + "/" + SaveJournal.fileName, relativeTo: root.rawValue)
        if durable { try FileSystem.syncDirectory(metadataName, relativeTo: root.rawValue) }
        // Renaming the new files into place moved their ctimes after the delta recorded
        // them: record the window, so the stat cache keeps trusting them. (Best effort: if
        // it fails, they are reread once.)
        if !renames.isEmpty {
            do {
                try recordRelinkWindow(applyStart...applyEnd, statistics: &statistics)
            } catch {
                statistics.notes.append("could not record the new files' stat data (\(error)); they will be reread once")
            }
        }
    }

    // MARK: Full and atomic

    /// The whole new tree built in a staging directory beside the package (unchanged files
    /// hard-linked unless `copyEverything`), fsynced, then swapped in with one
    /// `renameat2(RENAME_EXCHANGE)` (or `RENAME_NOREPLACE` for a first save).
    private func saveStaged(copyEverything: Bool, packageExists: Bool, statistics: inout SaveStatistics) throws {
        let (parentPath, name) = AtomicFile.split(packagePath)
        let parent = try FileDescriptor.openDirectory(parentPath)
        let stagingName = PackageRecovery.stagingPrefix(for: name) + AtomicFile.randomSuffix()
        let stagingPath = PackageLayout.joined(parentPath, stagingName)
        var permissions = rootPermissions
        if packageExists { permissions = try FileSystem.status(name, relativeTo: parent.rawValue).permissions }
        let keepsPrevious = options.keepsPrevious && packageExists && !copyEverything
        // The previous version, when one is kept and sound, becomes the staging tree.
        let previous = keepsPrevious ? try claimPrevious(name, parent: parent, as: stagingName, statistics: &statistics) : nil
        if previous == nil {
            try FileSystem.makeDirectory(stagingName, relativeTo: parent.rawValue, permissions: permissions)
        }
        do {
            let staging = try FileDescriptor.openDirectory(stagingName, relativeTo: parent.rawValue, displayPath: stagingPath)
            try FileSystem.setPermissions(".", permissions, relativeTo: staging.rawValue)
            if let previous {
                try updateStagingTree(staging, from: previous, statistics: &statistics)
            } else {
                try buildStagingTree(
                    staging, copyEverything: copyEverything, packageExists: packageExists, statistics: &statistics)
            }
            // Commit: swap the staged tree in.
            if packageExists {
                try swapIn(stagingName, name, parent: parent, statistics: &statistics)
            } else {
                try FileSystem.renameNoReplace(
                    stagingName, to: name, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
            }
            do {
                if durable { try parent.sync() }
            } catch {
                // The swap may not be durable: undo it, so that the error leaves the previous
                // version in place, as every other failure does.
                if packageExists {
                    try? FileSystem.exchange(
                        stagingName, with: name, firstDirectory: parent.rawValue, secondDirectory: parent.rawValue)
                } else {
                    try? FileSystem.rename(name, to: stagingName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
                }
                throw error
            }
        } catch {
            // Nothing was swapped in: the package is untouched. Remove the partial staging
            // tree now if we can; recovery does it otherwise.
            try? FileSystem.removeTree(stagingName, relativeTo: parent.rawValue)
            throw error
        }
        // Saved. The old tree now sits under the staging name.
        statistics.entriesRemoved = plan.removedEntryCount
        statistics.permissionsChanged = plan.permissionChanges.count
        if keepsPrevious {
            // Kept, for the next save to bring up to date. Should this rename be lost to a
            // crash, recovery removes the old tree as the staging litter it then is.
            do {
                try FileSystem.rename(
                    stagingName, to: PackageRecovery.previousName(for: name), fromDirectory: parent.rawValue,
                    toDirectory: parent.rawValue)
            } catch {
                statistics.notes.append("the previous version could not be kept (\(error)); the next save removes it")
            }
            return
        }
        let removalStart = FileClock.lowerBound()
        do {
            try FileSystem.removeTree(stagingName, relativeTo: parent.rawValue, workers: options.workers)
            // Unlinking the old names moved the linked files' ctimes once more: record that
            // window too, so the stat cache keeps trusting them.
            if linkedFiles > 0 { try recordRelinkWindow(removalStart...FileClock.upperBound(), statistics: &statistics) }
        } catch {
            statistics.notes.append("the previous version could not be removed (\(error)); the next save removes it")
        }
    }

    /// Creates every entry of the new tree under `staging`, and its manifest.
    private func buildStagingTree(
        _ staging: borrowing FileDescriptor, copyEverything: Bool, packageExists: Bool,
        statistics: inout SaveStatistics
    ) throws {
        let packageDescriptor = packageExists ? SharedDescriptor(try FileDescriptor.openDirectory(packagePath)) : nil
        let package: Int32? = packageDescriptor?.rawValue
        defer { withExtendedLifetime(packageDescriptor) {} }
        planProgress(linking: !copyEverything)
        var directories: [String] = [""]
        let windowStart = FileClock.lowerBound()
        let changedPermissions = Set(plan.permissionChanges)
        var pendingLinks: [PendingLink] = []
        for (index, entry) in plan.new.entries.enumerated() {
            switch entry.kind {
            case .directory:
                try FileSystem.makeDirectory(entry.path, relativeTo: staging.rawValue, permissions: entry.permissions)
                try FileSystem.setPermissions(entry.path, entry.permissions, relativeTo: staging.rawValue)
                directories.append(entry.path)
                statistics.directoriesCreated += 1
            case .symbolicLink:
                writtenStatus[index] = try writer.writeSymbolicLink(
                    target: entry.linkTarget ?? "", named: entry.path, in: staging.rawValue)
                statistics.symbolicLinksWritten += 1
            default:
                if !copyEverything, package != nil, let oldIndex = plan.unchangedOld[index],
                    !changedPermissions.contains(index)
                {
                    pendingLinks.append(PendingLink(from: plan.old.entries[oldIndex].path, to: entry.path, index: index))
                    continue
                }
                try writeStagedFile(
                    index, into: staging, standsInForLink: plan.unchangedOld[index] != nil && !copyEverything,
                    statistics: &statistics)
            }
        }
        let outcome = try linkUnchanged(pendingLinks, from: package, into: staging, statistics: &statistics)
        let window: ClosedRange<Int64>? = outcome.linked > 0 ? windowStart...FileClock.upperBound() : nil
        try writeStagedManifest(
            staging, package: package, buildsOnPackage: !copyEverything && !outcome.linksImpossible, window: window,
            statistics: &statistics)
        linkedFiles = outcome.linked
        if durable {
            try FileSystem.syncDirectory(PackageLayout.metadataDirectoryName, relativeTo: staging.rawValue)
            // Children before parents: a directory's entry is flushed after its contents.
            for directory in directories.reversed() {
                try FileSystem.syncDirectory(directory.isEmpty ? "." : directory, relativeTo: staging.rawValue)
            }
        }
    }

    /// Writes new entry `index` into the staging tree and counts it: as a copy standing in
    /// for a link (unchanged content), or as a file written.
    func writeStagedFile(
        _ index: Int, into staging: borrowing FileDescriptor, standsInForLink: Bool, statistics: inout SaveStatistics
    ) throws {
        let written = try writeFile(index, named: plan.new.entries[index].path, in: staging.rawValue)
        writtenStatus[index] = written.status
        if standsInForLink {
            statistics.filesCopiedForLinks += 1
            statistics.bytesCopiedForLinks += written.size
        } else {
            statistics.filesWritten += 1
            statistics.bytesWritten += written.size
        }
    }

    /// Hard-links `pendingLinks` from the package into the staging tree; where links are
    /// impossible, copies the files instead and says so in the statistics.
    func linkUnchanged(
        _ pendingLinks: [PendingLink], from package: Int32?, into staging: borrowing FileDescriptor,
        statistics: inout SaveStatistics
    ) throws -> (linked: Int, linksImpossible: Bool) {
        guard let package, !pendingLinks.isEmpty else { return (0, false) }
        let outcome = try Self.link(pendingLinks, from: package, into: staging.rawValue, workers: options.workers)
        statistics.filesLinked += outcome.linked
        progress.filesWritten(outcome.linked)
        guard let code = outcome.impossibleBecause else { return (outcome.linked, false) }
        statistics.notes.append("hard links are impossible here (\(code.name)): unchanged files were copied instead")
        for index in outcome.notLinked {
            try writeStagedFile(index, into: staging, standsInForLink: true, statistics: &statistics)
        }
        return (outcome.linked, true)
    }

    /// Writes the staging tree's manifest: the package's base and deltas linked plus a new
    /// delta when the new tree builds on the package's files (`buildsOnPackage`) and the
    /// chain is short; a new base otherwise. `window`: when this save's links moved ctimes.
    func writeStagedManifest(
        _ staging: borrowing FileDescriptor, package: Int32?, buildsOnPackage: Bool, window: ClosedRange<Int64>?,
        statistics: inout SaveStatistics
    ) throws {
        let metadataName = PackageLayout.metadataDirectoryName
        try FileSystem.makeDirectory(metadataName, relativeTo: staging.rawValue)
        let metadata = try FileDescriptor.openDirectory(metadataName, relativeTo: staging.rawValue)
        let record = manifestRecord()
        if buildsOnPackage, let manifest, let package, !manifest.needsCompaction {
            for existing in [PackageLayout.indexFileName] + manifest.deltaFileNames
            where !manifest.staleDeltaFiles.contains(existing) {
                try FileSystem.link(
                    metadataName + "/" + existing, to: existing, fromDirectory: package,
                    toDirectory: metadata.rawValue)
            }
            let delta = manifest.encodedDelta(
                upserts: record.upserts, removals: record.removals, newRootHash: plan.new.rootHash,
                newEntryCount: newEntryCount, relinkWindow: window)
            try writeMetadata(delta.bytes, named: delta.name, in: metadata.rawValue)
            statistics.metadataBytesWritten += Int64(delta.bytes.count)
            chain = (manifest.baseChecksum, Self.trailingChecksum(delta.bytes), manifest.lastSequence + 1)
            deltaRecordsWritten += record.upserts.count + record.removals.count
        } else {
            let bytes = PackageManifest.encodedIndex(
                TreeSnapshot(entries: record.entries, rootHash: plan.new.rootHash), relinkWindow: window)
            try writeMetadata(bytes, named: PackageLayout.indexFileName, in: metadata.rawValue)
            statistics.metadataBytesWritten += Int64(bytes.count)
            statistics.manifestCompacted = manifest != nil && buildsOnPackage
            chain = (Self.trailingChecksum(bytes), ContentHash(high: 0, low: 0), 0)
        }
    }

    /// An unchanged file of the package to hard-link into the staging tree.
    struct PendingLink: Sendable {
        var from: String
        var to: String
        /// Its index in the new snapshot.
        var index: Int
    }

    /// Hard-links unchanged files into the staging tree on `workers` threads, one pair of
    /// source and target directories per job: links into one directory serialise on its
    /// lock in the kernel, links into different ones do not.
    ///
    /// Where links are impossible (another volume, a file system without them, a file at
    /// its link limit), the files not linked are returned, to be copied.
    private static func link(_ links: [PendingLink], from package: Int32, into staging: Int32, workers: Int) throws
        -> (linked: Int, notLinked: [Int], impossibleBecause: Errno?)
    {
        // Each job links name to name between two open directories instead of resolving
        // two paths per file.
        var groups: [String: [PendingLink]] = [:]
        for link in links {
            groups[SaveJournal.parent(of: link.from) + "\u{0}" + SaveJournal.parent(of: link.to), default: []].append(link)
        }
        let outcome = Mutex<(linked: Int, notLinked: [Int], impossibleBecause: Errno?)>((0, [], nil))
        let impossible: [Errno] = [.crossDevice, .notPermitted, .notSupported, Errno(rawValue: EMLINK)]
        try WorkQueue<[PendingLink]>.run(initial: Array(groups.values), workers: workers, makeContext: {}) { group, _, _ in
            let fromParent = SaveJournal.parent(of: group[0].from)
            let toParent = SaveJournal.parent(of: group[0].to)
            let source = try FileDescriptor.openDirectory(fromParent.isEmpty ? "." : fromParent, relativeTo: package)
            let target = try FileDescriptor.openDirectory(toParent.isEmpty ? "." : toParent, relativeTo: staging)
            var linked = 0
            var notLinked: [Int] = []
            var reason: Errno?
            for link in group {
                do throws(Errno) {
                    try Syscall.linkat(
                        source.rawValue, Self.lastComponent(of: link.from),
                        target.rawValue, Self.lastComponent(of: link.to), flags: 0)
                    linked += 1
                } catch {
                    guard impossible.contains(error) else {
                        throw FileSystemError(.link, path: link.from, destination: link.to, errno: error)
                    }
                    notLinked.append(link.index)
                    reason = reason ?? error
                }
            }
            outcome.withLock {
                $0.linked += linked
                $0.notLinked += notLinked
                $0.impossibleBecause = $0.impossibleBecause ?? reason
            }
        }
        return outcome.withLock { $0 }
    }

    private static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Exchanges the staging tree with the package; where the file system cannot exchange
    /// (EINVAL), moves the package aside and the staging tree in, which recovery undoes
    /// if a crash falls between the two renames.
    private func swapIn(_ stagingName: String, _ name: String, parent: borrowing FileDescriptor, statistics: inout SaveStatistics)
        throws
    {
        do {
            try FileSystem.exchange(stagingName, with: name, firstDirectory: parent.rawValue, secondDirectory: parent.rawValue)
            return
        } catch {
            guard error.errno == .invalidArgument || error.errno == .notSupported else { throw error }
        }
        let asideName = PackageRecovery.asidePrefix(for: name) + AtomicFile.randomSuffix()
        try FileSystem.rename(name, to: asideName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        if durable { try parent.sync() }
        try FileSystem.rename(stagingName, to: name, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        if durable { try parent.sync() }
        try FileSystem.rename(asideName, to: stagingName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        statistics.notes.append("renameat2(RENAME_EXCHANGE) is not supported here: swapped in with two renames")
    }

    /// Appends an empty delta whose only content is a relink window.
    private func recordRelinkWindow(_ window: ClosedRange<Int64>, statistics: inout SaveStatistics) throws {
        guard let chain else { return }
        let header = ManifestFormat.DeltaHeader(
            sequence: chain.sequence + 1, baseChecksum: chain.base, previousChecksum: chain.last,
            rootHash: plan.new.rootHash, relinkWindow: window, entryCount: UInt64(newEntryCount))
        let bytes = ManifestFormat.encodeDelta(header: header, upserts: [], removals: [])
        let path = PackageLayout.joined(
            PackageLayout.metadataDirectory(of: packagePath), PackageManifest.deltaFileName(chain.sequence + 1))
        try AtomicFile.write(bytes, to: path, durability: options.durability)
        statistics.metadataBytesWritten += Int64(bytes.count)
        self.chain = (chain.base, Self.trailingChecksum(bytes), chain.sequence + 1)
    }

    /// The checksum a manifest file ends with.
    static func trailingChecksum(_ bytes: [UInt8]) -> ContentHash {
        bytes.withUnsafeBytes { ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: $0[($0.count - 16)...])) }
    }

    // MARK: Shared pieces

    func planProgress(linking: Bool) {
        var files = 0
        var bytes: Int64 = 0
        let unchangedCount = plan.unchangedOld.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        for index in plan.creations where plan.new.entries[index].kind != .directory {
            files += 1
            bytes += plan.new.entries[index].kind == .regular ? plan.new.entries[index].size : 0
        }
        if linking { files += unchangedCount }
        progress.plan(files: files, bytes: bytes)
    }

    /// Writes new entry `index`'s bytes as `name` in `directory`.
    func writeFile(_ index: Int, named name: String, in directory: Int32) throws -> EntryWriter.Written
    {
        let entry = plan.new.entries[index]
        guard let origin = plan.origins[index] else {
            throw SaveRefusal("no content for '\(entry.path)'")
        }
        return try writer.writeFile(
            origin, named: name, in: directory, displayPath: PackageLayout.joined(packagePath, entry.path),
            permissions: entry.permissions, modificationTime: entry.modificationTime,
            expected: (entry.hash, entry.size))
    }

    /// Writes a metadata file (manifest, delta) and fsyncs it when durability asks.
    private func writeMetadata(_ bytes: [UInt8], named name: String, in directory: Int32) throws {
        let file = try FileDescriptor.open(
            name, relativeTo: directory, access: .writeOnly, options: [.create, .exclusive, .noFollow])
        try bytes.withUnsafeBytes { try file.write($0) }
        if durable { try file.sync() }
        try file.close()
    }

    /// The new tree as the manifest records it — package-side stat data, source stamps —
    /// and the records a delta needs: every created, re-permissioned or refreshed entry
    /// and every ancestor directory of a change; removals as subtree roots.
    private func manifestRecord() -> (entries: [SnapshotEntry], upserts: [SnapshotEntry], removals: [String]) {
        var entries = plan.new.entries
        for index in entries.indices {
            let kind = entries[index].kind
            if let status = writtenStatus[index] {
                entries[index].adoptPackageStatus(status)
            } else if let oldIndex = plan.unchangedOld[index] {
                let old = plan.old.entries[oldIndex]
                entries[index].adoptPackageStatus(
                    FileStatus(
                        kind: kind, permissions: entries[index].permissions, size: old.size,
                        modificationTime: old.modificationTime, changeTime: old.changeTime, inode: old.inode,
                        device: old.device))
            } else if kind == .directory, let oldIndex = plan.old.index(of: entries[index].path),
                plan.old.entries[oldIndex].kind == .directory
            {
                let old = plan.old.entries[oldIndex]
                entries[index].modificationTime = old.modificationTime
                entries[index].changeTime = old.changeTime
                entries[index].inode = old.inode
                entries[index].device = old.device
            }
            if kind != .regular { entries[index].source = nil }
        }
        var changed = Set(plan.creations)
        changed.formUnion(plan.permissionChanges)
        changed.formUnion(plan.refreshes)
        var ancestors = Set<String>()
        func addAncestors(of path: String) {
            var current = SaveJournal.parent(of: path)
            while !current.isEmpty, ancestors.insert(current).inserted {
                current = SaveJournal.parent(of: current)
            }
        }
        for index in changed { addAncestors(of: entries[index].path) }
        for index in plan.removals { addAncestors(of: plan.old.entries[index].path) }
        var upserts = changed.sorted().map { entries[$0] }
        for path in ancestors {
            if let index = plan.new.index(of: path) { upserts.append(entries[index]) }
        }
        return (entries, upserts, plan.removals.map { plan.old.entries[$0].path })
    }
}

extension SnapshotEntry {
    /// Takes the package-side stat fields (the manifest's stat cache) from `status`.
    mutating func adoptPackageStatus(_ status: FileStatus) {
        modificationTime = status.modificationTime
        changeTime = status.changeTime
        inode = status.inode
        device = status.device
    }
}
