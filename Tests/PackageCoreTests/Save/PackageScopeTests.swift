import PackageTestSupport
import Testing
@testable import PackageCore

/// The one way into a package (`PackageScope`): nesting without waiting for itself, one
/// scope per directory (not per name), recovery on the way in, and no upgrade of a read.
@Suite("Package scope")
struct PackageScopeTests {
    /// A package saved (journaled) from a source folder with one page.
    static func package(_ home: TemporaryDirectory, name: String = "doc.pkg") throws -> (source: String, package: String) {
        let source = home.url("src-" + name)
        try Files.makeDirectory(source + "/pages")
        try Files.write(source + "/pages/1.txt", "one")
        let package = home.url(name)
        try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none, workers: 1))
        return (source, package)
    }

    static func text(_ path: String) throws -> String { String(decoding: try Files.read(path), as: UTF8.self) }

    @Test("a scope nested in one for the same package, under any spelling, does not wait for itself")
    func nestedSamePackage() throws {
        let home = try TemporaryDirectory("scope-nest")
        let (source, package) = try Self.package(home)
        try Files.write(source + "/pages/1.txt", "two")
        let outcome = try PackageScope.withPackage(at: package, access: .exclusive) { outer in
            #expect(outer.access == .exclusive)
            let read = try PackageScope.withPackage(at: home.path + "/./doc.pkg/", access: .shared) { inner in
                try inner.readManifest().manifest?.snapshot.rootHash
            }
            #expect(read == (try Trees.contentHash(package)))
            // The save engine inside the scope (a coordinated save's writer) neither waits.
            return try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none, workers: 1))
        }
        #expect(outcome.statistics.filesWritten == 1)
        #expect(try Self.text(package + "/pages/1.txt") == "two")
    }

    @Test("the async scope nests too, and its lock is waited for off the cooperative pool")
    func nestedAsync() async throws {
        let home = try TemporaryDirectory("scope-async")
        let (_, package) = try Self.package(home)
        let names = try await PackageScope.withPackage(at: package, access: .exclusive) { _ in
            try await PackageScope.withPackage(at: package, access: .shared) { inner async throws in try Trees.names(inner.path) }
        }
        #expect(names == [".pkgtool", "pages"])
    }

    @Test("twin names that only look alike (é, e + combining accent) are two packages, two scopes")
    func twinNamesAreTwoScopes() throws {
        let home = try TemporaryDirectory("scope-twins")
        let (_, composed) = try Self.package(home, name: "caf\u{E9}.pkg")
        let (_, decomposed) = try Self.package(home, name: "cafe\u{301}.pkg")
        try #require(try Trees.names(home.path).count == 4, "the file system folds the two names")  // two packages, two sources
        // Inside a read of one, a write of the other is no upgrade: it is another package.
        let wrote = try PackageScope.withPackage(at: composed, access: .shared) { _ in
            try PackageScope.withPackage(at: decomposed, access: .exclusive) { inner in inner.access }
        }
        #expect(wrote == .exclusive)
        // Writing both, this task holds two locks, one per directory.
        let held = try PackageScope.withPackage(at: composed, access: .exclusive) { _ in
            try PackageScope.withPackage(at: decomposed, access: .exclusive) { _ in HeldLocks.held.count }
        }
        #expect(held == 2)
        #expect(HeldLocks.held.isEmpty)
    }

    @Test("a shared scope asked for an exclusive one inside itself is refused, not deadlocked")
    func upgradeRefused() throws {
        let home = try TemporaryDirectory("scope-upgrade")
        let (source, package) = try Self.package(home)
        var ran = false
        let error = #expect(throws: SaveRefusal.self) {
            try PackageScope.withPackage(at: package, access: .shared) { _ in
                try PackageScope.withPackage(at: package, access: .exclusive) { _ in ran = true }
            }
        }
        #expect(!ran)
        guard case .lockedForReading = error?.reason else {
            Issue.record("refused for another reason: \(String(describing: error))")
            return
        }
        #expect(error?.description.contains("holds its lock for reading") == true)
        // A save inside a read of the same package is the same refusal.
        #expect(throws: SaveRefusal.self) {
            try PackageScope.withPackage(at: package, access: .shared) { _ in
                try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none, workers: 1))
            }
        }
    }

    @Test("a reader's scope recovers a save interrupted after its journal's commit")
    func readerRecovers() throws {
        let home = try TemporaryDirectory("scope-recover")
        let (source, package) = try Self.package(home)
        try Files.write(source + "/pages/1.txt", "two, longer")
        try Files.write(source + "/pages/2.txt", "new")
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 1)
        // The first crash point after which the committed journal is on disk.
        var committed = false
        for limit in 1..<200 where !committed {
            _ = try? IOFaultInjection.withInjector(CrashAfter(limit)) {
                try PackageSaver.save(DirectorySource(source), to: package, options: options)
            }
            committed = try FileSystem.statusIfExists(package + "/.pkgtool/journal") != nil
        }
        try #require(committed, "no crash point left a committed journal")
        var warnings: [String] = []
        let opened = try PackageScope.withPackage(at: package, access: .shared, warn: { warnings.append($0) }) { package in
            (rolledForward: package.recovery.rolledForward, problem: package.problem.map { "\($0)" })
        }
        #expect(opened.rolledForward)
        #expect(opened.problem == nil)
        #expect(warnings.isEmpty)
        #expect(try Self.text(package + "/pages/1.txt") == "two, longer")
        #expect(try Self.text(package + "/pages/2.txt") == "new")
        #expect(!(try PackageRecovery.needsRecovery(packagePath: package)))
    }

    @Test("a reader's scope on a folder that never saw a save writes nothing and takes no lock")
    func readingNeverSavedWritesNothing() throws {
        let home = try TemporaryDirectory("scope-plain")
        try Files.makeDirectory(home.url("plain"))
        try Files.write(home.url("plain/a.txt"), "a")
        let reading = try PackageScope.withPackage(at: home.url("plain"), access: .shared) { package in
            try package.readManifest()
        }
        #expect(reading.manifest == nil && !reading.describesPackage)
        #expect(try Trees.names(home.url("plain")) == ["a.txt"])
        #expect(try Trees.names(home.path) == ["plain"])
    }

    @Test("the manifest describes the package only for the folder it was written for")
    func manifestTrust() throws {
        let home = try TemporaryDirectory("scope-trust")
        let (_, package) = try Self.package(home)
        let own = try PackageScope.withPackage(at: package, access: .shared) { try $0.readManifest() }
        #expect(own.describesPackage && own.isForThisFolder)
        // A copy of the package carries a manifest written for another folder.
        try Files.makeDirectory(home.url("copy.pkg/.pkgtool"))
        try Files.makeDirectory(home.url("copy.pkg/pages"))
        try Files.write(home.url("copy.pkg/pages/1.txt"), "one")
        for name in try Trees.names(package + "/.pkgtool") where name == "index" {
            try Files.write(home.url("copy.pkg/.pkgtool/" + name), try Files.read(package + "/.pkgtool/" + name))
        }
        let copied = try PackageScope.withPackage(at: home.url("copy.pkg"), access: .shared) { try $0.readManifest() }
        #expect(copied.manifest != nil)
        #expect(!copied.describesPackage && !copied.isForThisFolder)
    }
}
