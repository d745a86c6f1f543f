import Foundation
import PackageCore
import PackageTestSupport

@testable import PackageRemote

/// A remote in its own bucket of the shared SeaweedFS, with its own cache directory (a
/// "device"), and helpers to make packages.
struct RemoteFixture {
    let server: SeaweedServer
    let bucket: String
    let location: RemoteLocation
    let directory: TemporaryDirectory

    init(_ label: String = "sync", prefix: String = "docs/notes") throws {
        server = SeaweedServer.shared
        bucket = try server.makeBucket(label)
        location = RemoteLocation(bucket: bucket, prefix: prefix)
        directory = try TemporaryDirectory(label)
    }

    /// A remote in a bucket of another server.
    init(existingBucket bucket: String, server: SeaweedServer, prefix: String = "docs/notes") throws {
        self.server = server
        self.bucket = bucket
        location = RemoteLocation(bucket: bucket, prefix: prefix)
        directory = try TemporaryDirectory(bucket)
    }

    /// Options for one device: its own cache (`device` names it).
    func options(device: String = "a", attempts: Int = 6, packSize: Int = 8 << 20) -> RemoteOptions {
        RemoteOptions(
            configuration: server.configuration(attempts: attempts), cacheDirectory: directory.url("cache-\(device)"),
            packSize: packSize)
    }

    func path(_ relative: String) -> String { directory.url(relative) }

    /// A small document package: metadata, pages in folders, a media file, an empty file,
    /// an executable script, a symbolic link, an empty directory, and one content at three paths.
    @discardableResult
    func makePackage(_ relative: String, seed: UInt64 = 1, pages: Int = 30, mediaSize: Int = 3 << 20) throws -> String {
        let root = path(relative)
        try Files.makeDirectory(root + "/pages/a")
        try Files.makeDirectory(root + "/pages/b")
        try Files.makeDirectory(root + "/media")
        try Files.makeDirectory(root + "/empty")
        try Files.write(root + "/metadata.json", "{\"title\": \"notes \(seed)\"}\n")
        var generator = SeededBytes(seed: seed)
        for index in 0..<pages {
            let folder = index % 2 == 0 ? "a" : "b"
            let size = 100 + Int(generator.next() % 6000)
            try Files.write(root + "/pages/\(folder)/page\(index).json", generator.bytes(size))
        }
        try Files.writeRandom(root + "/media/movie.mp4", size: mediaSize, seed: seed &+ 99)
        // The same content at two more paths: stored once, written at each.
        try Files.write(root + "/pages/b/duplicate.json", try Files.read(root + "/pages/a/page0.json"))
        try Files.write(root + "/media/same.bin", try Files.read(root + "/pages/a/page0.json"))
        try Files.write(root + "/empty.txt", [])
        try Files.write(root + "/run.sh", "#!/bin/sh\necho hi\n", permissions: 0o755)
        try Files.symlink(root + "/link", to: "pages/a/page0.json")
        return root
    }

    /// Rewrites `count` bytes at `offset` of a file in place, with seeded bytes.
    func overwrite(_ file: String, at offset: Int64, count: Int, seed: UInt64) throws {
        let descriptor = try FileDescriptor.open(file, access: .readWrite)
        let bytes = SeededBytes(seed: seed).bytesArray(count)
        try bytes.withUnsafeBytes { try descriptor.write($0, at: offset) }
    }

    static func rootHash(_ path: String) throws -> ContentHash { try Trees.contentHash(path) }

    /// Serves `manifest` as the remote's latest version, as a hostile store could: its
    /// object under its SHA-256, and a HEAD naming it on top of `history` (newest first).
    func publish(_ manifest: VersionManifest, history: [VersionSummary]) throws {
        let bytes = manifest.encoded()
        let id = SHA256Digest.of(bytes)
        let s3 = S3Connection(configuration: server.configuration(), counters: TransferCounters(), cancellation: nil)
        _ = try s3.put(bucket: bucket, key: RemoteLayout.version(id, location), bytes: bytes)
        let head = HeadRecord(head: manifest.summary(id: id), history: history)
        _ = try s3.put(bucket: bucket, key: RemoteLayout.head(location), bytes: head.encoded())
    }

    /// Serves `version` as the latest again (a store repaired).
    func restoreHead(_ version: VersionSummary) throws {
        let s3 = S3Connection(configuration: server.configuration(), counters: TransferCounters(), cancellation: nil)
        _ = try s3.put(bucket: bucket, key: RemoteLayout.head(location), bytes: HeadRecord(head: version, history: []).encoded())
    }
}
