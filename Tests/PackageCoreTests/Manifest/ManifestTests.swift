import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("The manifest and stat cache")
struct ManifestTests {
    func makePackage(_ root: String, files: Int = 20) throws {
        try Files.makeDirectory(root + "/pages")
        for index in 0..<files { try Files.write(root + "/pages/\(index).txt", "page \(index)") }
        try Files.write(root + "/metadata.json", "{}")
        try Files.symlink(root + "/cover", to: "pages/0.txt")
    }

    @Test("round trip: what is written loads back identical, and sound hashes are reused")
    func roundTrip() throws {
        let directory = try TemporaryDirectory("manifest")
        try makePackage(directory.path)
        let scan = try PackageScan.scan(directory.path)
        #expect(scan.manifest == nil && scan.manifestProblem == nil)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        let loaded = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(loaded.snapshot == scan.snapshot)
        // Backdate the files so they are not racy, then rescan: nothing is read again.
        let past = (Int64(time(nil)) - 100) * 1_000_000_000
        for entry in scan.snapshot.entries where entry.kind == .regular {
            try FileSystem.setModificationTime(directory.url(entry.path), past)
        }
        let refreshed = try PackageScan.scan(directory.path, useManifest: false)
        try PackageManifest.writeIndex(refreshed.snapshot, packagePath: directory.path, durability: .none)
        let again = try PackageScan.scan(directory.path)
        #expect(again.result.filesHashed == 0)
        #expect(again.snapshot.rootHash == scan.snapshot.rootHash)
    }

    @Test("racy entries: a same-size edit right after the manifest is written is never missed")
    func racyEdit() throws {
        let directory = try TemporaryDirectory("racy")
        try makePackage(directory.path)
        try Files.write(directory.url("pages/5.txt"), "AAAA")
        let scan = try PackageScan.scan(directory.path)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        let before = try FileSystem.status(directory.url("pages/5.txt"))
        // Same size, same second; then put the old mtime back.
        try Files.write(directory.url("pages/5.txt"), "BBBB")
        try FileSystem.setModificationTime(directory.url("pages/5.txt"), before.modificationTime)
        let after = try FileSystem.status(directory.url("pages/5.txt"))
        #expect(after.size == before.size && after.modificationTime == before.modificationTime)
        let rescan = try PackageScan.scan(directory.path)
        let changes = TreeDiff.changes(from: try #require(rescan.manifest).snapshot, to: rescan.snapshot)
        #expect(changes.map(\.nameStatusLine) == ["M\tpages/5.txt"])
    }

    @Test("an entry whose mtime is not older than the manifest is re-hashed even with equal stat data")
    func racyRule() throws {
        let status = FileStatus(
            kind: .regular, permissions: 0o644, size: 4, modificationTime: 1_000, changeTime: 1_000, inode: 7)
        let entry = SnapshotEntry(
            path: "a", kind: .regular, permissions: 0o644, size: 4, hash: .empty, modificationTime: 1_000,
            changeTime: 1_000, inode: 7)
        let snapshot = TreeSnapshot.assemble([entry])
        #expect(PackageManifest(recording: snapshot, at: 1_000).cachedHash(for: "a", status: status) == nil)
        #expect(PackageManifest(recording: snapshot, at: 1_001).cachedHash(for: "a", status: status) == .empty)
        var touched = status
        touched.changeTime = 2_000
        #expect(PackageManifest(recording: snapshot, at: 1_001).cachedHash(for: "a", status: touched) == nil)
        var moved = status
        moved.inode = 8
        #expect(PackageManifest(recording: snapshot, at: 1_001).cachedHash(for: "a", status: moved) == nil)
    }

    @Test("deltas apply on top of the base, chain by checksum, and keep the root hash")
    func deltas() throws {
        let directory = try TemporaryDirectory("delta")
        try makePackage(directory.path)
        let scan = try PackageScan.scan(directory.path)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        var manifest = try #require(try PackageManifest.load(packagePath: directory.path))

        // Change the tree: edit one page, drop another, add a directory with a file.
        try Files.write(directory.url("pages/3.txt"), "page three, edited")
        try FileSystem.remove(directory.url("pages/4.txt"))
        try Files.makeDirectory(directory.url("extra"))
        try Files.write(directory.url("extra/new.txt"), "new")
        for round in 0..<2 {
            let current = try PackageScan.scan(directory.path, useManifest: false).snapshot
            let changes = TreeDiff.changes(from: manifest.snapshot, to: current, detectRenames: false)
            var upserts: [SnapshotEntry] = []
            var removals: [String] = []
            for change in changes {
                if change.status == .deleted { removals.append(change.path) } else if let entry = change.newEntry { upserts.append(entry) }
            }
            for directoryEntry in current.entries where directoryEntry.kind == .directory { upserts.append(directoryEntry) }
            let delta = manifest.encodedDelta(
                upserts: upserts, removals: removals, newRootHash: current.rootHash,
                newEntryCount: current.entries.count, relinkWindow: nil)
            #expect(delta.name == "delta.00000\(round + 1)")
            try AtomicFile.write(delta.bytes, to: directory.url(".pkgtool/\(delta.name)"), durability: .none)
            manifest = try #require(try PackageManifest.load(packagePath: directory.path))
            #expect(manifest.snapshot.rootHash == current.rootHash)
            #expect(manifest.entries.map(\.path) == current.entries.map(\.path))
            #expect(manifest.entries.map(\.hash) == current.entries.map(\.hash))
            try Files.write(directory.url("pages/7.txt"), "round \(round)")
        }
        #expect(manifest.lastSequence == 2)

        // A gap in the chain is refused.
        try FileSystem.rename(directory.url(".pkgtool/delta.000002"), to: directory.url(".pkgtool/delta.000003"))
        #expect(throws: ManifestError.self) { try PackageManifest.load(packagePath: directory.path) }
        // A fresh base makes older deltas stale: ignored, and removed by the next write.
        let current = try PackageScan.scan(directory.path, useManifest: false).snapshot
        try AtomicFile.write(PackageManifest.encodedIndex(current), to: directory.url(".pkgtool/index"), durability: .none)
        let rebased = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(rebased.snapshot.rootHash == current.rootHash)
        #expect(rebased.staleDeltaFiles.sorted() == ["delta.000001", "delta.000003"])
        try PackageManifest.writeIndex(current, packagePath: directory.path, durability: .none)
        let metadata = try FileDescriptor.openDirectory(directory.url(".pkgtool"))
        #expect(try DirectoryListing.names(in: metadata) == ["index"])
    }

    @Test("truncated, damaged and future-version manifests are refused, never trusted")
    func damaged() throws {
        let directory = try TemporaryDirectory("damaged")
        try makePackage(directory.path)
        let scan = try PackageScan.scan(directory.path)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        let indexPath = directory.url(".pkgtool/index")
        let good = try Files.read(indexPath)

        var truncated = good
        truncated.removeLast(40)
        var flipped = good
        flipped[good.count / 2] ^= 0x20
        var future = good
        future[8] = 9
        var foreign = good
        foreign[0] = UInt8(ascii: "X")
        let cases: [([UInt8], ManifestError.Reason)] = [
            (truncated, .checksumMismatch), (flipped, .checksumMismatch), (future, .futureVersion(9)),
            (foreign, .badMagic), (Array(good.prefix(5)), .truncated),
        ]
        for (bytes, reason) in cases {
            try Files.write(indexPath, bytes)
            #expect(throws: ManifestError(path: indexPath, reason: reason)) {
                try PackageManifest.load(packagePath: directory.path)
            }
            let rescan = try PackageScan.scan(directory.path)
            #expect(rescan.manifest == nil)
            #expect(rescan.manifestProblem?.reason == reason)
            #expect(rescan.result.filesHashed == 21, "every file is read when the manifest is not trusted")
        }
    }

    @Test("the index and each delta record the package identity they were written for")
    func packageIdentity() throws {
        let directory = try TemporaryDirectory("identity")
        try makePackage(directory.path)
        let root = try FileSystem.status(directory.path).inode
        let scan = try PackageScan.scan(directory.path)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none, packageIdentity: root)
        var manifest = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(manifest.basePackageIdentity == root && manifest.lastDeltaPackageIdentity == nil)
        #expect(manifest.packageIdentity == root)
        #expect(PackageManifest(recording: scan.snapshot, packageIdentity: root).head.baseChecksum == manifest.head.baseChecksum)

        let delta = manifest.encodedDelta(
            upserts: [], removals: [], newRootHash: scan.snapshot.rootHash, newEntryCount: scan.snapshot.entries.count,
            relinkWindow: nil, packageIdentity: root + 1)
        try AtomicFile.write(delta.bytes, to: directory.url(".pkgtool/\(delta.name)"), durability: .none)
        manifest = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(manifest.basePackageIdentity == root && manifest.lastDeltaPackageIdentity == root + 1)
        #expect(manifest.packageIdentity == root + 1)

        // Version 1 files had a reserved zero there: unknown.
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        #expect(try PackageManifest.load(packagePath: directory.path)?.packageIdentity == 0)
    }
}
