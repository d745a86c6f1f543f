import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// The sync state a package carries in `.pkgtool/sync` (Specs/remote.md, "Local state"):
/// it moves with the package, is committed with a pull's save, is never discarded without
/// `--force`, and never lets the latest version take a package back in time.
@Suite("Sync state") struct SyncStateTests {
    static let version = SHA256Digest.of(Array("v".utf8))
    static let root = ContentHash(high: 0x0123_4567_89ab_cdef, low: 0xfedc_ba98_7654_3210)

    static func state(endpoint: String? = nil) -> SyncState {
        SyncState(
            location: RemoteLocation(bucket: "notes", prefix: "docs/a b"), endpoint: endpoint, version: version,
            sequence: 12, rootHash: root)
    }

    @Test func aRecordRoundTripsAndNothingElseDecodes() throws {
        for state in [Self.state(), Self.state(endpoint: "http://127.0.0.1:8333")] {
            #expect(try SyncState.decode(state.encoded()).get() == state)
        }
        let good = String(decoding: Self.state().encoded(), as: UTF8.self)
        let bad: [String] = [
            "", "pkgtool-sync 1\n", String(good.dropLast()), good + "extra 1\n", good.replacingOccurrences(of: "pkgtool-sync 1", with: "pkgtool-sync 2"),
            good.replacingOccurrences(of: "sequence 12", with: "sequence 012"),
            good.replacingOccurrences(of: "sequence 12", with: "sequence -1"),
            good.replacingOccurrences(of: "sequence 12", with: "sequence 99999999999999999999"),
            good.replacingOccurrences(of: "remote s3://notes/docs/a b", with: "remote s3://notes/docs/a b/"),
            good.replacingOccurrences(of: "remote s3://notes/docs/a b", with: "remote s3://notes/docs/../x"),
            good.replacingOccurrences(of: "version ", with: "version A"),
            good.replacingOccurrences(of: "root ", with: "root 0"),
            good.replacingOccurrences(of: "remote ", with: "endpoint ftp://x\nremote "),
            good.replacingOccurrences(of: "\n", with: "\r\n"),
        ]
        for text in bad {
            #expect(throws: SyncStateRefusal.self, "\(text.debugDescription)") { try SyncState.decode(Array(text.utf8)).get() }
        }
        #expect(throws: SyncStateRefusal.self) { try SyncState.decode(Array(good.utf8) + [0xFF, 0x0A]).get() }
    }

    @Test func aRecordNamesItsRemoteWhateverTheEndpointUnlessBothAreExplicit() {
        let location = RemoteLocation(bucket: "notes", prefix: "docs/a b")
        #expect(Self.state().names(location, endpoint: nil))
        #expect(Self.state().names(location, endpoint: "http://a:1"))
        #expect(Self.state(endpoint: "http://a:1").names(location, endpoint: nil))
        #expect(!Self.state(endpoint: "http://a:1").names(location, endpoint: "http://b:1"))
        #expect(!Self.state().names(RemoteLocation(bucket: "notes", prefix: "docs/a"), endpoint: nil))
    }

    /// The outside testers' reproduction: a renamed package pushes, and a pull refuses to
    /// discard an edit made after the push; all without giving the URL again.
    @Test func aRenamedPackageKeepsItsBaseAndItsRemote() throws {
        let fixture = try RemoteFixture("renamed")
        let remote = fixture.location.description
        let a = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let b = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 1000)
        #expect(try a.run("push", source, remote).status == 0)
        let doc = fixture.path("doc")
        #expect(try b.run("pull", remote, doc).status == 0)

        let renamed = fixture.path("renamed")
        #expect(rename(doc, renamed) == 0)
        try Files.write(renamed + "/metadata.json", "x\n")
        let pushed = try b.run("push", renamed)
        #expect(pushed.status == 0, "\(pushed.errors)")
        #expect(pushed.output.hasPrefix("pushed \(renamed) to \(remote) as version 2 ("), "\(pushed.output)")

        try Files.write(renamed + "/metadata.json", "y\n")
        let refused = try b.run("pull", renamed)
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("pkgtool: '\(renamed)' has changes not pushed since it was synced with version 2 ("), "\(refused.errors)")
        #expect(refused.errors.split(separator: "\n").count == 1)
        #expect(try Files.read(renamed + "/metadata.json") == Array("y\n".utf8))
        let forced = try b.run("pull", "--force", renamed)
        #expect(forced.status == 0, "\(forced.errors)")
        #expect(try Files.read(renamed + "/metadata.json") == Array("x\n".utf8))
        // And the URL-less push after the pull is up to date.
        let again = try b.run("push", renamed)
        #expect(again.status == 0 && again.output.contains("is up to date"), "\(again.output)")
    }

    /// A package pushed from `source`, pulled as `doc`, and `doc` copied with `cp -a` as `copy`.
    struct CopiedPull {
        let fixture: RemoteFixture
        let remote: String
        let device: PkgtoolProcess
        let source: String
        let doc: String
        let copy: String

        init(_ name: String) throws {
            fixture = try RemoteFixture(name)
            remote = fixture.location.description
            device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
            source = try fixture.makePackage("source", pages: 4, mediaSize: 1000)
            #expect(try device.run("push", source, remote).status == 0)
            doc = fixture.path("doc")
            #expect(try device.run("pull", remote, doc).status == 0)
            copy = fixture.path("copy")
            let cp = try Process.run(URL(fileURLWithPath: "/bin/cp"), arguments: ["-a", doc, copy])
            cp.waitUntilExit()
            try #require(cp.terminationStatus == 0)
        }
    }

    @Test func aCopyMadeWithCpAPushesAndTheOriginalIsThenBehind() throws {
        let copied = try CopiedPull("copied")
        let (remote, device, doc, copy) = (copied.remote, copied.device, copied.doc, copied.copy)
        try Files.write(copy + "/metadata.json", "copy's\n")
        let pushed = try device.run("push", copy)
        #expect(pushed.status == 0, "\(pushed.errors)")
        // The original is still at version 1: its push is refused, its pull brings it along.
        try Files.write(doc + "/metadata.json", "doc's\n")
        let behind = try device.run("push", doc)
        #expect(behind.status == 1)
        #expect(behind.errors.hasPrefix("pkgtool: the remote moved on: \(remote) is at version 2"), "\(behind.errors)")
    }

    @Test func aPullIntoACopyMadeWithCpABringsItToTheNewVersion() throws {
        // The copy's manifest names the original folder and vouches for none of its files:
        // the pull reads the copy whole, and still brings only what changed.
        let copied = try CopiedPull("pull-into-copy")
        let (device, source, doc, copy) = (copied.device, copied.source, copied.doc, copied.copy)
        try Files.write(source + "/metadata.json", "version 2\n")
        #expect(try device.run("push", source).status == 0)
        let pulled = try device.run("pull", copy)
        #expect(pulled.status == 0, "\(pulled.errors)")
        #expect(try Files.read(copy + "/metadata.json") == Array("version 2\n".utf8))
        #expect(try device.run("diff", source, copy).status == 0)
        #expect(try device.run("verify", copy).status == 0)
        // The original, untouched, is still at version 1 and pulls the same way.
        #expect(try device.run("pull", doc).status == 0)
        #expect(try device.run("diff", copy, doc).status == 0)
    }

    @Test func withoutAURLNothingRememberedIsAUsageError() throws {
        let fixture = try RemoteFixture("nourl")
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        let source = try fixture.makePackage("source", pages: 1, mediaSize: 0)
        let push = try device.run("push", source)
        #expect(push.status == 2)
        #expect(push.errors.hasPrefix("pkgtool: '\(source)' remembers no remote (it was never pushed or pulled): give s3://BUCKET/PREFIX\n"))
        let pull = try device.run("pull", fixture.path("absent"))
        #expect(pull.status == 2)
        #expect(pull.errors.contains("remembers no remote"))
        // A damaged record is ignored with a note, never trusted.
        try Files.makeDirectory(source + "/.pkgtool")
        try Files.write(source + "/.pkgtool/sync", "pkgtool-sync 1\nremote s3://x\n")
        let damaged = try device.run("push", source)
        #expect(damaged.status == 2)
        #expect(damaged.errors.contains("warning: ignored the sync record"), "\(damaged.errors)")
    }

    @Test func anExplicitEndpointIsRemembered() throws {
        let fixture = try RemoteFixture("endpoint")
        var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        let source = try fixture.makePackage("source", pages: 1, mediaSize: 0)
        let pushed = try device.run("push", "--endpoint", fixture.server.endpoint, source, fixture.location.description)
        #expect(pushed.status == 0, "\(pushed.errors)")
        let record = try SyncState.decode(Files.read(source + "/.pkgtool/sync")).get()
        #expect(record.endpoint == fixture.server.endpoint)
        // No endpoint in the environment: the remembered one is used.
        device.extraEnvironment = ["AWS_ENDPOINT_URL": ""]
        try Files.write(source + "/metadata.json", "second\n")
        let again = try device.run("push", source)
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains("as version 2"))
    }

    /// Issue 25 item 2: a store serving an older HEAD, or a history that no longer holds
    /// DEST's version, is refused in one line naming both; `--version` takes it on purpose.
    @Test func theLatestVersionNeverTakesAPackageBack() throws {
        let fixture = try RemoteFixture("rollback")
        let options = fixture.options()
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let headKey = RemoteLayout.head(fixture.location)
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 1000)
        let first = try PackageRemote.push(source, to: fixture.location, options: options)
        let firstHead = try #require(try s3.getObject(bucket: fixture.bucket, key: headKey, limit: 1 << 20)).bytes
        try Files.write(source + "/metadata.json", "two\n")
        let second = try PackageRemote.push(source, to: fixture.location, options: options)
        let dest = fixture.path("dest")
        _ = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))

        // The store serves version 1's HEAD again.
        _ = try s3.put(bucket: fixture.bucket, key: headKey, bytes: firstHead)
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))
        } throws: { error in
            let error = error as? RemoteError
            return error?.kind == .rollback
                && error?.message
                    == "\(fixture.location) went back: its latest version 1 (\(first.version.shortID)) is older than version 2 (\(second.version.id.description.prefix(12))) that '\(dest)' holds; pull --version 1 to take it on purpose"
        }
        #expect(try RemoteFixture.rootHash(dest) == second.version.rootHash)
        // The command line says so in one line, exit 1.
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        let refused = try device.run("pull", dest)
        #expect(refused.status == 1 && refused.errors.split(separator: "\n").count == 1, "\(refused.errors)")

        // A rewritten history: version 2 replaced by another, then a version 3 on top.
        try Files.write(source + "/metadata.json", "another two\n")
        let rewritten = try PackageRemote.push(source, to: fixture.location, options: options, force: true)
        #expect(rewritten.version.sequence == 2 && rewritten.version.id != second.version.id)
        try Files.write(source + "/metadata.json", "three\n")
        let third = try PackageRemote.push(source, to: fixture.location, options: options)
        #expect(third.version.sequence == 3)
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))
        } throws: { error in
            (error as? RemoteError)?.kind == .rollback && (error as? RemoteError)?.message.hasPrefix("\(fixture.location) was rewritten: its latest version 3 (") == true
        }
        // Walking the manifests' headers (no history in the head record) finds it too; a
        // version that descends is accepted.
        let store = RemoteStore(location: fixture.location, options: options)
        let bare = HeadRecord(head: third.version, history: [])
        let held = SyncBase(version: second.version.id, sequence: 2, rootHash: second.version.rootHash)
        #expect(throws: RemoteError.self) {
            try PullOperation.refuseRollback(held, head: bare, destination: dest, store: store, connection: store.connection())
        }
        let ancestor = SyncBase(version: first.version.id, sequence: 1, rootHash: first.version.rootHash)
        try PullOperation.refuseRollback(ancestor, head: bare, destination: dest, store: store, connection: store.connection())

        // On purpose, by number: taken, and the package now descends from it again.
        let taken = try PackageRemote.pull(fixture.location, to: dest, version: "3", options: fixture.options(device: "b"))
        #expect(taken.version.id == third.version.id)
        #expect(try RemoteFixture.rootHash(dest) == third.version.rootHash)
    }

    @Test func aPullCommitsTheRecordWithTheTreeAndAPushReplacesIt() throws {
        let fixture = try RemoteFixture("record")
        let source = try fixture.makePackage("source", pages: 3, mediaSize: 1000)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        // Even a plain folder pushed carries its record afterwards.
        let mine = try SyncState.decode(Files.read(source + "/.pkgtool/sync")).get()
        #expect(mine == SyncState(location: fixture.location, endpoint: nil, version: pushed.version))
        let dest = fixture.path("dest")
        _ = try PackageRemote.pull(fixture.location, to: dest, options: fixture.options(device: "b"))
        let theirs = try SyncState.decode(Files.read(dest + "/.pkgtool/sync")).get()
        #expect(theirs == mine)
        // Nothing is written to the per-machine cache any more.
        let cache = LocalCache(root: fixture.path("cache-b"), endpoint: fixture.server.endpoint, location: fixture.location)
        #expect(try FileSystem.statusIfExists(cache.directory + "/packages") == nil)
    }

    @Test func aRecordOfTheOldCacheStillServesAPackageWithoutOne() throws {
        let fixture = try RemoteFixture("legacy")
        let source = try fixture.makePackage("source", pages: 3, mediaSize: 1000)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        // As versions before this one left it: no record in the package, one in the cache.
        try FileSystem.remove(source + "/.pkgtool/sync")
        let cache = LocalCache(root: fixture.path("cache-a"), endpoint: fixture.server.endpoint, location: fixture.location)
        let real = try #require(PackagePaths.realPath(source))
        try Files.makeDirectory(cache.directory + "/packages")
        try Files.write(cache.recordPath(real), "\(pushed.version.id) \(pushed.version.rootHash)\n\(real)\n")
        try Files.write(source + "/metadata.json", "edited\n")
        let second = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        #expect(second.createdVersion && second.version.sequence == 2)
        #expect(try SyncState.decode(Files.read(source + "/.pkgtool/sync")).get().version == second.version.id)
        // The cache's record is left as it was: read, never written.
        #expect(try Files.read(cache.recordPath(real)) == Array("\(pushed.version.id) \(pushed.version.rootHash)\n\(real)\n".utf8))
    }

    @Test func aPackageNeverSyncedIsNotReplacedWithoutForce() throws {
        let fixture = try RemoteFixture("never")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 0)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let other = try fixture.makePackage("other", seed: 5, pages: 2, mediaSize: 0)
        try PackageSaver.save(DirectorySource(other), to: fixture.path("saved"))
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: fixture.path("saved"), options: fixture.options(device: "b"))
        } throws: { error in (error as? RemoteError)?.kind == .unpushedChanges }
        let forced = try PackageRemote.pull(
            fixture.location, to: fixture.path("saved"), options: fixture.options(device: "b"), force: true)
        #expect(forced.version.id == pushed.version.id)
    }
}
