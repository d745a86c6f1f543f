import Foundation
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// A strategy, and for atomic, whether the previous version is kept and updated.
struct SaveMode: Sendable, CustomStringConvertible {
    var strategy: SaveStrategy
    var keepsPrevious = false
    /// Files made durable together (syncfs before the commit) rather than one by one.
    var syncsInBulk = false

    static let all: [SaveMode] = SaveStrategy.allCases.map { SaveMode(strategy: $0) } + [
        SaveMode(strategy: .atomic, keepsPrevious: true)
    ]
    /// Every mode with its files made durable together.
    static let allInBulk = all.map { mode in
        var bulk = mode
        bulk.syncsInBulk = true
        return bulk
    }
    var description: String {
        (keepsPrevious ? "\(strategy), keeping the previous version" : "\(strategy)") + (syncsInBulk ? ", synced in bulk" : "")
    }
}

/// The oracle of Specs/save.md: whatever step a save stops at, after recovery the package
/// is exactly the old or the new snapshot (by root hash), its manifest describes it, and
/// nothing is left beside it; after a save that returned, only the new one.
@Suite("Crash consistency", .serialized)
struct CrashConsistencyTests {
    struct Fixture {
        let directory: TemporaryDirectory
        let oldSource: String
        let newSource: String
        /// The version before the old one: what a kept previous version holds when the
        /// save under test starts.
        let olderSource: String
        let oldHash: ContentHash
        let newHash: ContentHash
        /// Where the packages under test are made (nil: the system's temporary directory).
        /// By default in memory (`TemporaryDirectory.memoryBacked`), with the sources: the
        /// sweeps' crashes are simulated, so the only fsync that matters is the one the
        /// injector counts, and thousands of set-up packages then wait for no disk.
        let packagesParent: String?
        /// Whether every save commits a sync record, as a pull does (`recordOf`): the older,
        /// old and new snapshots each with their own.
        let syncRecords: Bool
        /// Whether every save also commits a conflicts record, as a sync's merge does
        /// (`conflictsOf`), the bytes of the file versions it lists kept in
        /// `.pkgtool/conflicts` just before (inside the swept region for the new snapshot).
        let conflictsRecords: Bool
        /// The sources' scans for the first saves that set packages up, made once.
        let firstSaveScans = FirstSaveScans()
        /// The chunk lists of the large files the oracle meets, by content.
        let chunkLists = ChunkListsByContent()

        /// The sources: a small document whose media file has `mediaSize` bytes, changed by
        /// `changeDocument`. With `editsMedia`, 64 KiB inside the media file change too (and
        /// differ again in the older version): a file above the chunking threshold is then
        /// saved as its changed chunks (patched in place, or cloned where there are reflinks).
        init(
            mediaSize: Int = (2 << 20) + 100, editsMedia: Bool = false, packagesIn packagesParent: String? = nil,
            syncRecords: Bool = false, conflictsRecords: Bool = false
        ) throws {
            // Sources beside the packages: on their file system when given one (XFS for
            // reflinks), else both in memory when there is a tmpfs.
            let parent = packagesParent ?? TemporaryDirectory.memoryBacked
            directory = try TemporaryDirectory("crash", in: packagesParent == nil ? parent : nil)
            self.packagesParent = parent
            self.syncRecords = syncRecords || conflictsRecords
            self.conflictsRecords = conflictsRecords
            oldSource = directory.url("old-src")
            newSource = directory.url("new-src")
            try makeDocument(oldSource, pages: 6, mediaSize: mediaSize)
            try makeDocument(newSource, pages: 6, mediaSize: mediaSize)
            try changeDocument(newSource)
            olderSource = directory.url("older-src")
            try makeDocument(olderSource, pages: 7, mediaSize: mediaSize)
            try Files.write(olderSource + "/pages/3.txt", "page three, first draft")
            try Files.write(olderSource + "/notes", "notes were a file")
            if editsMedia {
                try ChunkSaveTests.overwrite(newSource + "/media/clip.bin", at: mediaSize / 2 + 12_345, length: 64 << 10, seed: 77)
                try ChunkSaveTests.overwrite(olderSource + "/media/clip.bin", at: mediaSize / 3, length: 64 << 10, seed: 78)
            }
            oldHash = try Trees.contentHash(oldSource)
            newHash = try Trees.contentHash(newSource)
            for name in ["A", "B", "C"] { try Files.write(directory.url("conflict-\(name)"), Self.conflictBytes(name)) }
        }

        static func conflictBytes(_ name: String) -> [UInt8] { Array("the other side's version \(name)\n".utf8) }

        /// The conflicts record committed with snapshot `name` (nil when the fixture has
        /// none): the older lists A, the old A and B and a deletion, the new B and C and a
        /// link (A settled: its bytes become unlisted).
        func conflictsOf(_ name: String) -> ConflictList? {
            guard conflictsRecords else { return nil }
            let version = String(repeating: "5e", count: 32)
            func file(_ content: String, at path: RelativePath) -> ConflictVersion {
                let bytes = Self.conflictBytes(content)
                return ConflictVersion(
                    path: path, side: .other, kind: .file, permissions: 0o644, size: Int64(bytes.count),
                    hash: ContentHash.of(bytes), linkTarget: nil, remoteVersion: version, time: 1_000)
            }
            let a = file("A", at: "pages/1.txt")
            let b = file("B", at: "media/clip.bin")
            let c = file("C", at: "pages/3.txt")
            let deleted = ConflictVersion(
                path: "notes", side: .local, kind: .deleted, permissions: 0, size: 0, hash: ContentHash(high: 0, low: 0),
                linkTarget: nil, remoteVersion: version, time: 2_000)
            let link = ConflictVersion(
                path: "pages/link", side: .other, kind: .link, permissions: 0o777, size: 1, hash: ContentHash.of(Array("x".utf8)),
                linkTarget: "x", remoteVersion: version, time: 3_000)
            switch name {
            case "older": return ConflictList([a])
            case "old": return ConflictList([a, b, deleted])
            default: return ConflictList([b, c, link])
            }
        }

        /// Keeps the bytes of the file versions snapshot `name`'s conflicts record lists, as
        /// a merge does before the save that lists them.
        func keepConflictContents(_ name: String, in package: String, durability: Durability = .none) throws {
            for version in conflictsOf(name)?.versions ?? [] where version.kind == .file {
                let content = ["A", "B", "C"].first { ContentHash.of(Self.conflictBytes($0)) == version.hash }!
                try ConflictStore.keepContent(
                    from: directory.url("conflict-\(content)"), hash: version.hash, size: version.size, packagePath: package,
                    durability: durability)
            }
        }

        /// The save under test: the new snapshot (its conflict versions' bytes kept first,
        /// when the fixture has conflicts records), durable; a follow-up save after a sweep's
        /// fault (not swept itself) passes `.none`.
        func saveNew(_ package: String, _ mode: SaveMode, durability: Durability = .full) throws -> SaveStatistics {
            try keepConflictContents("new", in: package, durability: durability)
            var options = options(mode)
            options.durability = durability
            return try PackageSaver.save(DirectorySource(newSource), to: package, options: options).statistics
        }

        /// A package holding the old snapshot, saved without faults, in a fresh directory;
        /// when the mode keeps the previous version, that is the older snapshot.
        func freshPackage(_ label: String, mode: SaveMode) throws -> (TemporaryDirectory, String) {
            let home = try TemporaryDirectory(label, in: packagesParent)
            let package = home.url("doc.pkg")
            if mode.keepsPrevious {
                _ = try PackageSaver.save(firstSaveScans.source(olderSource), to: package, options: options(mode, snapshot: "older"))
                    .statistics
                try keepConflictContents("older", in: package)
            }
            if try FileSystem.statusIfExists(package) != nil { try keepConflictContents("old", in: package) }
            _ = try PackageSaver.save(firstSaveScans.source(oldSource), to: package, options: options(mode, snapshot: "old"))
                .statistics
            if conflictsRecords && !mode.keepsPrevious {
                // A package's first save cannot have kept contents before it: keep them now.
                try keepConflictContents("old", in: package)
            }
            return (home, package)
        }

        func freshPackage(_ label: String, strategy: SaveStrategy) throws -> (TemporaryDirectory, String) {
            try freshPackage(label, mode: SaveMode(strategy: strategy))
        }

        /// The options of a save of the new snapshot (with its records, when the fixture has records).
        func options(_ mode: SaveMode) -> SaveOptions { options(mode, snapshot: "new") }

        /// The options of a save of snapshot `name`, with its records when the fixture has them.
        func options(_ mode: SaveMode, snapshot name: String) -> SaveOptions {
            // Only the save under test syncs: the saves that set its package up are not swept,
            // and a simulated crash (the injector's) loses nothing unsynced — fsyncs there
            // only cost time.
            let durability: Durability = name == "new" ? .full : .none
            var options = SaveOptions(strategy: mode.strategy, durability: durability, workers: 1, keepsPrevious: mode.keepsPrevious)
            options.syncRecord = recordOf(name)
            options.conflictsRecord = conflictsOf(name)?.encoded()
            if mode.syncsInBulk { options.bulkSyncThreshold = 1 }
            return options
        }

        /// The sync record committed with snapshot `name` (nil when the fixture has none).
        func recordOf(_ name: String) -> [UInt8]? {
            syncRecords ? Array("pkgtool-sync test record of the \(name) snapshot\n".utf8) : nil
        }

        func options(_ strategy: SaveStrategy) -> SaveOptions { options(SaveMode(strategy: strategy)) }
    }

    /// Checks the oracle after recovery; returns a description of the violation, if any.
    static func violation(_ fixture: Fixture, home: TemporaryDirectory, package: String, mustBeNew: Bool) throws -> String? {
        let hash = try Trees.contentHash(package)
        if mustBeNew ? hash != fixture.newHash : (hash != fixture.oldHash && hash != fixture.newHash) {
            return "package is neither the old nor the new snapshot"
        }
        if fixture.syncRecords {
            // The record committed with the tree the package holds: a pull's record never
            // names a version the package does not hold.
            let expected = try #require(fixture.recordOf(hash == fixture.newHash ? "new" : "old"))
            let found = SyncRecordFile.read(packagePath: package)
            if found != .bytes(expected) { return "the sync record does not match the tree (\(found))" }
        }
        if let problem = try conflictsViolation(fixture, package: package, hash: hash) { return problem }
        if let manifest = try PackageManifest.load(packagePath: package) {
            let rescan = try ChunkListsByContent.scanWithoutLists(package)
            if manifest.snapshot.rootHash != hash || !TreeDiff.changes(from: manifest.snapshot, to: rescan.snapshot).isEmpty {
                return "manifest does not describe the package"
            }
            // A recorded chunk list is the file's own: the next save patches from it.
            for entry in rescan.snapshot.entries
            where entry.kind == .regular && entry.size >= ChunkingParameters.standard.fileThreshold {
                let own = try fixture.chunkLists.list(of: package + "/" + entry.path, hash: entry.hash)
                if manifest.chunks(for: entry.path) != own { return "the manifest's chunk list of \(entry.path) is not the file's" }
            }
        }
        var beside = try Trees.names(home.path)
        // A staging sibling recovery left because its flock looked held: while another test
        // of this process spawns a program, the child shares every open file description
        // until it execs (posix_spawn's vfork window), the crashed save's included. A real
        // crash has no such holder: once the child's exec has let the flock go (waited for
        // on the lock itself), sweep again.
        let staging = beside.filter { SiblingNames(forName: "doc.pkg").role(of: $0) == .staging }
        if !staging.isEmpty {
            for name in staging where !Self.waitForFlock(home.url(name), seconds: 10) {
                return "the staging sibling \(name) stays locked"
            }
            try StagedReplacement.sweepLeftovers(beside: package)
            beside = try Trees.names(home.path)
        }
        let previous = home.url(SiblingNames(forName: "doc.pkg").previous)
        if let kept = beside.firstIndex(of: SiblingNames(forName: "doc.pkg").previous) {
            // A kept previous version must be exactly what its manifest says: the next
            // save builds on it.
            beside.remove(at: kept)
            guard let kept = try PackageManifest.load(packagePath: previous) else { return "the kept previous version has no manifest" }
            let rescan = try ChunkListsByContent.scanWithoutLists(previous)
            if !TreeDiff.changes(from: kept.snapshot, to: rescan.snapshot).isEmpty {
                return "the kept previous version's manifest does not describe it"
            }
        }
        if beside != ["doc.pkg"] { return "leftovers beside the package: \(beside)" }
        if try PackageRecovery.needsRecovery(packagePath: package) { return "recovery left work undone" }
        return nil
    }

    /// With conflicts records: the record committed with the tree the package holds, the
    /// bytes of every file version it lists present and whole, and once swept
    /// (`ConflictStore.sweep`, what the next sync does), nothing else in the folder.
    static func conflictsViolation(_ fixture: Fixture, package: String, hash: ContentHash) throws -> String? {
        guard let expected = fixture.conflictsOf(hash == fixture.newHash ? "new" : "old") else { return nil }
        guard case .list(let list) = ConflictStore.read(packagePath: package), list == expected else {
            return "the conflicts record does not match the tree (\(ConflictStore.read(packagePath: package)))"
        }
        var names = [PackageLayout.conflictsRecordFileName]
        for version in list.versions where version.kind == .file {
            let path = ConflictStore.contentPath(package, hash: version.hash, size: version.size)
            guard let bytes = try? Files.read(path), ContentHash.of(bytes) == version.hash else {
                return "the listed conflict version of \(version.path.string) lost its bytes"
            }
            names.append(ConflictStore.contentName(version.hash, size: version.size))
        }
        try ConflictStore.sweep(packagePath: package, durability: .full)
        let left = try Trees.names(package + "/.pkgtool/conflicts")
        if left.sorted() != names.sorted() { return "the conflicts folder holds \(left) after a sweep" }
        return nil
    }

    static func recover(_ package: String) throws {
        let lock = try PackageLock.acquire(for: package, exclusive: true)
        defer { lock.release() }
        try PackageRecovery.recover(packagePath: package)
    }

    /// What a sweep did: the statistics of the uninterrupted save it swept, the faults it
    /// injected, and the oracle's complaints.
    struct Sweep {
        var statistics: SaveStatistics
        /// Crash points in the save, or faults injected.
        var points = 0
        /// Second crashes during recovery.
        var recoveryCrashes = 0
        var violations: [String] = []
    }

    /// Crashes a save of `fixture` in `mode` at each of its I/O steps that change the disk
    /// (and, for some of those points, crashes the recovery at each of its own steps), and
    /// checks the oracle after every one: old or new, a manifest that describes it, nothing
    /// beside it; a save that returned, only new; the next save completes the job.
    static func sweepCrashes(_ fixture: Fixture, mode: SaveMode) throws -> Sweep {
        let strategy = mode.strategy
        // Count the steps of one uninterrupted save.
        let (countingHome, countingPackage) = try fixture.freshPackage("count", mode: mode)
        let counter = CrashAfter(.max)
        var sweep = Sweep(
            statistics: try IOFaultInjection.withInjector(counter) {
                try fixture.saveNew(countingPackage, mode)
            })
        if let problem = try Self.violation(fixture, home: countingHome, package: countingPackage, mustBeNew: true) {
            sweep.violations.append("the uninterrupted save: \(problem)")
        }
        let steps = counter.mutations
        sweep.points = steps
        for limit in 0..<steps {
            let (home, package) = try fixture.freshPackage("crash-\(limit)", mode: mode)
            let crash = CrashAfter(limit)
            let saved = (try? IOFaultInjection.withInjector(crash) {
                try fixture.saveNew(package, mode)
            }) != nil
            if !crash.crashed { sweep.violations.append("step \(limit): the crash point was never reached") }
            if saved {
                // Past the commit point, a save reports success even if cleaning up failed:
                // the package must then be the new snapshot.
                try Self.recover(package)
                if let problem = try Self.violation(fixture, home: home, package: package, mustBeNew: true) {
                    sweep.violations.append("step \(limit), after a reported success: \(problem)")
                }
                continue
            }
            if strategy != .journaled {
                // Readers that know nothing of pkgtool see the old or the new package even
                // before recovery.
                let hash = try Trees.contentHash(package)
                if hash != fixture.oldHash && hash != fixture.newHash {
                    sweep.violations.append("step \(limit): a reader sees a mix before recovery")
                }
            }
            // A second crash during recovery, at every step of it, must still end well
            // (for every third crash point of the journaled save, every seventh otherwise).
            if limit % (strategy == .journaled ? 3 : 7) == 0 {
                // Measure recovery's steps on a twin of this state, made by replaying the
                // crash (a copy would not be the directory its journal was written for).
                let (twinHome, twinPackage) = try fixture.freshPackage("twin-\(limit)", mode: mode)
                _ = try? IOFaultInjection.withInjector(CrashAfter(limit)) {
                    try fixture.saveNew(twinPackage, mode)
                }
                let recoveryCounter = CrashAfter(.max)
                try IOFaultInjection.withInjector(recoveryCounter) { try Self.recover(twinPackage) }
                withExtendedLifetime(twinHome) {}
                for recoveryLimit in 0..<recoveryCounter.mutations {
                    let (againHome, againPackage) = try fixture.freshPackage("again-\(limit)-\(recoveryLimit)", mode: mode)
                    _ = try? IOFaultInjection.withInjector(CrashAfter(limit)) {
                        try fixture.saveNew(againPackage, mode)
                    }
                    _ = try? IOFaultInjection.withInjector(CrashAfter(recoveryLimit)) { try Self.recover(againPackage) }
                    try Self.recover(againPackage)
                    sweep.recoveryCrashes += 1
                    if let problem = try Self.violation(fixture, home: againHome, package: againPackage, mustBeNew: false) {
                        sweep.violations.append("step \(limit), recovery step \(recoveryLimit): \(problem)")
                    }
                }
            }
            try Self.recover(package)
            if let problem = try Self.violation(fixture, home: home, package: package, mustBeNew: false) {
                sweep.violations.append("step \(limit): \(problem)")
            }
            // The next save completes the job.
            _ = try fixture.saveNew(package, mode, durability: .none)
            if let problem = try Self.violation(fixture, home: home, package: package, mustBeNew: true) {
                sweep.violations.append("step \(limit), next save: \(problem)")
            }
        }
        return sweep
    }

    /// Fails each I/O step of a save of `fixture` in `mode` that changes the disk, with EIO
    /// once and with ENOSPC from then on, and checks that the save reports the error it met
    /// (success only for cleanup after the commit, with the package then new), that the
    /// package is left old (or, journaled, recoverable), and that the next save ends sound.
    static func sweepErrors(_ fixture: Fixture, mode: SaveMode) throws -> Sweep {
        let strategy = mode.strategy
        let (countingHome, countingPackage) = try fixture.freshPackage("err-count", mode: mode)
        defer { withExtendedLifetime(countingHome) {} }
        let counter = CrashAfter(.max)
        var sweep = Sweep(
            statistics: try IOFaultInjection.withInjector(counter) {
                try fixture.saveNew(countingPackage, mode)
            })
        for index in 1...counter.mutations {
            for (error, persistent) in [(Errno.ioError, false), (Errno.noSpace, true)] {
                let (home, package) = try fixture.freshPackage("err-\(index)", mode: mode)
                let fault = FailNth(nil, index: index, error: error, persistent: persistent)
                var thrown: (any Error)?
                do {
                    try IOFaultInjection.withInjector(fault) {
                        _ = try fixture.saveNew(package, mode)
                    }
                } catch {
                    thrown = error
                }
                sweep.points += 1
                // Only work after the commit may fail without failing the save — removing the
                // previous tree, and recording a relink window in a small extra delta file —
                // and then the package must already be the new one.
                let cleanup: Set<IOStep> = [.remove, .removeDirectory]
                let bestEffort = cleanup.contains(fault.firedStep ?? .write)
                    || (fault.firedPath ?? "").contains(".pkgtool-tmp-") || (fault.firedPath ?? "").hasSuffix(".pkgtool")
                    || (fault.firedPath ?? "").contains("/.pkgtool/delta.")
                    || (fault.firedStep == .create && fault.firedPath == ".")  // AtomicFile's O_TMPFILE
                    || (fault.firedStep == .rename && (fault.firedPath ?? "").contains(".pkgtool-staging-"))  // keeping the previous
                    // A conflict version's bytes that cannot be linked into the staged tree
                    // are copied instead (ConflictStore.carry): the link's failure is no
                    // failure of the save.
                    || (fault.firedStep == .link && fixture.conflictsRecords
                        && ["old", "new"].flatMap { fixture.conflictsOf($0)?.versions ?? [] }.contains {
                            fault.firedPath == ConflictStore.contentName($0.hash, size: $0.size)
                        })
                if fault.didFire && thrown == nil {
                    if !bestEffort {
                        sweep.violations.append(
                            "step \(index) \(error.name): a failed \(String(describing: fault.firedStep)) of \(fault.firedPath ?? "?") reported success")
                    } else if try Trees.contentHash(package) != fixture.newHash {
                        sweep.violations.append("step \(index): success reported but the package is not the new one")
                    }
                }
                if let thrown, !(thrown is FileSystemError) && !(thrown is SaveRefusal) {
                    sweep.violations.append("step \(index): unexpected error type \(thrown)")
                }
                if let thrown = thrown as? FileSystemError, thrown.errno != error {
                    sweep.violations.append("step \(index): the error names \(String(describing: thrown.errno)), not \(error.name)")
                }
                // What the person sees right away: old, or (journaled, after commit) new once recovered.
                // A single failed step always leaves the previous package; when every later
                // step fails too, a failure right after the swap cannot be undone, and the
                // package is then the new one (still never a mix).
                let hash = try Trees.contentHash(package)
                if strategy != .journaled && thrown != nil && hash != fixture.oldHash
                    && (!persistent || hash != fixture.newHash)
                {
                    sweep.violations.append("step \(index) \(error.name): the previous package was not left intact")
                }
                if fixture.syncRecords {
                    try Self.recover(package)
                    let now = try Trees.contentHash(package)
                    let expected = fixture.recordOf(now == fixture.newHash ? "new" : "old")!
                    if SyncRecordFile.read(packagePath: package) != .bytes(expected) {
                        sweep.violations.append("step \(index) \(error.name): the sync record does not match the tree")
                    }
                    if let problem = try Self.conflictsViolation(fixture, package: package, hash: now) {
                        sweep.violations.append("step \(index) \(error.name): \(problem)")
                    }
                }
                _ = try fixture.saveNew(package, mode, durability: .none)
                if let problem = try Self.violation(fixture, home: home, package: package, mustBeNew: true) {
                    sweep.violations.append("step \(index) \(error.name), next save: \(problem)")
                }
            }
        }
        return sweep
    }

    @Test("a crash at every I/O step of a save, for each strategy", arguments: SaveMode.all)
    func crashAtEveryStep(_ mode: SaveMode) throws {
        let sweep = try Self.sweepCrashes(try Fixture(), mode: mode)
        #expect(sweep.points > 20)
        print(
            "crash consistency (\(mode)): \(sweep.points) crash points in the save, \(sweep.recoveryCrashes) during recovery, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("a crash at every I/O step of a save whose files are made durable together (syncfs)", arguments: SaveMode.allInBulk)
    func crashAtEveryStepInBulk(_ mode: SaveMode) throws {
        let sweep = try Self.sweepCrashes(try Fixture(syncRecords: true), mode: mode)
        #expect(sweep.points > 10)
        print(
            "crash consistency (\(mode)): \(sweep.points) crash points, \(sweep.recoveryCrashes) during recovery, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test(
        "an error at each step of a save whose files are made durable together (syncfs)",
        arguments: SaveMode.allInBulk.filter { !$0.keepsPrevious && $0.strategy != .atomic })
    func errorAtEveryStepInBulk(_ mode: SaveMode) throws {
        let sweep = try Self.sweepErrors(try Fixture(syncRecords: true), mode: mode)
        print("error injection (\(mode)): \(sweep.points) faults, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("a crash at every I/O step of a pull-style save: the sync record committed with the tree matches it",
          arguments: SaveMode.all)
    func crashAtEveryStepWithSyncRecord(_ mode: SaveMode) throws {
        let sweep = try Self.sweepCrashes(try Fixture(syncRecords: true), mode: mode)
        #expect(sweep.points > 20)
        print(
            "crash consistency with a sync record (\(mode)): \(sweep.points) crash points, \(sweep.recoveryCrashes) during recovery, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("a crash at every I/O step of a merge-style save: the conflicts record committed with the tree matches it, its bytes kept",
          arguments: SaveMode.all)
    func crashAtEveryStepWithConflictsRecord(_ mode: SaveMode) throws {
        let sweep = try Self.sweepCrashes(try Fixture(conflictsRecords: true), mode: mode)
        #expect(sweep.points > 20)
        print(
            "crash consistency with a conflicts record (\(mode)): \(sweep.points) crash points, \(sweep.recoveryCrashes) during recovery, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("an error at each step of a merge-style save leaves the conflicts record matching the tree", arguments: SaveMode.all)
    func errorAtEveryStepWithConflictsRecord(_ mode: SaveMode) throws {
        let sweep = try Self.sweepErrors(try Fixture(conflictsRecords: true), mode: mode)
        print("error injection with a conflicts record (\(mode)): \(sweep.points) faults, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("an error at each step of a pull-style save leaves the sync record matching the tree", arguments: SaveMode.all)
    func errorAtEveryStepWithSyncRecord(_ mode: SaveMode) throws {
        let sweep = try Self.sweepErrors(try Fixture(syncRecords: true), mode: mode)
        print("error injection with a sync record (\(mode)): \(sweep.points) faults, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("an error at each step (EIO, ENOSPC; once or from then on) leaves old or new, and the next save cleans up",
          arguments: SaveMode.all)
    func errorAtEveryStep(_ mode: SaveMode) throws {
        let sweep = try Self.sweepErrors(try Fixture(), mode: mode)
        print("error injection (\(mode)): \(sweep.points) faults, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("permission denied creating a file mid-save: one clear error, the old package intact")
    func permissionDenied() throws {
        let fixture = try Fixture()
        for strategy in SaveStrategy.allCases {
            let (home, package) = try fixture.freshPackage("eacces", strategy: strategy)
            #expect {
                try IOFaultInjection.withInjector(FailNth(.create, index: 2, error: .permissionDenied)) {
                    _ = try PackageSaver.save(DirectorySource(fixture.newSource), to: package, options: fixture.options(strategy)).statistics
                }
            } throws: { error in
                let text = String(describing: error)
                return text.hasPrefix("cannot create '\(package)/") && text.hasSuffix("Permission denied (EACCES from openat)")
            }
            #expect(try Trees.contentHash(package) == fixture.oldHash, "\(strategy)")
            _ = try PackageSaver.save(DirectorySource(fixture.newSource), to: package, options: fixture.options(strategy)).statistics
            #expect(try Self.violation(fixture, home: home, package: package, mustBeNew: true) == nil, "\(strategy)")
        }
    }

    @Test(
        "a real full disk (a small tmpfs): a clear ENOSPC, the old package intact, no litter after the next save",
        .enabled(if: Prerequisite.runs(Prerequisite.canMountTmpfs), "mounting a tmpfs needs root"))
    func realFullDisk() throws {
        let mountPoint = try TemporaryDirectory("tmpfs")
        try #require(
            getuid() == 0 && mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=6m") == 0,
            "cannot mount a tmpfs here (\(Errno(rawValue: errno)))")
        defer { umount2(mountPoint.path, 2) }
        let source = try TemporaryDirectory("tmpfs-src")
        try Files.makeDirectory(source.url("media"))
        try Files.writeRandom(source.url("media/a.bin"), size: 2 << 20, seed: 1)
        try Files.writeRandom(source.url("media/b.bin"), size: 2 << 20, seed: 2)
        let package = mountPoint.url("doc.pkg")
        _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: SaveOptions(strategy: .full, durability: .full)).statistics
        let before = try Trees.contentHash(package)
        try Files.writeRandom(source.url("media/c.bin"), size: 3 << 20, seed: 3)
        for strategy in SaveStrategy.allCases {
            #expect {
                _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: SaveOptions(strategy: strategy)).statistics
            } throws: { error in
                (error as? FileSystemError)?.errno == .noSpace
                    && String(describing: error).contains("No space left on device (ENOSPC")
            }
            #expect(try Trees.contentHash(package) == before, "\(strategy)")
        }
        try FileSystem.remove(source.url("media/c.bin"))
        _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: SaveOptions(strategy: .journaled)).statistics
        #expect(try Trees.names(mountPoint.path) == ["doc.pkg"])
        #expect(try Trees.names(package + "/.pkgtool/tmp").isEmpty)
    }
}

@Suite("Crash consistency of a FileWrapper save", .serialized)
struct EditedTreeCrashTests {
    /// A tree read from the old package, edited in memory like `changeDocument` edits a directory.
    static func editedTree(_ package: String) throws -> FileWrapper {
        let tree = try FileWrapper(url: URL(fileURLWithPath: package))
        let pages = try #require(tree.fileWrapper(forKey: "pages"))
        pages.removeFileWrapper(try #require(pages.fileWrapper(forKey: "3.txt")))
        pages.addRegularFile(withContents: Data("page three, rewritten".utf8), preferredFilename: "3.txt")
        pages.removeFileWrapper(try #require(pages.fileWrapper(forKey: "4.txt")))
        pages.addRegularFile(withContents: Data("a new page".utf8), preferredFilename: "new.txt")
        tree.removeFileWrapper(try #require(tree.fileWrapper(forKey: "attic")))
        tree.addRegularFile(withContents: Data("attic is a file now".utf8), preferredFilename: "attic")
        tree.addFileWrapper({
            let notes = FileWrapper(directoryWithFileWrappers: ["n.txt": FileWrapper(regularFileWithContents: Data("note".utf8))])
            notes.preferredFilename = "notes"
            return notes
        }())
        return tree
    }

    @Test("a crash at every step of an edited tree's save leaves old or new")
    func crashAtEveryStep() throws {
        let fixture = try CrashConsistencyTests.Fixture()
        let options = SaveOptions(strategy: .journaled, durability: .full, workers: 1)
        func freshPackage(_ label: String) throws -> (TemporaryDirectory, String) {
            let pair = try fixture.freshPackage(label, strategy: .journaled)
            try Trees.settleDirectories(pair.1)  // the folders just written, out of the racy granule
            return pair
        }
        let (countingHome, countingPackage) = try freshPackage("tree-count")
        let countingTree = try Self.editedTree(countingPackage)
        let newHash = try countingTree.contentHash
        let counter = CrashAfter(.max)
        let statistics = try IOFaultInjection.withInjector(counter) {
            try PackageSaver.save(FileWrapperSource(countingTree), to: countingPackage, options: options).statistics
        }
        #expect(statistics.filesWritten == 4)
        #expect(try Trees.contentHash(countingPackage) == newHash)
        _ = countingHome
        var violations: [String] = []
        for limit in 0..<counter.mutations {
            let (home, package) = try freshPackage("tree-crash-\(limit)")
            let tree = try Self.editedTree(package)
            let saved = (try? IOFaultInjection.withInjector(CrashAfter(limit)) {
                try PackageSaver.save(FileWrapperSource(tree), to: package, options: options)
            }) != nil
            try CrashConsistencyTests.recover(package)
            let hash = try Trees.contentHash(package)
            if saved ? hash != newHash : (hash != fixture.oldHash && hash != newHash) {
                violations.append("step \(limit): neither old nor new")
            }
            if let manifest = try PackageManifest.load(packagePath: package), manifest.snapshot.rootHash != hash {
                violations.append("step \(limit): the manifest does not describe the package")
            }
            if try Trees.names(home.path) != ["doc.pkg"] { violations.append("step \(limit): leftovers") }
            // Saving the same tree again (as a document would retry) completes the job.
            _ = try PackageSaver.save(FileWrapperSource(tree), to: package, options: options)
            if try Trees.contentHash(package) != newHash { violations.append("step \(limit): the retry did not save") }
        }
        print("crash consistency (edited tree): \(counter.mutations) crash points, \(violations.count) violations")
        #expect(violations.isEmpty, "\(violations.prefix(3))")
    }
}

extension CrashConsistencyTests {
    /// Waits until nobody holds a `flock` on `path` (the kernel wakes the waiter when the
    /// holder lets go), at most `seconds`; whether it was let go. A lock held past that
    /// leaves a thread waiting for it, in a test that has then failed.
    static func waitForFlock(_ path: String, seconds: Int) -> Bool {
        let free = HandOff()
        Thread.detachNewThread {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            guard descriptor >= 0 else { return free.give() }  // gone: nothing holds it
            _ = flock(descriptor, LOCK_EX)
            close(descriptor)
            free.give()
        }
        return free.wait(seconds: seconds)
    }
}
