import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// Names are bytes: a version whose tree is not one (a link standing where later entries
/// need a folder) never makes the engine write outside DEST, whatever let it through; and
/// canonically-equivalent twins (`é` precomposed and decomposed) are two entries everywhere.
@Suite("Names are bytes (remote versions and the engine)")
struct ByteNameTests {
    static let precomposed = "\u{e9}"
    static let decomposed = "e\u{301}"

    func entry(_ path: String, _ kind: FileKind, target: String? = nil, bytes: [UInt8] = []) -> RemoteEntry {
        RemoteEntry(
            path: path, kind: kind, permissions: kind == .directory ? 0o755 : 0o644,
            size: kind == .symbolicLink ? Int64(target!.utf8.count) : (kind == .regular ? Int64(bytes.count) : 0),
            modificationTime: 1_700_000_000_000_000_000,
            contentHash: kind == .symbolicLink
                ? ContentHash.of(Array(target!.utf8)) : (kind == .regular ? ContentHash.of(bytes) : ContentHash(high: 0, low: 0)),
            linkTarget: target, blobs: [])
    }

    /// Saves `entries` (in the given order, trusted as a decoder bug might) into `package`
    /// the way a pull does: through `RemoteVersionSource` and the engine.
    func saveAsPull(_ entries: [RemoteEntry], into package: String, strategy: SaveStrategy) throws {
        let manifest = VersionManifest(
            sequence: 1, time: 0, parent: nil, rootHash: ContentHash(high: 0, low: 0), entries: entries)
        var contents = PulledContents(readyDirectory: "/nonexistent/")
        for entry in entries where entry.kind == .regular {
            contents.origins[FileKey(entry.contentHash, entry.size)] = .bytes([UInt8](repeating: UInt8(ascii: "x"), count: Int(entry.size)))
        }
        let source = RemoteVersionSource(manifest, contents: contents, rootPermissions: 0o755)
        _ = try PackageSaver.save(
            source, to: package, options: SaveOptions(strategy: strategy, durability: .none, trustManifest: false))
    }

    @Test(arguments: [SaveStrategy.full, .atomic, .journaled])
    func theEngineNeverCreatesBeneathALink(strategy: SaveStrategy) throws {
        let directory = try TemporaryDirectory("beneath-link")
        let outside = directory.url("outside")
        try Files.makeDirectory(outside)
        let package = directory.url("doc")
        let draft = directory.url("draft")
        try Files.makeDirectory(draft)
        try Files.write(draft + "/keep.txt", "kept")
        _ = try PackageSaver.save(DirectorySource(draft), to: package, options: SaveOptions(durability: .none))
        let before = try PackageScan.scan(package, workers: 1).snapshot.rootHash

        // The link sorts before the entries that lie beneath it, as in the attack.
        let hostile = [
            entry("a", .symbolicLink, target: outside),
            entry("a/.ssh", .directory),
            entry("a/.ssh/authorized_keys", .regular, bytes: Array("key".utf8)),
            entry("keep.txt", .regular, bytes: Array("kept".utf8)),
        ]
        #expect(throws: (any Error).self) { try saveAsPull(hostile, into: package, strategy: strategy) }
        #expect(try Trees.names(outside).isEmpty, "nothing may be created through the link")
        #expect(try PackageScan.scan(package, workers: 1).snapshot.rootHash == before, "the package is unchanged")
        // And the next save works.
        try Files.write(draft + "/keep.txt", "kept again")
        _ = try PackageSaver.save(
            DirectorySource(draft), to: package, options: SaveOptions(strategy: strategy, durability: .none))
        #expect(try Files.read(package + "/keep.txt") == Array("kept again".utf8))
    }

    @Test(arguments: [SaveStrategy.full, .atomic, .journaled])
    func twinFoldersAndFilesArriveAsTwo(strategy: SaveStrategy) throws {
        let directory = try TemporaryDirectory("twins-pull")
        let package = directory.url("doc")
        let draft = directory.url("draft")
        try Files.makeDirectory(draft)
        _ = try PackageSaver.save(DirectorySource(draft), to: package, options: SaveOptions(durability: .none))
        let entries = [
            entry(Self.decomposed, .directory), entry(Self.decomposed + "/f", .regular, bytes: Array("xx".utf8)),
            entry(Self.precomposed, .directory), entry(Self.precomposed + "/f", .regular, bytes: Array("xxx".utf8)),
            entry("n" + Self.decomposed, .regular, bytes: Array("x".utf8)),
            entry("n" + Self.precomposed, .regular, bytes: Array("xxxx".utf8)),
        ].sorted { PathOrder.pathLess($0.path, $1.path) }
        try saveAsPull(entries, into: package, strategy: strategy)
        #expect(try Files.read(package + "/" + Self.decomposed + "/f").count == 2)
        #expect(try Files.read(package + "/" + Self.precomposed + "/f").count == 3)
        #expect(try Files.read(package + "/n" + Self.decomposed).count == 1)
        #expect(try Files.read(package + "/n" + Self.precomposed).count == 4)
        let names = try Trees.names(package).map { Array($0.utf8) }
        #expect(names.count == Set(names).count)
        // The manifest describes both twins: a verify-style rescan agrees with it.
        let scan = try PackageScan.scan(package, workers: 1)
        #expect(scan.manifest?.snapshot.rootHash == scan.snapshot.rootHash)
        #expect(scan.snapshot.entries.count == 6)
    }

    /// The outside audit's attack, end to end against a real store: a version listing a
    /// folder `e\u{301}`, a link `é` to a folder outside, then `é/.ssh/authorized_keys`.
    /// `pkgtool pull` refuses it in one line, into a new DEST and into a synced one; nothing
    /// is created outside, DEST stays as it was, and the next pull works.
    @Test func aCraftedVersionNeverWritesOutsideDest() throws {
        let fixture = try RemoteFixture("twin-attack")
        let outside = fixture.path("home-of-someone")
        try Files.makeDirectory(outside)
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 1 << 16)
        let first = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let synced = fixture.path("synced")
        _ = try PackageRemote.pull(fixture.location, to: synced, options: fixture.options(device: "b"))
        let syncedHash = try RemoteFixture.rootHash(synced)

        for target in [outside, "../../home-of-someone"] {
            var manifest = VersionManifest(
                sequence: 2, time: 1, parent: first.version.id, rootHash: ContentHash(high: 0, low: 0),
                entries: [
                    entry(Self.decomposed, .directory),
                    entry(Self.precomposed, .symbolicLink, target: target),
                    entry(Self.precomposed + "/.ssh", .directory),
                    entry(Self.precomposed + "/.ssh/authorized_keys", .regular),
                ])
            // What an attacker's own tool computes for this (malformed) tree.
            manifest.rootHash = manifest.snapshot().rootHash
            try fixture.publish(manifest, history: [first.version])

            let cli = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-cli"))
            let fresh = fixture.path("fresh")
            let refused = try cli.run("pull", fixture.location.description, fresh)
            #expect(refused.status == 1, "\(refused.errors)")
            #expect(refused.errors.contains("has no parent directory entry"), "\(refused.errors)")
            #expect(refused.errors.split(separator: "\n").count == 1, "one line: \(refused.errors)")
            #expect(try FileSystem.statusIfExists(fresh) == nil)
            let into = try cli.run("pull", fixture.location.description, synced)
            #expect(into.status == 1, "\(into.errors)")
            #expect(try RemoteFixture.rootHash(synced) == syncedHash)
            #expect(try Trees.names(outside).isEmpty, "nothing may be created outside DEST")

            // The store repaired, pulls work again.
            try fixture.restoreHead(first.version)
            let again = try cli.run("pull", fixture.location.description, synced)
            #expect(again.status == 0, "\(again.errors)")
        }
    }

    /// A push's plan names its files as `RelativePath`s and tells a replaced path from a new
    /// one by bytes: a file `é` next to the remote's `e\u{301}` is new, not a replacement.
    @Test func aPushPlanTellsTwinNamesApart() throws {
        let fixture = try RemoteFixture("twin-plan")
        let package = fixture.path("twins")
        try Files.makeDirectory(package)
        try Files.write(package + "/" + Self.decomposed, "first")
        _ = try PackageRemote.push(package, to: fixture.location, options: fixture.options())
        try Files.write(package + "/" + Self.precomposed, "twin")
        try Files.write(package + "/" + Self.decomposed, "changed")
        let plan = try PackageRemote.planPush(package, to: fixture.location, options: fixture.options())
        let files = Dictionary(uniqueKeysWithValues: plan.files.map { ($0.path, $0.replaces) })
        #expect(files.count == 2)
        #expect(files[RelativePath(stringLiteral: Self.decomposed)] == true, "the remote holds this very name")
        #expect(files[RelativePath(stringLiteral: Self.precomposed)] == false, "a twin of a held name is new")
    }

    /// The staging area lies beside DEST even when DEST's name starts with a combining mark:
    /// the "/" before it is found as a byte (as a character, "/\u{301}" is one).
    @Test func theStagingAreaOfANameStartingWithAMarkLiesBesideIt() throws {
        let directory = try TemporaryDirectory("mark-dest")
        let destination = directory.url("\u{301}dest")
        let expected = directory.url(".\u{301}dest.pkgtool-pull")
        #expect(Array(PullStaging.path(of: destination).utf8) == Array(expected.utf8))
        #expect(Array(PullStaging.path(of: destination + "//").utf8) == Array(expected.utf8))
        #expect(PullStaging.split("/").parent == "/" && PullStaging.split("dest").parent == ".")
        let staging = try PullStaging(destination: destination)
        staging.unlock()
        #expect(try FileSystem.statusIfExists(expected)?.kind == .directory)
    }

    /// A pull's leftover blobs are kept by the very bytes of a kept digest's name: another
    /// spelling of it (upper case) or a name no digest gives is removed.
    @Test func leftoverBlobsAreKeptOnlyByTheirVeryName() throws {
        let directory = try TemporaryDirectory("kept-blobs")
        let staging = try PullStaging(destination: directory.url("dest"))
        defer { staging.unlock() }
        let kept = SHA256Digest.of([1])
        let dropped = SHA256Digest.of([2])
        for name in [kept.description, kept.description.uppercased(), dropped.description, kept.description + "\u{301}"] {
            try Files.write(staging.path + "/blobs/" + name, "b")
        }
        staging.removeUnneeded(keepingContents: { _ in true }, blobs: [kept])
        #expect(try Trees.names(staging.path + "/blobs").map { Array($0.utf8) } == [Array(kept.description.utf8)])
    }
}
