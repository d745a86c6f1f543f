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
    /// itself (adopted: moved into place, not copied).
    struct GeneratedSource: SaveSource {
        enum Bytes { case stream([UInt8]), staged(String) }
        var files: [(path: String, bytes: Bytes)]

        func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
            var entries: [SnapshotEntry] = []
            var contents: [ContentOrigin?] = []
            for (path, bytes) in files.sorted(by: { PathOrder.pathLess($0.path, $1.path) }) {
                let data: [UInt8]
                let origin: ContentOrigin
                switch bytes {
                case .stream(let raw):
                    data = raw
                    origin = .stream(Pieces(bytes: raw))
                case .staged(let staged):
                    data = try Files.read(staged)
                    origin = .adopt(path: staged, verified: try FileSystem.status(staged))
                }
                entries.append(
                    SnapshotEntry(
                        path: path, kind: .regular, permissions: 0o644, size: Int64(data.count), hash: ContentHash.of(data),
                        modificationTime: 1_700_000_000_000_000_000))
                contents.append(origin)
            }
            var builder = TreeHashBuilder()
            for entry in entries { builder.add(name: entry.path, tag: entry.tag, hash: entry.hash) }
            return SourceTree(snapshot: TreeSnapshot(entries: entries, rootHash: builder.finish()), contents: contents)
        }
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
        struct Liar: SaveSource {
            func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
                let entry = SnapshotEntry(
                    path: "x", kind: .regular, permissions: 0o644, size: 3, hash: ContentHash.of(Array("abc".utf8)))
                var builder = TreeHashBuilder()
                builder.add(name: "x", tag: entry.tag, hash: entry.hash)
                return SourceTree(
                    snapshot: TreeSnapshot(entries: [entry], rootHash: builder.finish()),
                    contents: [.stream(Pieces(bytes: Array("abd".utf8)))])
            }
        }
        let home = try TemporaryDirectory("liar")
        let package = home.url("doc.pkg")
        try Files.makeDirectory(package)
        try Files.write(package + "/x", "old")
        for strategy in SaveStrategy.allCases {
            #expect(throws: SaveRefusal.self) {
                try PackageSaver.save(Liar(), to: package, options: SaveOptions(strategy: strategy, durability: .none))
            }
            #expect(try Files.read(package + "/x") == Array("old".utf8), "\(strategy)")
        }
    }
}
