import Foundation
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// Changed bytes, not changed files (issue "Chunk-level saves"): a large file that changed
/// a little is saved as its changed chunks — patched in place through the journal, or
/// written into a clone of its old version where the file system has reflinks.
@Suite("Chunk-level saves", .serialized)
struct ChunkSaveTests {
    static let big = 24 << 20

    /// A document with one large media file (random, seeded) and a few pages.
    static func makeSource(_ root: String, seed: UInt64 = 7) throws {
        try Files.makeDirectory(root + "/pages")
        for page in 0..<4 { try Files.write(root + "/pages/\(page).txt", "page \(page)") }
        try Files.makeDirectory(root + "/media")
        try Files.writeRandom(root + "/media/movie.bin", size: big, seed: seed)
    }

    /// Overwrites `length` bytes of `path` at `offset` with other random bytes.
    static func overwrite(_ path: String, at offset: Int, length: Int, seed: UInt64) throws {
        var generator = SeededBytes(seed: seed)
        let bytes = generator.bytes(length)
        let file = open(path, O_WRONLY)
        defer { close(file) }
        let written = bytes.withUnsafeBytes { pwrite(file, $0.baseAddress, $0.count, off_t(offset)) }
        #expect(written == length)
    }

    static func options(_ strategy: SaveStrategy, workers: Int = ProcessInfoCores.active) -> SaveOptions {
        SaveOptions(strategy: strategy, durability: .none, workers: workers)
    }

    static func expectSound(_ package: String, equals source: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)), sourceLocation: sourceLocation)
        let manifest = try #require(try PackageManifest.load(packagePath: package), sourceLocation: sourceLocation)
        let rescan = try PackageScan.scan(package, useManifest: false)
        #expect(TreeDiff.changes(from: manifest.snapshot, to: rescan.snapshot).isEmpty, sourceLocation: sourceLocation)
        // The recorded chunk list is the file's own.
        let index = try #require(rescan.snapshot.index(of: "media/movie.bin"), sourceLocation: sourceLocation)
        #expect(manifest.chunks(for: "media/movie.bin") == rescan.snapshot.entries[index].chunks, sourceLocation: sourceLocation)
    }

    @Test("journaled: 1 MiB changed at an arbitrary offset is patched in place — a few MiB written, same inode, equal byte for byte")
    func journaledPatch() throws {
        let home = try TemporaryDirectory("chunk-journaled")
        let source = home.url("src")
        let package = home.url("doc.pkg")
        try Self.makeSource(source)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
        let inode = try FileSystem.status(package + "/media/movie.bin").inode
        for (round, offset) in [3_333_333, 0, Self.big - (1 << 20)].enumerated() {
            try Self.overwrite(source + "/media/movie.bin", at: offset, length: 1 << 20, seed: UInt64(100 + round))
            try Files.write(source + "/pages/1.txt", "page one, round \(round)")
            let outcome = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
            let statistics = outcome.statistics
            #expect(statistics.filesPatched == 1, "round \(round)")
            #expect(statistics.bytesPatched >= 1 << 20 && statistics.bytesPatched <= 8 << 20, "round \(round): \(statistics.bytesPatched)")
            #expect(statistics.bytesWritten < 9 << 20, "round \(round)")
            #expect(try FileSystem.status(package + "/media/movie.bin").inode == inode, "patched in place")
            try Self.expectSound(package, equals: source)
            // The next save trusts the patched file's stat data: nothing reread.
            let again = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
            #expect(again.statistics.unchanged && again.statistics.filesHashed == 0, "round \(round)")
        }
        #expect(try Trees.names(package + "/.pkgtool/tmp") == [], "the patch data is gone")
    }

    @Test("a file that grew or shrank is patched with its new size; a file shared by a hard link is written whole")
    func sizeChangesAndSharedInodes() throws {
        let home = try TemporaryDirectory("chunk-size")
        let source = home.url("src")
        let package = home.url("doc.pkg")
        try Self.makeSource(source)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
        // Grow by appending 100 KiB, then shrink by 1.5 MiB.
        let path = source + "/media/movie.bin"
        let file = open(path, O_WRONLY | O_APPEND)
        var generator = SeededBytes(seed: 5)
        let tail = generator.bytes(100 << 10)
        _ = tail.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
        let grown = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
        #expect(grown.statistics.filesPatched == 1)
        try Self.expectSound(package, equals: source)
        #expect(truncate(path, off_t(Self.big - (3 << 19))) == 0)
        let shrunk = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
        #expect(shrunk.statistics.filesPatched == 1)
        try Self.expectSound(package, equals: source)
        // Shared with another name: never written in place.
        try FileSystem.link(package + "/media/movie.bin", to: home.url("outside-link"))
        try Self.overwrite(path, at: 1 << 20, length: 1 << 20, seed: 9)
        let shared = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
        #expect(shared.statistics.filesPatched == 0 && shared.statistics.filesWritten >= 1)
        try Self.expectSound(package, equals: source)
        #expect(try Files.read(home.url("outside-link")) != (try Files.read(path)), "the other name keeps the old bytes")
    }

    @Test("a FileWrapper whose big file was replaced by new contents: the engine compares the chunks itself")
    func treeSource() throws {
        let home = try TemporaryDirectory("chunk-tree")
        let source = home.url("src")
        let package = home.url("doc.pkg")
        try Self.makeSource(source)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: Self.options(.journaled))
        try Trees.settleDirectories(package)
        let tree = try FileWrapper(url: URL(fileURLWithPath: package))
        let media = try #require(tree.fileWrapper(forKey: "media"))
        var bytes = try Files.read(package + "/media/movie.bin")
        for index in 5_000_000..<(5_000_000 + (1 << 20)) { bytes[index] ^= 0x5A }
        media.removeFileWrapper(try #require(media.fileWrapper(forKey: "movie.bin")))
        media.addRegularFile(withContents: Data(bytes), preferredFilename: "movie.bin")
        let outcome = try PackageSaver.save(FileWrapperSource(tree), to: package, options: Self.options(.journaled))
        #expect(outcome.statistics.filesPatched == 1)
        #expect(outcome.statistics.bytesPatched <= 8 << 20)
        #expect(try Files.read(package + "/media/movie.bin") == bytes)
    }

    @Test(
        "on XFS, atomic and full clone the old version and write only the changed chunks: the device writes a few MiB",
        .enabled(if: Prerequisite.runs(Prerequisite.canMountXFS), "needs root, mkfs.xfs and a loop device"))
    func reflinks() throws {
        let xfs = try #require(LoopMount.xfs(), "an XFS image could not be mounted")
        let home = try TemporaryDirectory("chunk-xfs-src")
        let source = home.url("src")
        try Self.makeSource(source)
        for strategy in [SaveStrategy.atomic, .full] {
            let package = xfs.path + "/\(strategy).pkg"
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(strategy: strategy))
            try Self.overwrite(source + "/media/movie.bin", at: 9_999_999, length: 1 << 20, seed: strategy == .atomic ? 1 : 2)
            let before = xfs.bytesWritten()
            let outcome = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(strategy: strategy))
            let written = xfs.bytesWritten() - before
            print("reflink save (\(strategy)) on XFS: the loop device wrote \(written) bytes for a 1 MiB change in a 24 MiB file")
            #expect(outcome.statistics.filesCloned == 1, "\(strategy)")
            if strategy == .atomic { #expect(written <= 8 << 20, "\(strategy): the device wrote \(written) bytes") }
            try Self.expectSound(package, equals: source)
        }
        // ext4 (the temporary directory's file system here): no reflinks, written whole.
        let package = home.url("ext4.pkg")
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(strategy: .atomic, durability: .none))
        try Self.overwrite(source + "/media/movie.bin", at: 1, length: 1 << 20, seed: 3)
        let fallback = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(strategy: .atomic, durability: .none))
        #expect(fallback.statistics.filesCloned == 0 || fallback.statistics.filesWritten == 0)
        try Self.expectSound(package, equals: source)
    }
}
