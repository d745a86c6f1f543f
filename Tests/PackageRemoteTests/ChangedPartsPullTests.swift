import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// A pull into a DEST that holds an earlier version saves only where the two differ: DEST's
/// tree and the version's are compared as the version is decoded, and the engine is handed
/// the differing parts (a save that costs the change, and never both trees at once). What
/// differs includes what the trees' hashes do not see: permission bits.
@Suite("A pull saves where DEST and the version differ")
struct ChangedPartsPullTests {
    @Test func everyKindOfChangeReachesDEST() throws {
        let fixture = try RemoteFixture("parts")
        let source = try fixture.makePackage("source", pages: 6, mediaSize: 1 << 16)
        _ = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let dest = fixture.path("dest")
        _ = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))

        // Behind pkgtool's back in the source, then pushed: an edit, an addition, a
        // removal, a file that becomes a folder, new bits on a file and on a folder.
        try Files.write(source + "/pages/a/page0.json", "edited")
        try Files.write(source + "/pages/a/added.json", "added")
        try FileSystem.remove(source + "/pages/b/page1.json")
        try FileSystem.remove(source + "/metadata.json")
        try Files.makeDirectory(source + "/metadata.json")
        try Files.write(source + "/metadata.json/inside.txt", "now a folder")
        try FileSystem.setPermissions(source + "/pages/a/page2.json", 0o600)
        try FileSystem.setPermissions(source + "/pages/b", 0o700)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())

        let pulled = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))
        #expect(pulled.version == pushed.version)
        let statistics = try #require(pulled.save)
        #expect(statistics.rootHash == pushed.version.rootHash)
        #expect(statistics.permissionsChanged == 2)
        #expect(try Files.read(dest + "/pages/a/page0.json") == Array("edited".utf8))
        #expect(try Files.read(dest + "/pages/a/added.json") == Array("added".utf8))
        #expect(try FileSystem.statusIfExists(dest + "/pages/b/page1.json") == nil)
        #expect(try Files.read(dest + "/metadata.json/inside.txt") == Array("now a folder".utf8))
        #expect(try FileSystem.status(dest + "/pages/a/page2.json").permissions == 0o600)
        #expect(try FileSystem.status(dest + "/pages/b").permissions == 0o700)

        // DEST's manifest describes it (the delta the save appended), and a scan agrees.
        let scanned = try PackageScan.scan(dest, workers: 1)
        #expect(scanned.snapshot.rootHash == pushed.version.rootHash)
        #expect(scanned.manifest?.snapshot.rootHash == pushed.version.rootHash)
        #expect(
            scanned.manifest.map { manifest in
                zip(manifest.snapshot.entries, scanned.snapshot.entries).allSatisfy {
                    SnapshotEntry.comparePaths($0, $1) == 0 && $0.permissions == $1.permissions && $0.hash == $1.hash
                }
            } == true)
        #expect(scanned.manifest?.snapshot.entries.count == scanned.snapshot.entries.count)
    }

    @Test func thePartsHoldOnlyWhatDiffersAndItsFolders() throws {
        let fixture = try RemoteFixture("parts-only")
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 1 << 16)
        _ = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let dest = fixture.path("dest")
        _ = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))
        try Files.write(source + "/pages/a/page0.json", "edited")
        try FileSystem.setPermissions(source + "/run.sh", 0o700)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())

        let store = RemoteStore(location: fixture.location, options: fixture.options(device: "b"))
        let scan = try PackageScan.scan(dest, workers: 1)
        let manifest = try #require(scan.manifest)
        let state = try #require(TreePackageState.taken(packagePath: dest, head: manifest.head))
        let decoded = try PullOperation.decodeVersion(
            pushed.version, current: scan.snapshot, manifest: state, store: store, connection: store.connection(),
            options: fixture.options(device: "b"))
        let parts = try #require(decoded.parts)
        #expect(decoded.wanted.files.map(\.key) == [FileKey(ContentHash.of(Array("edited".utf8)), 6)])
        let expected = ["pages", "pages/a", "pages/a/page0.json", "run.sh"]
        #expect(parts.new.map(\.path) == expected)
        #expect(parts.current.map(\.path) == expected)
        #expect(parts.new.last?.permissions == 0o700 && parts.current.last?.permissions == 0o755)
        #expect(parts.newRootHash == pushed.version.rootHash)
        #expect(parts.newEntryCount == pushed.version.entryCount)
        #expect(state.currentHead(packagePath: dest) == manifest.head)

        // A save into DEST meanwhile: its manifest is no longer the one the parts describe.
        let other = fixture.path("other")
        try Files.makeDirectory(other)
        try Files.write(other + "/note.txt", "saved meanwhile")
        _ = try PackageSaver.save(DirectorySource(other), to: dest, options: SaveOptions(durability: .none))
        #expect(state.currentHead(packagePath: dest) == nil)
    }
}
