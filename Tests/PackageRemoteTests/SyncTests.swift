import Dispatch
import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// Push, pull and log through the library against a real SeaweedFS.
@Suite("Sync") struct SyncTests {
    @Test func pushThenPullGivesTheSamePackage() throws {
        let fixture = try RemoteFixture()
        let source = try fixture.makePackage("source")
        let options = fixture.options()
        let first = try PackageRemote.push(source, to: fixture.location, options: options)
        #expect(first.createdVersion)
        #expect(first.version.sequence == 1)
        #expect(first.version.rootHash == (try RemoteFixture.rootHash(source)))
        #expect(first.packsUploaded >= 1 && first.packsUploaded <= 3)

        let pulled = try PackageRemote.pull(fixture.location, to: fixture.path("copy"), options: fixture.options(device: "b"))
        #expect(!pulled.unchanged)
        #expect(try RemoteFixture.rootHash(fixture.path("copy")) == first.version.rootHash)
        #expect(try FileSystem.status(fixture.path("copy/run.sh")).permissions & 0o777 == 0o755)
        #expect(try FileSystem.readSymbolicLink(fixture.path("copy/link")) == "pages/a/page0.json")
        #expect(try FileSystem.statusIfExists(fixture.path(".copy.pkgtool-pull")) == nil)

        // A second push of the same package is one GET.
        let again = try PackageRemote.push(source, to: fixture.location, options: options)
        #expect(!again.createdVersion)
        #expect(again.requests == 1)
    }

    @Test func incrementalPushAndPullMoveOnlyTheChange() throws {
        let fixture = try RemoteFixture()
        let source = try fixture.makePackage("source", mediaSize: 8 << 20)
        let options = fixture.options()
        let first = try PackageRemote.push(source, to: fixture.location, options: options)
        _ = try PackageRemote.pull(fixture.location, to: fixture.path("copy"), options: fixture.options(device: "b"))

        // 1 MiB in the middle of the media file, one page rewritten, one page removed.
        try fixture.overwrite(source + "/media/movie.mp4", at: 3 << 20 + 12345, count: 1 << 20, seed: 7)
        try Files.write(source + "/pages/a/page2.json", "{\"edited\": true}")
        try FileSystem.remove(source + "/pages/b/page3.json")
        let second = try PackageRemote.push(source, to: fixture.location, options: options)
        #expect(second.version.sequence == 2)
        #expect(second.version.parent == first.version.id)
        #expect(second.filesRead == 2)
        // The content-defined chunks the change touched (about 1 MiB each), and the page.
        #expect((2...5).contains(second.blobsUploaded))
        #expect(second.bytesUploaded < 6 << 20)

        let pulled = try PackageRemote.pull(fixture.location, to: fixture.path("copy"), options: fixture.options(device: "b"))
        #expect(pulled.blobsDownloaded == second.blobsUploaded)
        #expect(pulled.blobsFromDestination >= 2)
        #expect(try RemoteFixture.rootHash(fixture.path("copy")) == second.version.rootHash)
        // The media file is patched in place with the changed chunks (the fresh pull recorded
        // its chunk list), not written whole: a few MiB, not 8.
        let save = try #require(pulled.save)
        #expect(save.filesPatched + save.filesCloned == 1, "\(save)")
        #expect(save.bytesPatched > 0 && save.bytesPatched < 5 << 20, "\(save)")
        #expect(save.bytesWritten < 5 << 20, "\(save)")
        // DEST's manifest records the new chunk list, each chunk the XXH3 of its bytes.
        let copy = fixture.path("copy")
        let manifest = try #require(try PackageManifest.load(packagePath: copy))
        let chunks = try #require(manifest.snapshot.entries.first { $0.path == "media/movie.mp4" }?.chunks)
        let movie = try Files.read(copy + "/media/movie.mp4")
        #expect(chunks.totalLength == Int64(movie.count) && chunks.count > 2)
        for chunk in chunks {
            #expect(chunk.hash == ContentHash.of(movie[Int(chunk.offset)..<Int(chunk.end)]), "chunk at \(chunk.offset)")
        }
        #expect(try FileSystem.statusIfExists(fixture.path("copy/pages/b/page3.json")) == nil)

        let versions = try PackageRemote.log(fixture.location, options: options)
        #expect(versions.map(\.sequence) == [2, 1])
        #expect(versions[0].parent == versions[1].id)

        // An older version, by number.
        let old = try PackageRemote.pull(
            fixture.location, to: fixture.path("old"), version: "1", options: fixture.options(device: "c"))
        #expect(old.version.id == first.version.id)
        #expect(try RemoteFixture.rootHash(fixture.path("old")) == first.version.rootHash)
    }

    @Test func progressReachesTheEndAndCancellationStopsCleanly() throws {
        let fixture = try RemoteFixture("cancel", prefix: "")
        let source = try fixture.makePackage("source", pages: 20, mediaSize: 6 << 20)
        let root = ProgressManager(totalCount: 2)
        let pushed = try PackageRemote.push(
            source, to: fixture.location, options: fixture.options(), progress: root.subprogress(assigningCount: 1))
        #expect(root.fractionCompleted == 0.5)
        #expect(root.summary(of: ProgressManager.Properties.CompletedByteCount.self) >= 6 << 20)
        _ = try PackageRemote.pull(
            fixture.location, to: fixture.path("copy"), options: fixture.options(device: "b"),
            progress: root.subprogress(assigningCount: 1))
        #expect(root.isFinished)

        // A push cancelled from another thread stops at once; the remote keeps its version.
        try fixture.overwrite(source + "/media/movie.mp4", at: 0, count: 6 << 20, seed: 77)
        var options = fixture.options()
        options.configuration.transport.maximumBytesPerSecond = 1 << 20
        let cancellation = TransferCancellation()
        options.cancellation = cancellation
        let started = DispatchTime.now()
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) { cancellation.cancel() }
        #expect {
            _ = try PackageRemote.push(source, to: fixture.location, options: options)
        } throws: { error in (error as? RemoteError)?.kind == .cancelled }
        #expect(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds < 3_000_000_000)
        #expect(try PackageRemote.log(fixture.location, options: fixture.options()).map(\.id) == [pushed.version.id])
        let again = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        #expect(again.version.sequence == 2)
    }

    @Test func aBlobThatChangedBeforeItsUploadAbortsThePack() throws {
        let directory = try TemporaryDirectory("packbody")
        try Files.write(directory.url("a.bin"), SeededBytes(seed: 3).bytesArray(200_000))
        let original = SHA256Digest.of(try Files.read(directory.url("a.bin")))
        var plan = PackPlan(serial: 0)
        _ = plan.append(PackPlan.Piece(path: "a.bin", offset: 0, length: 200_000, digest: original))
        let (trailer, _) = plan.sealed()
        let root = try OpenDirectory(directory.path)
        func drain(_ body: PackBody) -> Int? {
            var buffer = [UInt8](repeating: 0, count: 65536)
            var total = 0
            while true {
                guard let count = buffer.withUnsafeMutableBytes({ body.read(into: $0) }) else { return nil }
                if count == 0 { return total }
                total += count
            }
        }
        let body = PackBody(plan: plan, trailer: trailer, root: root.rawValue, packagePath: directory.path)
        #expect(drain(body) == 200_000 + trailer.count)
        // The same bytes again after a rewind; then the file changes under it.
        body.rewind()
        try Files.write(directory.url("a.bin"), SeededBytes(seed: 4).bytesArray(200_000))
        #expect(drain(body) == nil)
        #expect((body.failure as? RemoteError)?.kind == .localChange)
    }

    @Test func aForcedPullRestoresFilesEditedBehindPkgtoolsBack() throws {
        let fixture = try RemoteFixture("behind")
        let source = try fixture.makePackage("source", pages: 8, mediaSize: 3 << 20)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let copy = fixture.path("copy")
        _ = try PackageRemote.pull(fixture.location, to: copy, options: fixture.options(device: "b"))
        // Edited without pkgtool: one page longer, one rewritten at the same size, one removed.
        try Files.write(copy + "/pages/a/page0.json", "{\"edited\": \"longer than before, surely\"}")
        let page = try Files.read(copy + "/pages/b/page1.json")
        try Files.write(copy + "/pages/b/page1.json", page.map { $0 ^ 0xFF })
        try FileSystem.remove(copy + "/metadata.json")
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: copy, options: fixture.options(device: "b"))
        } throws: { error in (error as? RemoteError)?.kind == .unpushedChanges }
        let forced = try PackageRemote.pull(fixture.location, to: copy, options: fixture.options(device: "b"), force: true)
        #expect(forced.version.id == pushed.version.id)
        #expect(try RemoteFixture.rootHash(copy) == pushed.version.rootHash)
        #expect(try Files.read(copy + "/pages/b/page1.json") == page)
    }

    @Test func aPullIntoAFolderThatIsNoPackageAsksForForce() throws {
        let fixture = try RemoteFixture("foreign-dest")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 0)
        let pushed = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let folder = fixture.path("work")
        try Files.makeDirectory(folder)
        try Files.write(folder + "/notes.txt", "mine")
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: folder, options: fixture.options(device: "b"))
        } throws: { error in (error as? RemoteError)?.kind == .unpushedChanges }
        #expect(try Files.read(folder + "/notes.txt") == Array("mine".utf8))
        // An empty folder is pulled into as usual; --force replaces the folder's contents.
        try Files.makeDirectory(fixture.path("empty"))
        _ = try PackageRemote.pull(fixture.location, to: fixture.path("empty"), options: fixture.options(device: "b"))

        // A .pkgtool does not make a folder a package unless it holds a manifest written for
        // that folder: not when it is empty, nor when its manifest was copied from a package.
        try Files.makeDirectory(folder + "/.pkgtool")
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: folder, options: fixture.options(device: "c"))
        } throws: { error in (error as? RemoteError)?.kind == .unpushedChanges }
        try FileManager.default.removeItem(atPath: folder + "/.pkgtool")
        try FileManager.default.copyItem(atPath: fixture.path("empty") + "/.pkgtool", toPath: folder + "/.pkgtool")
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: folder, options: fixture.options(device: "c"))
        } throws: { error in (error as? RemoteError)?.kind == .unpushedChanges }
        #expect(try Files.read(folder + "/notes.txt") == Array("mine".utf8))
        // A folder holding nothing but an empty .pkgtool has nothing to lose.
        try Files.makeDirectory(fixture.path("bare/.pkgtool"))
        _ = try PackageRemote.pull(fixture.location, to: fixture.path("bare"), options: fixture.options(device: "c"))
        let forced = try PackageRemote.pull(fixture.location, to: folder, options: fixture.options(device: "b"), force: true)
        #expect(forced.version.id == pushed.version.id)
        #expect(try FileSystem.statusIfExists(folder + "/notes.txt") == nil)
    }

    @Test func anInsertionSendsOnlyTheChunksAroundIt() throws {
        let fixture = try RemoteFixture("insert")
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 12 << 20)
        _ = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        // 1,000 bytes inserted 3 MiB into the file: every later byte moves.
        let movie = source + "/media/movie.mp4"
        let bytes = try Files.read(movie)
        try Files.write(movie, Array(bytes[..<(3 << 20)]) + SeededBytes(seed: 12).bytesArray(1000) + Array(bytes[(3 << 20)...]))
        let second = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        // Content-defined cuts resynchronise after the insertion: a chunk or two, not 9 MiB.
        #expect(second.bytesUploaded < 5 << 20)
        let copy = fixture.path("copy")
        let pulled = try PackageRemote.pull(fixture.location, to: copy, options: fixture.options(device: "b"))
        #expect(try RemoteFixture.rootHash(copy) == pulled.version.rootHash)
    }
}
