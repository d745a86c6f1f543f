import PackageTestSupport
import Testing

@testable import PackageCore

/// The base file is decoded as it is read, a 1 MiB piece at a time (more when one record is
/// larger): records that straddle two pieces, a chunk list larger than a piece, and damage
/// past the first piece must all come out as when the file was read whole.
@Suite("The manifest's base file read a piece at a time")
struct BaseFileReadingTests {
    /// `pages` files in folders of 100, and one file whose chunk list alone (`chunks` chunks
    /// of 20 bytes each) is larger than a piece.
    static func tree(pages: Int, chunks: Int) -> TreeSnapshot {
        var entries: [SnapshotEntry] = []
        let list = (0..<chunks).map { FileChunk(offset: Int64($0), length: 1, hash: ContentHash(high: UInt64($0), low: 7)) }
        entries.append(
            SnapshotEntry(
                path: "media/film.bin", kind: .regular, permissions: 0o644, size: Int64(chunks),
                hash: ContentHash(high: 1, low: 2), modificationTime: 5, changeTime: 6, inode: 7, device: 8,
                chunks: ChunkList(contiguous: list)))
        entries.append(SnapshotEntry(path: "media", kind: .directory, permissions: 0o755, size: 0, hash: .empty))
        for folder in 0..<(pages / 100) {
            let name = "pages/d" + String(folder)
            entries.append(SnapshotEntry(path: name, kind: .directory, permissions: 0o755, size: 0, hash: .empty))
            for page in 0..<100 {
                let number = folder * 100 + page
                entries.append(
                    SnapshotEntry(
                        path: name + "/p" + String(number) + ".txt", kind: .regular, permissions: 0o644,
                        size: Int64(number % 4096), hash: ContentHash(high: UInt64(number), low: 3),
                        modificationTime: Int64(number), changeTime: Int64(number) + 1, inode: UInt64(number) + 9,
                        device: 8))
            }
        }
        entries.append(SnapshotEntry(path: "pages", kind: .directory, permissions: 0o755, size: 0, hash: .empty))
        return TreeSnapshot.assemble(entries)
    }

    static func package(holding bytes: [UInt8]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("base-pieces")
        try Files.makeDirectory(directory.url(".pkgtool"))
        try Files.write(directory.url(".pkgtool/index"), bytes)
        return directory
    }

    static func refusal(_ bytes: [UInt8]) throws -> ManifestError.Reason? {
        let directory = try package(holding: bytes)
        do {
            _ = try PackageManifest.load(packagePath: directory.path)
            return nil
        } catch let error as ManifestError {
            return error.reason
        }
    }

    @Test func aBaseOfManyPiecesReadsBackWhole() throws {
        let tree = Self.tree(pages: 30_000, chunks: 80_000)
        let bytes = PackageManifest.encodedIndex(tree)
        #expect(bytes.count > 3 << 20, "several pieces, and one record larger than a piece")
        let directory = try Self.package(holding: bytes)
        let manifest = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(manifest.snapshot == tree)
        #expect(manifest.baseChecksum == bytes.suffix(16).withUnsafeBytes { ContentHash(canonicalBytes: $0) })
    }

    @Test func damagePastTheFirstPieceIsAChecksumMismatch() throws {
        let bytes = PackageManifest.encodedIndex(Self.tree(pages: 30_000, chunks: 10))
        var flipped = bytes
        flipped[bytes.count - 100_000] ^= 0x40
        #expect(try Self.refusal(flipped) == .checksumMismatch)
        #expect(try Self.refusal(Array(bytes.dropLast(70_000))) == .checksumMismatch)
        #expect(try Self.refusal(Array(bytes.prefix(20))) == .truncated)
        #expect(try Self.refusal(Array("PKGXXX".utf8) + Array(bytes.dropFirst(6))) == .badMagic)
    }

    @Test func aWellSealedMalformedRecordPastTheFirstPieceIsRefusedAsSuch() throws {
        let bytes = PackageManifest.encodedIndex(Self.tree(pages: 30_000, chunks: 10))
        // Two bytes after the last record, sealed with a checksum of their own.
        var forged = Array(bytes.dropLast(16))
        forged.append(contentsOf: [0xFF, 0xFF])  // bytes after the last record
        forged += ContentHash.of(forged).canonicalBytes
        guard case .inconsistent = try #require(try Self.refusal(forged)) else {
            Issue.record("a sealed file with bytes after its records must be refused as inconsistent")
            return
        }
    }
}
