import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// `SaveOptions.keepsPrevious`: an atomic save keeps the version it replaces beside the
/// package and the next one brings that tree up to date instead of building a new one.
@Suite("Atomic saves keeping the previous version")
struct KeepPreviousTests {
    static let options = SaveOptions(strategy: .atomic, durability: .none, workers: 2, keepsPrevious: true)

    /// Whether the tree at `path` is exactly what its own manifest says.
    static func describedByManifest(_ path: String) throws -> Bool {
        guard let manifest = try PackageManifest.load(packagePath: path) else { return false }
        let rescan = try PackageScan.scan(path, useManifest: false)
        return manifest.snapshot.rootHash == rescan.snapshot.rootHash
            && TreeDiff.changes(from: manifest.snapshot, to: rescan.snapshot).isEmpty
    }

    @Test("each save makes the package the source and keeps the version it replaced, through every kind of change")
    func roundTrips() throws {
        let directory = try TemporaryDirectory("keep-previous")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        let previous = directory.url(SiblingNames(forName: "doc.pkg").previous)
        try makeDocument(source)
        let originalMetadata = try Files.read(source + "/metadata.json")
        let first = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options).statistics
        #expect(!first.reusedPrevious)
        #expect(try FileSystem.statusIfExists(previous) == nil, "a first save replaces nothing")

        let changes: [(String, () throws -> Void)] = [
            ("every kind of change", { try changeDocument(source) }),
            ("one page and 1 MiB of the media file", {
                try Files.write(source + "/pages/7.txt", "page seven, edited")
                let file = try FileDescriptor.open(source + "/media/clip.bin", access: .readWrite)
                var generator = SeededBytes(seed: 42)
                try generator.bytes(1 << 20).withUnsafeBytes { try file.write($0, at: 1 << 20) }
            }),
            ("the metadata back to the original (what the kept version holds differs)", {
                try Files.write(source + "/metadata.json", originalMetadata)
            }),
            ("only a mode", { try FileSystem.setPermissions(source + "/tool.sh", 0o755) }),
            ("a folder becomes a file and a file a folder", {
                try FileSystem.removeTree(source + "/notes")
                try Files.write(source + "/notes", "notes are a file again")
                try FileSystem.remove(source + "/attic")
                try Files.makeDirectory(source + "/attic/empty")
            }),
            ("nothing", {}),
        ]
        var sawReuse = false
        for (round, (label, change)) in changes.enumerated() {
            let before = try Trees.contentHash(package)
            try change()
            let statistics = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options).statistics
            #expect(try Trees.contentHash(package) == Trees.contentHash(source), "\(label)")
            #expect(try Self.describedByManifest(package), "\(label): the package's manifest")
            #expect(try Trees.names(directory.path) == [SiblingNames(forName: "doc.pkg").previous, "doc.pkg", "src"])
            if statistics.unchanged {
                #expect(label == "nothing")
                continue
            }
            // The kept version is the one this save replaced, and says so itself.
            #expect(try Trees.contentHash(previous) == before, "\(label): the kept version")
            #expect(try Self.describedByManifest(previous), "\(label): the kept version's manifest")
            #expect(statistics.reusedPrevious == (round > 0), "\(label)")
            sawReuse = sawReuse || statistics.reusedPrevious
            if round == 1 {
                // Only the two changed files are written; nothing is linked anew but the
                // files the previous save changed.
                #expect(statistics.filesWritten == 2)
                #expect(statistics.bytesWritten == Int64(3 << 20) + Int64("page seven, edited".utf8.count))
                #expect(statistics.filesLinked <= 7, "\(statistics.filesLinked)")
            }
            if label == "only a mode" {
                // Modes never leak between the trees, which share inodes.
                #expect(try FileSystem.status(package + "/tool.sh").permissions == 0o755)
                #expect(try FileSystem.status(previous + "/tool.sh").permissions == 0o644)
            }
        }
        #expect(sawReuse)
        // Files neither version changed are shared by both trees, never copied.
        let page = try FileSystem.status(package + "/pages/9.txt")
        #expect(page.inode == (try FileSystem.status(previous + "/pages/9.txt")).inode)
        // A plain atomic save afterwards still works, and leaves the kept version alone.
        try Files.write(source + "/pages/8.txt", "page eight, edited")
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(strategy: .atomic, durability: .none)).statistics
        #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        #expect(try Self.describedByManifest(previous))
    }

    @Test("a kept version whose manifest is damaged is removed and rebuilt, and the statistics say so")
    func untrustedPrevious() throws {
        let directory = try TemporaryDirectory("keep-previous-damaged")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        let previous = directory.url(SiblingNames(forName: "doc.pkg").previous)
        try makeDocument(source)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options).statistics
        try Files.write(source + "/pages/1.txt", "one")
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options).statistics
        let replaced = try Trees.contentHash(package)
        // Replaced, not written in place: the two trees share their manifest files' inodes.
        try FileSystem.remove(previous + "/.pkgtool/index")
        try Files.write(previous + "/.pkgtool/index", "not a manifest")
        try Files.write(source + "/pages/2.txt", "two")
        let statistics = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options).statistics
        #expect(!statistics.reusedPrevious)
        #expect(statistics.notes.contains { $0.contains("could not be trusted") })
        #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        #expect(try Trees.contentHash(previous) == replaced)
        #expect(try Self.describedByManifest(previous))
    }

    @Test("keeping the previous version is refused for the strategies that replace nothing whole")
    func refusedForOtherStrategies() throws {
        let directory = try TemporaryDirectory("keep-previous-refused")
        let source = directory.url("src")
        try makeDocument(source)
        for strategy in [SaveStrategy.journaled, .full] {
            #expect(throws: SaveRefusal.self) {
                try PackageSaver.save(
                    DirectorySource(source), to: directory.url("\(strategy).pkg"),
                    options: SaveOptions(strategy: strategy, keepsPrevious: true)).statistics
            }
        }
    }
}
