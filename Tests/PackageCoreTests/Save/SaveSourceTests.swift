import Foundation
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// A source written outside the engine — as an app or the remote layer would — enters the
/// one save entry like the built-in ones, with no change to the engine.
@Suite("Custom save sources")
struct SaveSourceTests {
    /// A source whose files' bytes come from a closure (a stream) or from files it staged
    /// itself (adopted: moved into place, not copied), described by entries alone: the
    /// engine hashes, orders and checks them.
    struct GeneratedSource: SaveSource {
        enum Bytes { case stream([UInt8]), staged(String) }
        var files: [(path: RelativePath, bytes: Bytes)]

        func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
            let entries = try files.map { path, bytes in
                switch bytes {
                case .stream(let raw):
                    return SourceEntry.file(path, from: .stream(Pieces(bytes: raw)), modificationTime: 1_700_000_000_000_000_000)
                case .staged(let staged):
                    return SourceEntry.file(
                        path, from: .adopt(path: staged, verified: try FileSystem.status(staged)),
                        modificationTime: 1_700_000_000_000_000_000)
                }
            }
            return SourceTree(entries: entries)
        }
    }

    /// A source that hands the engine the entries it is given, as they are.
    struct EntriesSource: SaveSource {
        var entries: [SourceEntry]
        func wholeTree(in context: SaveSourceContext) throws -> SourceTree { SourceTree(entries: entries) }
    }

    /// Bytes produced in small pieces, as a download would.
    struct Pieces: ContentStream {
        let bytes: [UInt8]
        func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
            try bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let end = min(raw.count, offset + 777)
                    try body(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                    offset = end
                }
            }
        }
    }

    @Test("streamed and adopted files: the package equals the tree described, adopted files are moved, not copied")
    func streamedAndAdopted() throws {
        let home = try TemporaryDirectory("custom-source")
        let package = home.url("doc.pkg")
        for (round, strategy) in SaveStrategy.allCases.enumerated() {
            try Files.makeDirectory(home.url("staged-\(strategy)"))
            let staged = home.url("staged-\(strategy)/big.bin")
            // New bytes each time: unchanged files are kept (or linked), not adopted.
            try Files.writeRandom(staged, size: (2 << 20) + 3, seed: UInt64(9 + round))
            let inode = try FileSystem.status(staged).inode
            let source = GeneratedSource(files: [
                ("a.txt", .stream(Array("streamed \(strategy)".utf8))), ("big.bin", .staged(staged)),
            ])
            let outcome = try PackageSaver.save(source, to: package, options: SaveOptions(strategy: strategy, durability: .none))
            #expect(outcome.statistics.filesWritten >= 1, "\(strategy)")
            #expect(try Files.read(package + "/a.txt") == Array("streamed \(strategy)".utf8))
            #expect(try FileSystem.status(package + "/big.bin").inode == inode, "\(strategy): the staged file was moved in")
            #expect(try FileSystem.statusIfExists(staged) == nil)
            let manifest = try #require(try PackageManifest.load(packagePath: package))
            #expect(manifest.snapshot.rootHash == outcome.statistics.rootHash)
            #expect(TreeDiff.changes(from: manifest.snapshot, to: try PackageScan.scan(package, useManifest: false).snapshot).isEmpty)
        }
    }

    @Test("a stream whose bytes are not what the tree said is refused, and the package keeps its last version")
    func lyingStream() throws {
        let liar = EntriesSource(entries: [
            .file("x", from: .stream(Pieces(bytes: Array("abd".utf8))), contentHash: ContentHash.of(Array("abc".utf8)), size: 3)
        ])
        let home = try TemporaryDirectory("liar")
        let package = home.url("doc.pkg")
        try Files.makeDirectory(package)
        try Files.write(package + "/x", "old")
        for strategy in SaveStrategy.allCases {
            #expect(throws: SaveRefusal.self) {
                try PackageSaver.save(liar, to: package, options: SaveOptions(strategy: strategy, durability: .none))
            }
            #expect(try Files.read(package + "/x") == Array("old".utf8), "\(strategy)")
        }
    }

    /// The tree of `folder` on disk as entries: files from their paths (not hashed: the
    /// engine hashes them), folders, links, permissions and dates as on disk.
    static func entries(of folder: String) throws -> [SourceEntry] {
        let scan = try PackageScan.scan(folder, useManifest: false).snapshot
        return scan.entries.map { entry in
            let path = RelativePath(validating: entry.path)!
            switch entry.kind {
            case .directory:
                return .directory(path, permissions: entry.permissions, modificationTime: entry.modificationTime)
            case .symbolicLink:
                return .symbolicLink(path, target: entry.linkTarget ?? "", modificationTime: entry.modificationTime)
            default:
                return .file(
                    path, from: .file(path: folder + "/" + entry.path, seen: nil), permissions: entry.permissions,
                    modificationTime: entry.modificationTime)
            }
        }
    }

    /// A small tree on disk with nested folders, an executable, a link and twin names.
    static func makeFolder(_ folder: String) throws {
        try Files.makeDirectory(folder + "/b/deep/er")
        try Files.makeDirectory(folder + "/a-b")
        try Files.write(folder + "/b/deep/er/x.txt", "deep")
        try Files.write(folder + "/b/run.sh", "#!/bin/sh\n", permissions: 0o755)
        try Files.write(folder + "/a-b/one", "one")
        try Files.write(folder + "/a.txt", "a")
        try Files.write(folder + "/\u{e9}", "nfc")
        try Files.write(folder + "/e\u{301}", "nfd")
        try Files.writeRandom(folder + "/b/big.bin", size: (5 << 20) + 7, seed: 3)
        try Files.symlink(folder + "/b/link", to: "run.sh")
    }

    @Test("entries in any order save the same package, with the same manifest root hash, as a DirectorySource of the same tree")
    func anyOrderMatchesDirectory() throws {
        let home = try TemporaryDirectory("entries-order")
        let folder = home.url("src")
        try Self.makeFolder(folder)
        let viaDirectory = home.url("dir.pkg")
        try PackageSaver.save(DirectorySource(folder), to: viaDirectory, options: SaveOptions(durability: .none))
        let expected = try #require(try PackageManifest.load(packagePath: viaDirectory)).snapshot
        let inOrder = try Self.entries(of: folder)
        // Odd places first, then even ones backwards: many children before their folders.
        let scrambled =
            inOrder.indices.filter { $0 % 2 == 1 }.map { inOrder[$0] }
            + inOrder.indices.filter { $0 % 2 == 0 }.reversed().map { inOrder[$0] }
        let orders = [inOrder, inOrder.reversed(), scrambled]
        for (round, entries) in orders.enumerated() {
            for strategy in SaveStrategy.allCases {
                let package = home.url("entries-\(round)-\(strategy).pkg")
                let outcome = try PackageSaver.save(
                    EntriesSource(entries: entries), to: package, options: SaveOptions(strategy: strategy, durability: .none))
                let manifest = try #require(try PackageManifest.load(packagePath: package))
                #expect(manifest.snapshot.rootHash == expected.rootHash, "order \(round), \(strategy)")
                #expect(outcome.statistics.rootHash == expected.rootHash)
                #expect(manifest.entries.count == expected.entries.count)
                let saved = try PackageScan.scan(package, useManifest: false).snapshot
                #expect(saved.rootHash == expected.rootHash)
                #expect(TreeDiff.changes(from: expected, to: saved).isEmpty)
                for (mine, theirs) in zip(saved.entries, expected.entries) {
                    #expect(mine.hasPath(theirs.path) && mine.permissions == theirs.permissions, "\(mine.path)")
                }
                #expect(try Files.read(package + "/e\u{301}") == Array("nfd".utf8))
                #expect(try Files.read(package + "/\u{e9}") == Array("nfc".utf8))
            }
        }
        // Saved again unchanged, in another order: nothing is written.
        let again = try PackageSaver.save(
            EntriesSource(entries: inOrder.reversed()), to: home.url("entries-0-journaled.pkg"),
            options: SaveOptions(durability: .none))
        #expect(again.statistics.filesWritten == 0)
    }

    @Test("twin names (NFC é and NFD e\u{301}) are two entries, files or folders")
    func twinNamesStayTwo() throws {
        let home = try TemporaryDirectory("entries-twins")
        let package = home.url("doc.pkg")
        let nfc = RelativePath(validating: "\u{e9}")!
        let nfd = RelativePath(validating: "e\u{301}")!
        try PackageSaver.save(
            EntriesSource(entries: [
                .file(nfd, from: .bytes(Array("nfd".utf8))), .directory(nfc),
                .file(nfc.appending("inside"), from: .bytes(Array("in".utf8))),
            ]), to: package, options: SaveOptions(durability: .none))
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        #expect(manifest.entries.count == 3)
        #expect(try Files.read(package + "/e\u{301}") == Array("nfd".utf8))
        #expect(try Files.read(package + "/\u{e9}/inside") == Array("in".utf8))
    }

    /// The refusal `entries` meet, checked to leave no package behind.
    func refusal(_ entries: [SourceEntry], _ label: String) throws -> SaveRefusal {
        let home = try TemporaryDirectory("entries-refused")
        let package = home.url("doc.pkg")
        do {
            try PackageSaver.save(EntriesSource(entries: entries), to: package, options: SaveOptions(durability: .none))
        } catch let refusal as SaveRefusal {
            if try FileSystem.statusIfExists(package) != nil {
                #expect(try Trees.names(package).filter { $0 != ".pkgtool" }.isEmpty, "\(label): nothing written")
            }
            return refusal
        }
        Issue.record("\(label): the save was not refused")
        return SaveRefusal(path: "", reason: .missingContent)
    }

    @Test("a path given twice (byte-equal), a missing or non-folder parent, .pkgtool: refused with the entry's path")
    func malformedTreesAreRefused() throws {
        let twice = try refusal(
            [.file("a", from: .bytes([1])), .directory("b"), .file("a", from: .bytes([2]))], "duplicate")
        #expect(twice.reason == .malformedTree("the tree names this path twice"))
        #expect(twice.path.hasSuffix("/doc.pkg/a"))
        #expect(twice.description.contains("twice"))
        let orphan = try refusal([.directory("a"), .file("b/c", from: .bytes([1]))], "missing parent")
        #expect(orphan.reason == .malformedTree("its parent folder 'b' is not a folder of the tree"))
        #expect(orphan.path.hasSuffix("/doc.pkg/b/c"))
        let underFile = try refusal([.file("a", from: .bytes([1])), .file("a/c", from: .bytes([1]))], "parent is a file")
        #expect(underFile.reason == .malformedTree("its parent folder 'a' is not a folder of the tree"))
        // The NFD twin of a folder is not that folder.
        let twin = try refusal(
            [.directory(RelativePath(validating: "\u{e9}")!), .file(RelativePath(validating: "e\u{301}/x")!, from: .bytes([1]))],
            "twin parent")
        if case .malformedTree = twin.reason {} else { Issue.record("twin parent: \(twin)") }
        for reserved in [SourceEntry.directory(".pkgtool"), .file(".pkgtool", from: .bytes([1]))] {
            let refused = try refusal([.file("a", from: .bytes([1])), reserved], "reserved")
            #expect(refused.reason == .malformedTree("'.pkgtool' is reserved for pkgtool's own state"))
        }
        let root = try refusal([.directory(.root)], "root")
        if case .malformedTree = root.reason {} else { Issue.record("root: \(root)") }
        let sizeless = try refusal([.file("s", from: .stream(Pieces(bytes: [1])), contentHash: ContentHash.of([1]))], "hash without size")
        #expect(sizeless.reason == .malformedTree("its content hash is given without its size"))
    }

    @Test("a file whose hash is not given is hashed from its origin: bytes, a stream, a file on disk")
    func unhashedFilesAreHashedFromTheirOrigin() throws {
        let home = try TemporaryDirectory("entries-hash")
        let onDisk = home.url("big.bin")
        try Files.writeRandom(onDisk, size: (4 << 20) + 11, seed: 5)
        let package = home.url("doc.pkg")
        let streamed = Array(repeating: UInt8(7), count: 3000)
        let outcome = try PackageSaver.save(
            EntriesSource(entries: [
                .file("disk.bin", from: .file(path: onDisk, seen: nil)), .file("memory", from: .bytes(Array("bytes".utf8))),
                .file("stream", from: .stream(Pieces(bytes: streamed))),
            ]), to: package, options: SaveOptions(durability: .none))
        #expect(outcome.statistics.filesHashed == 3)
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        let byPath = Dictionary(uniqueKeysWithValues: manifest.entries.map { (RelativePath(trusted: $0.path), $0) })
        let disk = try #require(byPath["disk.bin"])
        #expect(disk.hash == ContentHash.of(try Files.read(onDisk)))
        #expect(disk.size == Int64(4 << 20) + 11)
        #expect(disk.chunks != nil, "a large file gets its chunk list from the same read")
        #expect(byPath["memory"]?.hash == ContentHash.of(Array("bytes".utf8)))
        #expect(byPath["stream"]?.hash == ContentHash.of(streamed))
        #expect(try Files.read(package + "/stream") == streamed)
        #expect(try Files.read(package + "/disk.bin") == (try Files.read(onDisk)))
    }

    @Test("a file whose hash is given is not read when the package already holds it (journaled, atomic; full rewrites all)")
    func givenHashIsNotRead() throws {
        struct Unreadable: ContentStream {
            func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
                throw SaveRefusal(path: "unreadable", reason: .refusedBySource("the engine read a file it had the hash of"))
            }
        }
        let home = try TemporaryDirectory("entries-given-hash")
        let package = home.url("doc.pkg")
        let bytes = Array("kept".utf8)
        try PackageSaver.save(
            EntriesSource(entries: [.file("k", from: .bytes(bytes))]), to: package, options: SaveOptions(durability: .none))
        for strategy in [SaveStrategy.journaled, .atomic] {
            let outcome = try PackageSaver.save(
                EntriesSource(entries: [
                    .file("k", from: .stream(Unreadable()), contentHash: ContentHash.of(bytes), size: Int64(bytes.count))
                ]), to: package, options: SaveOptions(strategy: strategy, durability: .none))
            #expect(outcome.statistics.filesHashed == 0 && outcome.statistics.filesWritten == 0, "\(strategy)")
            #expect(try Files.read(package + "/k") == bytes)
        }
    }
}
