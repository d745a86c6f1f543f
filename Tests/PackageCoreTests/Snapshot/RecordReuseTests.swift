import Glibc
import PackageCore
import PackageTestSupport
import Testing

/// A package scanned for its tree alone against its own manifest (`keepingManifest: false`,
/// what `diff`, `push` and `pkgtool manifest` do) takes each directory whose entries carry
/// their recorded stat data from the manifest instead of building it again; the tree must be
/// exactly what a scan that reads every file finds, changed or not.
@Suite("A package scanned against its own record")
struct RecordReuseTests {
    /// What a scan records of an entry, the path and link target as bytes.
    struct Scanned: Equatable, CustomStringConvertible {
        var path: [UInt8]
        var kind: FileKind
        var permissions: UInt32
        var size: Int64
        var hash: ContentHash
        var modificationTime: Int64
        var changeTime: Int64
        var inode: UInt64
        var device: UInt64
        var target: [UInt8]?
        var descendants: Int

        init(_ entry: SnapshotEntry) {
            path = Array(entry.path.utf8)
            kind = entry.kind
            permissions = entry.permissions
            size = entry.size
            hash = entry.hash
            modificationTime = entry.modificationTime
            changeTime = entry.changeTime
            inode = entry.inode
            device = entry.device
            target = entry.linkTarget.map { Array($0.utf8) }
            descendants = entry.descendantCount
        }

        var description: String { String(decoding: path, as: UTF8.self) }
    }

    /// A package saved from a folder of nested folders, twins, a link and an empty folder,
    /// every file dated in the past (no entry is racy).
    static func savedPackage(in directory: TemporaryDirectory) throws -> (source: String, package: String) {
        let source = directory.url("src")
        for folder in ["a/sub/deep", "b", "empty", "z"] { try Files.makeDirectory(source + "/" + folder) }
        let files = ["a/x", "a/sub/y", "a/sub/deep/w", "a-b", "b/caf\u{E9}", "b/cafe\u{301}", "b/n", "z/only", "top"]
        let past: Int64 = 1_700_000_000_000_000_000
        for (number, path) in files.enumerated() {
            try Files.write(source + "/" + path, "file \(number) " + String(repeating: "x", count: number * 7))
            try FileSystem.setModificationTime(source + "/" + path, past)
        }
        #expect(symlink("../top", source + "/a/link") == 0)
        let package = directory.url("doc.pkg")
        _ = try PackageSaver.save(
            DirectorySource(source), to: package, options: SaveOptions(strategy: .journaled, durability: .none))
        return (source, package)
    }

    /// The package's tree as the manifest-reusing scan finds it, and as a scan reading everything does.
    static func bothScans(of package: String) throws -> (reused: TreeSnapshot, read: TreeSnapshot) {
        let reused = try PackageScan.scan(package, keepingManifest: false, recordingHashedPaths: false)
        #expect(reused.manifestProblem == nil)
        return (reused.snapshot, try PackageScan.scan(package, useManifest: false).snapshot)
    }

    @Test func anUnchangedPackageIsItsRecord() throws {
        let directory = try TemporaryDirectory("record-reuse")
        let (_, package) = try Self.savedPackage(in: directory)
        let (reused, read) = try Self.bothScans(of: package)
        #expect(reused.rootHash == read.rootHash)
        #expect(reused.entries.map(Scanned.init) == read.entries.map(Scanned.init))
        // The manifest's own entries: they still carry the source stamps a scan never records.
        #expect(reused.entries.contains { $0.source != nil })
        #expect(!read.entries.contains { $0.source != nil })
    }

    @Test func aChangedPackageIsScannedAsIfRead() throws {
        let directory = try TemporaryDirectory("record-reuse-changed")
        let (_, package) = try Self.savedPackage(in: directory)
        try Files.write(package + "/a/sub/y", "changed content")  // content (a deep folder)
        #expect(chmod(package + "/b/n", 0o600) == 0)  // mode only
        #expect(unlink(package + "/a/link") == 0)  // a link retargeted, same length
        #expect(symlink("../a-b", package + "/a/link") == 0)
        try Files.write(package + "/z/added", "new")  // an entry more
        #expect(unlink(package + "/b/caf\u{E9}") == 0)  // an entry less; its twin stays
        let (reused, read) = try Self.bothScans(of: package)
        #expect(reused.rootHash == read.rootHash)
        #expect(reused.entries.map(Scanned.init) == read.entries.map(Scanned.init))
        #expect(!reused.entries.contains { $0.source != nil }, "a changed tree is built from the scan's slots")
    }

    @Test func aFolderOfTheRecordTakenBesideChangedOnes() throws {
        // Only one file changes: every other folder is taken from the record, then filled
        // into the result the scan assembles.
        let directory = try TemporaryDirectory("record-reuse-one")
        let (_, package) = try Self.savedPackage(in: directory)
        try Files.write(package + "/top", "a new top")
        let (reused, read) = try Self.bothScans(of: package)
        #expect(reused.rootHash == read.rootHash)
        #expect(reused.entries.map(Scanned.init) == read.entries.map(Scanned.init))
    }

    @Test func aPackageAfterAJournaledSaveIsStillItsRecord() throws {
        // A journaled save writes its record before it renames the new file into place, and
        // the rename moves the file's change time past the recorded one: the stat cache
        // accepts it (a relink window), and so must the reuse, or every later scan of a
        // package saved that way builds a second tree beside the record.
        let directory = try TemporaryDirectory("record-reuse-journaled")
        let (source, package) = try Self.savedPackage(in: directory)
        try Files.write(source + "/a/sub/y", "edited in the source")
        try FileSystem.setModificationTime(source + "/a/sub/y", 1_700_000_000_000_000_000)
        _ = try PackageSaver.save(
            DirectorySource(source), to: package, options: SaveOptions(strategy: .journaled, durability: .none))
        let reused = try PackageScan.scan(package, keepingManifest: false, recordingHashedPaths: false)
        let read = try PackageScan.scan(package, useManifest: false).snapshot
        #expect(reused.result.isRecordedTree)
        #expect(reused.snapshot.rootHash == read.rootHash)
        // Entry for entry as read, but for the recorded change time of the file renamed.
        var expected = read.entries.map(Scanned.init)
        let renamed = try #require(expected.firstIndex { $0.path == Array("a/sub/y".utf8) })
        expected[renamed].changeTime = reused.snapshot.entries[renamed].changeTime
        #expect(reused.snapshot.entries.map(Scanned.init) == expected)
    }

    @Test func aCopiedPackageIsScannedWithoutItsManifest() throws {
        // `cp -a`: every file has another inode, so the stat cache vouches for nothing and the
        // manifest, naming the original folder, is read for its head alone.
        let directory = try TemporaryDirectory("record-reuse-copied")
        let (_, package) = try Self.savedPackage(in: directory)
        let copy = directory.url("copy.pkg")
        let copied = try runProgram("/bin/cp", ["-a", package, copy])
        try #require(copied.status == 0)
        let recorded = try #require(try PackageManifest.load(packagePath: package)).head
        let scan = try PackageScan.scan(copy, keepingManifest: false, recordingHashedPaths: false)
        #expect(scan.usedManifest)
        #expect(scan.recordedHead == recorded)
        #expect(!scan.result.isRecordedTree)
        #expect(scan.result.filesHashed == scan.snapshot.entries.filter { $0.kind == .regular }.count)
        let read = try PackageScan.scan(copy, useManifest: false).snapshot
        #expect(scan.snapshot.rootHash == read.rootHash)
        #expect(scan.snapshot.entries.map(Scanned.init) == read.entries.map(Scanned.init))
    }
}
