import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// The sync record a package carries (`.pkgtool/sync`): committed with a pull's save, kept by
/// every other save, read as hostile input, replaced only while the package holds what it says.
@Suite("Sync record file")
struct SyncRecordFileTests {
    static let record = Array("pkgtool-sync record one\n".utf8)

    /// A package saved from a small source with `record` committed.
    static func package(_ home: TemporaryDirectory, strategy: SaveStrategy = .journaled) throws -> (source: String, package: String) {
        let source = home.url("src")
        try Files.makeDirectory(source + "/pages")
        try Files.write(source + "/pages/1.txt", "one")
        let package = home.url("doc.pkg")
        var options = SaveOptions(strategy: strategy, durability: .none, workers: 1)
        options.syncRecord = record
        try PackageSaver.save(DirectorySource(source), to: package, options: options)
        return (source, package)
    }

    @Test("a save without a record keeps the package's, whatever the strategy", arguments: SaveMode.all)
    func ordinarySaveKeepsRecord(_ mode: SaveMode) throws {
        let home = try TemporaryDirectory("sync-keep")
        let (source, package) = try Self.package(home)
        #expect(SyncRecordFile.read(packagePath: package) == .bytes(Self.record))
        for round in 0..<3 {
            try Files.write(source + "/pages/1.txt", "edited \(round)")
            let options = SaveOptions(strategy: mode.strategy, durability: .none, workers: 1, keepsPrevious: mode.keepsPrevious)
            try PackageSaver.save(DirectorySource(source), to: package, options: options)
            #expect(SyncRecordFile.read(packagePath: package) == .bytes(Self.record), "\(mode), round \(round)")
        }
    }

    @Test("a save of an unchanged tree still commits the record it is given")
    func unchangedSaveCommitsRecord() throws {
        let home = try TemporaryDirectory("sync-unchanged")
        let (source, package) = try Self.package(home)
        for strategy in SaveStrategy.allCases {
            var options = SaveOptions(strategy: strategy, durability: .none, workers: 1)
            let record = Array("record for \(strategy)\n".utf8)
            options.syncRecord = record
            try PackageSaver.save(DirectorySource(source), to: package, options: options)
            #expect(SyncRecordFile.read(packagePath: package) == .bytes(record), "\(strategy)")
        }
    }

    @Test("replace writes only while the package hashes to the root given")
    func replaceChecksRoot() throws {
        let home = try TemporaryDirectory("sync-replace")
        let (_, package) = try Self.package(home)
        let root = try Trees.contentHash(package)
        let other = Array("record two\n".utf8)
        #expect(try SyncRecordFile.replace(with: other, packagePath: package, ifRootHash: ContentHash(high: 1, low: 2), workers: 1, durability: .none) == false)
        #expect(SyncRecordFile.read(packagePath: package) == .bytes(Self.record))
        #expect(try SyncRecordFile.replace(with: other, packagePath: package, ifRootHash: root, workers: 1, durability: .none))
        #expect(SyncRecordFile.read(packagePath: package) == .bytes(other))
        // A file edited behind pkgtool's back counts: the package no longer holds that root.
        try Files.write(package + "/pages/1.txt", "edited")
        #expect(try SyncRecordFile.replace(with: Self.record, packagePath: package, ifRootHash: root, workers: 1, durability: .none) == false)
        #expect(SyncRecordFile.read(packagePath: package) == .bytes(other))
    }

    @Test("a record that is a link, a FIFO, a folder or too large is unusable, never followed or waited on")
    func hostileRecords() throws {
        let home = try TemporaryDirectory("sync-hostile")
        let (_, package) = try Self.package(home)
        let path = package + "/.pkgtool/sync"
        let outside = home.url("outside")
        try Files.write(outside, "pkgtool-sync outside\n")

        try FileSystem.remove(path)
        #expect(SyncRecordFile.read(packagePath: package) == .absent)
        try Files.symlink(path, to: outside)
        guard case .unusable = SyncRecordFile.read(packagePath: package) else {
            Issue.record("a link was read")
            return
        }
        try FileSystem.remove(path)
        #expect(mkfifo(path, 0o644) == 0)
        guard case .unusable = SyncRecordFile.read(packagePath: package) else {
            Issue.record("a FIFO was read")
            return
        }
        try FileSystem.remove(path)
        try Files.write(path, [UInt8](repeating: 0x41, count: SyncRecordFile.limit + 1))
        guard case .unusable = SyncRecordFile.read(packagePath: package) else {
            Issue.record("an oversized record was read")
            return
        }
        // `.pkgtool` itself a link leading out: never followed, never written through.
        let elsewhere = home.url("elsewhere")
        try Files.makeDirectory(elsewhere)
        try Files.write(elsewhere + "/sync", Self.record)
        try FileSystem.removeTree(package + "/.pkgtool")
        try Files.symlink(package + "/.pkgtool", to: elsewhere)
        if case .bytes = SyncRecordFile.read(packagePath: package) { Issue.record("read through a linked .pkgtool") }
        #expect(try Files.read(elsewhere + "/sync") == Self.record)
    }

    @Test("a journal renaming a temporary into .pkgtool/sync is valid; removing it or writing elsewhere in .pkgtool is not")
    func journalValidation() {
        #expect(SaveJournal.validate(.rename(temporary: "n1", path: ".pkgtool/sync")) == nil)
        #expect(SaveJournal.validate(.rename(temporary: "n1", path: ".pkgtool/sync2")) != nil)
        #expect(SaveJournal.validate(.remove(path: ".pkgtool/sync", kind: .regular)) != nil)
    }

    @Test("recovery sets aside a sync record of the wrong type without asking for a check of the package")
    func recoverySetsAsideFolder() throws {
        let home = try TemporaryDirectory("sync-recover")
        let (_, package) = try Self.package(home)
        try FileSystem.remove(package + "/.pkgtool/sync")
        try Files.makeDirectory(package + "/.pkgtool/sync")
        let lock = try PackageLock.acquire(for: package, exclusive: true)
        let report = try PackageRecovery.recover(packagePath: package)
        lock.release()
        #expect(report.warnings.count == 1)
        #expect(SyncRecordFile.read(packagePath: package) == .absent)
        #expect(try FileSystem.statusIfExists(package + "/.pkgtool/check") == nil)
    }
}

/// `SaveOptions.requiredCurrentRoot`: a pull's save replaces only the tree it checked.
@Suite("Save of a required current root")
struct RequiredCurrentRootTests {
    @Test("a package that no longer holds the root required is not saved over, whatever the strategy", arguments: SaveMode.all)
    func refusedWhenChanged(_ mode: SaveMode) throws {
        let home = try TemporaryDirectory("required-root")
        let (source, package) = try SyncRecordFileTests.package(home)
        let checked = try Trees.contentHash(package)
        try Files.write(source + "/pages/1.txt", "the version pulled")
        // Saved meanwhile: what the caller checked is gone.
        let edited = home.url("edited-src")
        try Files.makeDirectory(edited + "/pages")
        try Files.write(edited + "/pages/1.txt", "edited meanwhile")
        try PackageSaver.save(DirectorySource(edited), to: package, options: SaveOptions(durability: .none, workers: 1))
        let meanwhile = try Trees.contentHash(package)
        var options = SaveOptions(strategy: mode.strategy, durability: .none, workers: 1, keepsPrevious: mode.keepsPrevious)
        options.requiredCurrentRoot = checked
        options.syncRecord = Array("record of the version pulled\n".utf8)
        #expect {
            try PackageSaver.save(DirectorySource(source), to: package, options: options)
        } throws: { error in (error as? SaveRefusal)?.isTransient == true }
        #expect(try Trees.contentHash(package) == meanwhile)
        #expect(SyncRecordFile.read(packagePath: package) == .bytes(SyncRecordFileTests.record))
        // With the root it holds, the save goes through.
        options.requiredCurrentRoot = meanwhile
        try PackageSaver.save(DirectorySource(source), to: package, options: options)
        #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)))
    }
}
