import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// `pkgtool sync`, `conflicts`, `resolve` and `log` of a merge, as processes against a real
/// SeaweedFS (issue 26): two devices, one package.
@Suite("Sync commands") struct SyncCommandTests {
    /// Device A pushes a package with the command line, device B pulls it.
    static func twoDevices(_ fixture: RemoteFixture) throws -> (a: String, b: String, deviceA: PkgtoolProcess, deviceB: PkgtoolProcess) {
        let deviceA = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let deviceB = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        let a = try fixture.makePackage("device-a", pages: 6, mediaSize: 5000)
        let pushed = try deviceA.run("push", a, fixture.location.description)
        #expect(pushed.status == 0, "\(pushed.errors)")
        let b = fixture.path("device-b")
        let pulled = try deviceB.run("pull", fixture.location.description, b)
        #expect(pulled.status == 0, "\(pulled.errors)")
        return (a, b, deviceA, deviceB)
    }

    static func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test func disjointEditsSyncOnBothAndTheMergeHasTwoParents() throws {
        let fixture = try RemoteFixture("cli-sync-disjoint")
        let (a, b, deviceA, deviceB) = try Self.twoDevices(fixture)
        let remote = fixture.location.description
        try Files.write(a + "/pages/a/page0.json", "edited on a\n")
        try Files.write(b + "/pages/b/page1.json", "edited on b\n")

        let first = try deviceA.run("sync", a)
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.hasPrefix("pushed \(a) to \(remote) as version 2 ("), "\(first.output)")
        let second = try deviceB.run("sync", "--json", b)
        #expect(second.status == 0, "\(second.errors)")
        let report = try #require(try Self.json(second.output) as? [String: Any])
        #expect(report["action"] as? String == "merged")
        #expect((report["conflicts"] as? [Any])?.isEmpty == true)
        let version = try #require(report["version"] as? [String: Any])
        #expect(version["sequence"] as? Int == 3)
        let third = try deviceA.run("sync", a)
        #expect(third.status == 0, "\(third.errors)")
        #expect(third.output.hasPrefix("pulled version 3 ("), "\(third.output)")
        for package in [a, b] {
            #expect(try Files.read(package + "/pages/a/page0.json") == Array("edited on a\n".utf8))
            #expect(try Files.read(package + "/pages/b/page1.json") == Array("edited on b\n".utf8))
        }
        #expect(try RemoteFixture.rootHash(a) == RemoteFixture.rootHash(b))
        let still = try deviceB.run("sync", b)
        #expect(still.status == 0 && still.output.hasPrefix("\(b) is in sync with \(remote) at version 3"), "\(still.output)")

        // The merge names both parents: version 2 (the head it went on) and version 1 (what
        // B's edit was based on); log shows both, in text and JSON.
        let versions = try PackageRemote.log(fixture.location, options: fixture.options())
        #expect(versions.map(\.sequence) == [3, 2, 1])
        #expect(versions[0].parent == versions[1].id)
        #expect(versions[0].secondParent == versions[2].id)
        #expect(versions[1].secondParent == nil && versions[2].secondParent == nil)
        let log = try deviceA.run("log", "--json", remote)
        let listed = try #require(try Self.json(log.output) as? [[String: Any]])
        #expect(listed[0]["parent"] as? String == versions[1].id.description)
        #expect(listed[0]["second_parent"] as? String == versions[2].id.description)
        #expect(listed[1]["second_parent"] is NSNull)
        let text = try deviceA.run("log", remote)
        let lines = text.output.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[1].contains("  \(versions[1].shortID)+\(versions[2].shortID)  "), "\(text.output)")
        // Past the head record's history, the manifest's header says the same.
        let store = RemoteStore(location: fixture.location, options: fixture.options(device: "fresh"))
        #expect(try store.summary(versions[0].id, store.connection()) == versions[0])
    }

    @Test func theSamePageEditedOnBothIsListedUntilResolved() throws {
        let fixture = try RemoteFixture("cli-sync-conflict")
        let (a, b, deviceA, deviceB) = try Self.twoDevices(fixture)
        let page = "pages/a/page2.json"
        try Files.write(a + "/" + page, "page from a\n")
        try Files.write(b + "/" + page, "page from b\n")
        #expect(try deviceA.run("sync", a).status == 0)

        let merged = try deviceB.run("sync", b)
        #expect(merged.status == 1, "\(merged.errors)")
        #expect(merged.errors.isEmpty, "\(merged.errors)")
        let otherHash = ContentHash.of(Array("page from a\n".utf8))
        #expect(merged.output.contains("1 new conflict version"), "\(merged.output)")
        #expect(merged.output.contains("\(b) lists 1 conflict version"), "\(merged.output)")
        #expect(merged.output.contains("other\tfile\t\(otherHash)\t"), "\(merged.output)")
        #expect(merged.output.hasSuffix("\t\(page)\n"), "\(merged.output)")
        #expect(try Files.read(b + "/" + page) == Array("page from b\n".utf8))

        // conflicts --json: path, side, the remote version it came from, its hash as
        // `pkgtool hash` prints it; the text form one tab-separated line.
        let listed = try deviceB.run("conflicts", "--json", b)
        #expect(listed.status == 0, "\(listed.errors)")
        let versions = try #require(try Self.json(listed.output) as? [[String: Any]])
        #expect(versions.count == 1)
        let head = try PackageRemote.log(fixture.location, options: fixture.options())[0]
        #expect(versions.first?["path"] as? String == page)
        #expect(versions.first?["side"] as? String == "other")
        #expect(versions.first?["kind"] as? String == "file")
        #expect(versions.first?["hash"] as? String == otherHash.description)
        #expect(versions.first?["version"] as? String == head.parent?.description)
        let hashed = try deviceB.run("hash", a + "/" + page)
        #expect(hashed.output.hasPrefix("\(otherHash)  "))
        let text = try deviceB.run("conflicts", b)
        #expect(text.status == 0)
        #expect(text.output.split(separator: "\n").count == 1)
        #expect(text.output.hasPrefix("other\tfile\t\(otherHash)\t\(head.parent!.description.prefix(12))\t"), "\(text.output)")

        // Bad requests: one line each.
        let unknown = try deviceB.run("resolve", "--keep", "both", b, "pages/none.json")
        #expect(unknown.status == 1)
        #expect(unknown.errors == "pkgtool: '\(b)' lists no conflict at 'pages/none.json'\n", "\(unknown.errors)")
        let badKeep = try deviceB.run("resolve", "--keep", "theirs", b, page)
        #expect(badKeep.status == 2)
        #expect(badKeep.errors.hasPrefix("pkgtool: --keep expects one of local, other, both, not 'theirs'\n"))

        // --keep both: the other version beside the page, under a conflict-copy name.
        let resolved = try deviceB.run("resolve", b, page, "--keep", "both")
        #expect(resolved.status == 0, "\(resolved.errors)")
        let names = try Trees.names(b + "/pages/a")
        let copies = names.filter { $0.hasPrefix("page2 (conflict ") && $0.hasSuffix(").json") }
        #expect(copies.count == 1, "\(names)")
        let copy = try #require(copies.first)
        #expect(try Files.read(b + "/pages/a/" + copy) == Array("page from a\n".utf8))
        #expect(resolved.output == "resolved \(page): kept both; the other is pages/a/\(copy) (1 conflict version settled)\n")
        #expect(try deviceB.run("conflicts", b).output.isEmpty)
        #expect(try deviceB.run("conflicts", "--json", b).output == "[]\n")
        // The conflict's bytes are gone from .pkgtool/conflicts with it.
        #expect(try FileSystem.statusIfExists(ConflictStore.contentPath(b, hash: otherHash, size: 12)) == nil)

        let synced = try deviceB.run("sync", b)
        #expect(synced.status == 0, "\(synced.errors)")
        #expect(synced.output.hasPrefix("pushed \(b) to "), "\(synced.output)")
        #expect(try deviceA.run("sync", a).status == 0)
        #expect(try Files.read(a + "/pages/a/" + copy) == Array("page from a\n".utf8))
        #expect(try RemoteFixture.rootHash(a) == RemoteFixture.rootHash(b))
    }

    /// A renamed package syncs with no URL, through the endpoint it remembers: the
    /// environment names none.
    @Test func aRenamedPackageSyncsWithoutAURL() throws {
        let fixture = try RemoteFixture("cli-sync-renamed")
        var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 0)
        let pushed = try device.run("push", "--endpoint", fixture.server.endpoint, source, fixture.location.description)
        #expect(pushed.status == 0, "\(pushed.errors)")
        let renamed = fixture.path("renamed.pkg")
        #expect(rename(source, renamed) == 0)
        device.extraEnvironment = ["AWS_ENDPOINT_URL": ""]
        try Files.write(renamed + "/metadata.json", "renamed\n")
        let synced = try device.run("sync", renamed)
        #expect(synced.status == 0, "\(synced.errors)")
        #expect(synced.output.hasPrefix("pushed \(renamed) to \(fixture.location) as version 2"), "\(synced.output)")
        let pulled = try device.run("pull", renamed)
        #expect(pulled.status == 0, "\(pulled.errors)")
        #expect(pulled.output.contains("holds version 2"), "\(pulled.output)")
        // Without a URL and nothing remembered: a usage error.
        let loose = try fixture.makePackage("loose", pages: 1, mediaSize: 0)
        let refused = try device.run("sync", loose)
        #expect(refused.status == 2)
        #expect(refused.errors.hasPrefix("pkgtool: '\(loose)' remembers no remote"), "\(refused.errors)")
    }

    /// The library's sync without a URL reaches the endpoint the package remembers, unless
    /// the options name one explicitly.
    @Test func theLibrarysSyncUsesTheRememberedEndpoint() throws {
        let fixture = try RemoteFixture("sync-endpoint")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 0)
        var explicit = fixture.options()
        explicit.explicitEndpoint = explicit.configuration.endpoint
        _ = try PackageRemote.push(source, to: fixture.location, options: explicit)
        try Files.write(source + "/metadata.json", "second\n")
        var elsewhere = fixture.options(attempts: 1)
        elsewhere.configuration.endpoint = "http://127.0.0.1:9"
        let synced = try PackageRemote.sync(source, with: nil, options: elsewhere)
        #expect(synced.action == .pushed && synced.version.sequence == 2)
        // Named explicitly, the options' endpoint wins (and cannot be reached here).
        try Files.write(source + "/metadata.json", "third\n")
        elsewhere.explicitEndpoint = "http://127.0.0.1:9"
        #expect(throws: RemoteError.self) { try PackageRemote.sync(source, with: nil, options: elsewhere) }
    }

    /// Conflict bytes a crash left unlisted (kept before the save that would have listed
    /// them) are removed when the package next syncs; listed ones stay.
    @Test func aSyncRemovesConflictBytesACrashLeftUnlisted() throws {
        let fixture = try RemoteFixture("cli-sync-sweep")
        let (a, b, deviceA, deviceB) = try Self.twoDevices(fixture)
        try Files.write(a + "/metadata.json", "from a\n")
        try Files.write(b + "/metadata.json", "from b\n")
        #expect(try deviceA.run("sync", a).status == 0)
        #expect(try deviceB.run("sync", b).status == 1)
        let listed = try #require(try ConflictResolver.conflicts(of: b).first)
        let listedPath = ConflictStore.contentPath(b, hash: listed.hash, size: listed.size)
        // What a merge killed between keeping a content and committing its record leaves.
        let orphan = Array("kept, never listed\n".utf8)
        try ConflictStore.keepContent(
            from: try fixture.writeTemporary("orphan", orphan), hash: ContentHash.of(orphan), size: Int64(orphan.count),
            packagePath: b, durability: .none)
        let orphanPath = ConflictStore.contentPath(b, hash: ContentHash.of(orphan), size: Int64(orphan.count))
        #expect(try FileSystem.statusIfExists(orphanPath) != nil)
        #expect(ConflictStore.hasUnlisted(packagePath: b))

        let synced = try deviceB.run("sync", b)
        #expect(synced.status == 1, "\(synced.errors)")  // the listed conflict stays
        #expect(try FileSystem.statusIfExists(orphanPath) == nil)
        #expect(try Files.read(listedPath) == Array("from a\n".utf8))
        #expect(!ConflictStore.hasUnlisted(packagePath: b))
        // No staging area is left beside the package for it.
        #expect(try FileSystem.statusIfExists(fixture.path(".device-b.pkgtool-pull")) == nil)

        // A record that cannot be read leaves every content where it is.
        try ConflictStore.keepContent(
            from: try fixture.writeTemporary("orphan", orphan), hash: ContentHash.of(orphan), size: Int64(orphan.count),
            packagePath: b, durability: .none)
        try Files.write(b + "/.pkgtool/conflicts/list", "pkgtool-conflicts 9\n")
        #expect(!ConflictStore.hasUnlisted(packagePath: b))
        #expect(try ConflictStore.sweep(packagePath: b, durability: .none) == 0)
        #expect(try FileSystem.statusIfExists(orphanPath) != nil)
        let damaged = try deviceB.run("conflicts", b)
        #expect(damaged.status == 1)
        #expect(damaged.errors.contains("is not a conflicts record"), "\(damaged.errors)")
    }
}

extension RemoteFixture {
    /// Writes `bytes` to a file of the fixture's directory; its path.
    func writeTemporary(_ name: String, _ bytes: [UInt8]) throws -> String {
        let file = path(name)
        try Files.write(file, bytes)
        return file
    }
}
