import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// A pull keeps nothing per staged content (a million small files would cost 40 MB of
/// stamps): the engine moves a ready file into place unread only while its change time
/// says it has not changed since every content was checked, and copies and hashes it
/// otherwise.
@Suite("Staged contents")
struct StagedContentTests {
    /// A ready file of `bytes` written into `staging`, as the transfers write one.
    func ready(_ bytes: String, in staging: PullStaging) throws -> FileKey {
        let content = Array(bytes.utf8)
        let key = FileKey(ContentHash.of(content), Int64(content.count))
        let file = try staging.openReadyForWriting(key)
        try file.write(contentsOf: content)
        return key
    }

    @Test func aReadyFileUnchangedSinceTheCheckIsMovedInUnread() throws {
        let directory = try TemporaryDirectory("staged-adopt")
        let staging = try PullStaging(destination: directory.url("dest"))
        defer { staging.unlock() }
        let key = try ready("page one", in: staging)
        var contents = PulledContents(readyDirectory: staging.readyDirectory)
        contents.checkedBefore = try staging.markChecked()

        let path = staging.readyDirectory + PullStaging.name(key)
        let status = try FileSystem.status(path)
        // The mark is made after the check, on the same clock as the file's change time.
        #expect(status.changeTime <= contents.checkedBefore)
        guard case .adopt(let adopted, let verified)? = contents.origin(key) else {
            Issue.record("an unchanged ready file is adopted, got \(String(describing: contents.origin(key)))")
            return
        }
        #expect(PathOrder.sameBytes(adopted, path))
        #expect(verified.inode == status.inode && verified.size == key.size)
    }

    @Test func aReadyFileChangedAfterTheCheckIsCopiedAndHashed() throws {
        let directory = try TemporaryDirectory("staged-changed")
        let staging = try PullStaging(destination: directory.url("dest"))
        defer { staging.unlock() }
        let key = try ready("page two", in: staging)
        let path = staging.readyDirectory + PullStaging.name(key)
        var contents = PulledContents(readyDirectory: staging.readyDirectory)
        // Its change time past the mark: changed after the check, whatever the bytes now.
        contents.checkedBefore = try FileSystem.status(path).changeTime - 1
        guard case .file(let copied, let seen)? = contents.origin(key) else {
            Issue.record("a changed ready file is read, got \(String(describing: contents.origin(key)))")
            return
        }
        #expect(PathOrder.sameBytes(copied, path))
        #expect(seen?.size == key.size)

        // And the engine refuses its bytes when they are not the content's.
        try Files.write(path, "page 2wo")
        let package = directory.url("package")
        let entry = SnapshotEntry(path: "page.txt", kind: .regular, permissions: 0o644, size: key.size, hash: key.hash)
        let tree = TreeSnapshot.assemble([entry])
        let source = RemoteVersionSource(tree: tree, contents: contents, rootPermissions: 0o755)
        #expect(throws: SaveRefusal.self) {
            _ = try PackageSaver.save(source, to: package, options: SaveOptions(durability: .none, trustManifest: false))
        }
        #expect(try FileSystem.statusIfExists(package) == nil, "nothing published")
    }

    @Test func aContentSeveralPathsTakeIsCopiedToEach() throws {
        let directory = try TemporaryDirectory("staged-shared")
        let staging = try PullStaging(destination: directory.url("dest"))
        defer { staging.unlock() }
        let key = try ready("shared", in: staging)
        var contents = PulledContents(readyDirectory: staging.readyDirectory, shared: [key])
        contents.checkedBefore = try staging.markChecked()
        guard case .file? = contents.origin(key) else {
            Issue.record("a shared content is copied, got \(String(describing: contents.origin(key)))")
            return
        }
        let package = directory.url("package")
        let entries = ["a.txt", "b.txt"].map {
            SnapshotEntry(path: $0, kind: .regular, permissions: 0o644, size: key.size, hash: key.hash)
        }
        let source = RemoteVersionSource(tree: TreeSnapshot.assemble(entries), contents: contents, rootPermissions: 0o755)
        _ = try PackageSaver.save(source, to: package, options: SaveOptions(durability: .none, trustManifest: false))
        #expect(try Files.read(package + "/a.txt") == Array("shared".utf8))
        #expect(try Files.read(package + "/b.txt") == Array("shared".utf8))
        #expect(try FileSystem.statusIfExists(staging.readyDirectory + PullStaging.name(key)) != nil, "the staged file stays")
    }

    /// A pull names only what DEST lacks: a strategy that rewrites every file takes the
    /// rest from DEST itself.
    @Test(arguments: [SaveStrategy.full, .atomic, .journaled])
    func whatDESTHoldsAtItsPathComesFromDEST(strategy: SaveStrategy) throws {
        let directory = try TemporaryDirectory("staged-held")
        let package = directory.url("package")
        let draft = directory.url("draft")
        try Files.makeDirectory(draft)
        try Files.write(draft + "/kept.txt", "kept")
        _ = try PackageSaver.save(DirectorySource(draft), to: package, options: SaveOptions(durability: .none))
        let staging = try PullStaging(destination: package)
        defer { staging.unlock() }
        let key = try ready("new page", in: staging)
        var contents = PulledContents(readyDirectory: staging.readyDirectory)
        contents.checkedBefore = try staging.markChecked()

        let kept = Array("kept".utf8)
        let entries = [
            SnapshotEntry(path: "kept.txt", kind: .regular, permissions: 0o600, size: 4, hash: ContentHash.of(kept)),
            SnapshotEntry(path: "new.txt", kind: .regular, permissions: 0o644, size: key.size, hash: key.hash),
        ]
        let source = RemoteVersionSource(tree: TreeSnapshot.assemble(entries), contents: contents, rootPermissions: 0o755)
        _ = try PackageSaver.save(
            source, to: package, options: SaveOptions(strategy: strategy, durability: .none, trustManifest: false))
        #expect(try Files.read(package + "/kept.txt") == kept)
        #expect(try Files.read(package + "/new.txt") == Array("new page".utf8))
        #expect(try FileSystem.status(package + "/kept.txt").permissions == 0o600)
    }

    @Test func aContentThePullDidNotGatherHasNoOrigin() throws {
        let directory = try TemporaryDirectory("staged-none")
        let staging = try PullStaging(destination: directory.url("dest"))
        defer { staging.unlock() }
        var contents = PulledContents(readyDirectory: staging.readyDirectory)
        contents.checkedBefore = try staging.markChecked()
        #expect(contents.origin(FileKey(ContentHash.of(Array("absent".utf8)), 6)) == nil)
    }
}
