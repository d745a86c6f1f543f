import Foundation
import PackageTestSupport
import Testing
@testable import PackageCore

/// A package whose manifest does not describe it (a copy, a package marked for a check)
/// is checked, and the check's tree stands in for the manifest's entries
/// (`CheckedPackage`): what the manifest knows carries over only where the content is
/// the recorded one.
@Suite("A package checked against its manifest")
struct CheckedPackageTests {
    /// A source of a few files and a package saved from it, then copied with `cp -a`.
    struct Scene {
        let home: TemporaryDirectory
        var source: String { home.url("src") }
        var package: String { home.url("pkg") }
        var copy: String { home.url("copy") }

        init(_ name: String) throws {
            home = try TemporaryDirectory(name)
            try Files.makeDirectory(home.url("src"))
            try Files.makeDirectory(home.url("src/pages"))
            for index in 0..<6 { try writeSource("pages/p\(index)", "page \(index)") }
            try writeSource("metadata.json", "{}")
            try Trees.settleDirectories(source)
            try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
            let copied = try runProgram("/bin/cp", ["-a", package, copy])
            try #require(copied.status == 0)
        }

        /// Writes a source file dated ten seconds back: its stamp is out of the racy window of
        /// the record a save writes next, so whether it is reread never depends on the clock.
        func writeSource(_ path: String, _ text: String) throws {
            try Files.write(home.url("src/" + path), text)
            try FileSystem.setModificationTime(home.url("src/" + path), SystemClock.realtimeNanoseconds - 10_000_000_000)
        }

        func save(_ destination: String, strategy: SaveStrategy = .journaled) throws -> SaveStatistics {
            try PackageSaver.save(
                DirectorySource(source), to: destination, options: SaveOptions(strategy: strategy, durability: .none)
            ).statistics
        }

        func text(_ path: String) throws -> String { String(decoding: try Files.read(path), as: UTF8.self) }
    }

    @Test("a copy saved from its unchanged source: checked once, nothing written, the source not reread", arguments: SaveStrategy.allCases)
    func copyOfUnchangedSource(strategy: SaveStrategy) throws {
        let scene = try Scene("checked-copy")
        let first = try scene.save(scene.copy, strategy: strategy)
        #expect(first.notes.contains { $0.contains("written for another folder") })
        // The copy's seven files hashed by the check; the source's stamps still vouch.
        #expect(first.filesHashed == 7)
        #expect(first.filesWritten == (strategy == .full ? 7 : 0), "the full strategy writes every file by design")
        let manifest = try #require(try PackageManifest.load(packagePath: scene.copy))
        #expect(manifest.packageIdentity == (try FileSystem.status(scene.copy).inode))
        #expect(manifest.entries.allSatisfy { $0.kind != .regular || $0.source != nil })
        let again = try scene.save(scene.copy, strategy: strategy)
        #expect(again.unchanged && again.filesHashed == 0 && again.notes.isEmpty)
    }

    @Test("a copy edited behind pkgtool's back gets the source's bytes back; its stamp is not carried to the edit")
    func editedCopyIsRestored() throws {
        let scene = try Scene("checked-edited-copy")
        try Files.write(scene.home.url("copy/pages/p2"), "edited in the copy")
        let statistics = try scene.save(scene.copy)
        #expect(statistics.filesWritten == 1)
        #expect(try scene.text(scene.home.url("copy/pages/p2")) == "page 2")
        // The source's file was read again: the stamp recorded for other bytes vouched for nothing.
        #expect(statistics.filesHashed == 8)
        let manifest = try #require(try PackageManifest.load(packagePath: scene.copy))
        let scan = try TreeScanner(excludedTopLevelNames: [PackageLayout.metadataDirectoryName]).scan(scene.copy)
        #expect(manifest.snapshot.rootHash == scan.snapshot.rootHash)
    }

    @Test("a copy whose source changed too: both edits are seen, the source's bytes win")
    func copyAndSourceEdited() throws {
        let scene = try Scene("checked-both-edited")
        try Files.write(scene.home.url("copy/pages/p1"), "copy's edit")
        try scene.writeSource("pages/p4", "source's edit")
        let statistics = try scene.save(scene.copy)
        #expect(statistics.filesWritten == 2)
        #expect(try scene.text(scene.home.url("copy/pages/p1")) == "page 1")
        #expect(try scene.text(scene.home.url("copy/pages/p4")) == "source's edit")
        let again = try scene.save(scene.copy)
        #expect(again.unchanged && again.filesHashed == 0)
    }

    @Test("a package that lost a file behind pkgtool's back, saved from a source without it: the manifest is rewritten")
    func removalBehindTheBackIsRecorded() throws {
        let scene = try Scene("checked-removal")
        try FileSystem.remove(scene.home.url("src/pages/p5"))
        try Trees.settleDirectories(scene.source)
        try FileSystem.remove(scene.home.url("pkg/pages/p5"))
        // The package holds the new tree already; only a check sees it.
        var options = SaveOptions(durability: .none)
        options.trustManifest = false
        try PackageSaver.save(DirectorySource(scene.source), to: scene.package, options: options)
        let manifest = try #require(try PackageManifest.load(packagePath: scene.package))
        #expect(!manifest.entries.contains { $0.hasPath("pages/p5") })
        let again = try scene.save(scene.package)
        #expect(again.unchanged && again.filesHashed == 0)
    }
}
