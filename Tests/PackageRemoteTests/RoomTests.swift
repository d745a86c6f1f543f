import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// A few KiB of store objects can describe a huge file (one blob repeated): a pull checks
/// the room the version needs on DEST's file system before it writes anything.
@Suite("Room on DEST's file system")
struct RoomTests {
    @Test func aVersionLargerThanTheDiskIsRefusedBeforeAnythingIsWritten() throws {
        let fixture = try RemoteFixture("room")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 1 << 16)
        let first = try PackageRemote.push(source, to: fixture.location, options: fixture.options())

        // Version 2: the same tree plus one file of about 1.2 TiB, 300 times one blob.
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let firstBytes = try #require(
            try s3.getObject(bucket: fixture.bucket, key: RemoteLayout.version(first.version.id, fixture.location), limit: 1 << 20))
        var manifest = try VersionManifest.decode(firstBytes.bytes, id: first.version.id)
        let blob = try #require(manifest.entries.first { !$0.blobs.isEmpty }?.blobs.first)
        let piece = BlobLocation(digest: blob.digest, pack: blob.pack, offset: 0, length: UInt32.max)
        let huge = RemoteEntry(
            path: "huge.bin", kind: .regular, permissions: 0o644, size: Int64(UInt32.max) * 300, modificationTime: 0,
            contentHash: ContentHash.of(Array("huge".utf8)), linkTarget: nil, blobs: ArraySlice(repeating: piece, count: 300))
        manifest.entries.append(huge)
        manifest.entries.sort { PathOrder.pathLess($0.path, $1.path) }
        manifest.sequence = 2
        manifest.parent = first.version.id
        manifest.rootHash = manifest.snapshot().rootHash
        try fixture.publish(manifest, history: [first.version])

        let cli = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-cli"))
        let fresh = fixture.path("fresh")
        let refused = try cli.run("pull", fixture.location.description, fresh)
        #expect(refused.status == 2, "\(refused.errors)")
        #expect(refused.errors.contains("not enough room for"), "\(refused.errors)")
        #expect(refused.errors.split(separator: "\n").count == 1, "\(refused.errors)")
        #expect(try FileSystem.statusIfExists(fresh) == nil)
        #expect(try Trees.names(fixture.path("")).allSatisfy { !$0.contains("pkgtool-pull") }, "no staging left behind")
    }
}
