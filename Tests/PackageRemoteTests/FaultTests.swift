import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Synchronization
import Testing

@testable import PackageRemote

/// Faults against a real SeaweedFS: the server killed mid-transfer, damaged objects, two
/// pushes racing. Killing needs a server of its own (the others share one): these run in
/// order, on a second server started for them.
@Suite("Sync faults", .serialized) struct FaultTests {
    /// A server only these tests kill and restart.
    static let killable: SeaweedServer = {
        do { return try SeaweedServer() } catch { fatalError("cannot start a second SeaweedFS: \(error)") }
    }()

    /// Runs `body` on a thread; kills the server once `trigger` says so (polled every
    /// millisecond), then waits for `body` to end and returns its error, if any.
    static func killDuring(
        _ server: SeaweedServer, trigger: @escaping @Sendable () -> Bool, _ body: @escaping @Sendable () throws -> Void
    ) -> (any Error)? {
        let failure = Mutex<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do { try body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        var killed = false
        while done.wait(timeout: .now() + .milliseconds(1)) == .timedOut {
            if !killed && trigger() {
                server.kill()
                killed = true
            }
        }
        #expect(killed, "the transfer ended before the server could be killed")
        return failure.withLock { $0 }
    }

    /// Small packs, two transfers; with `rate` (the transfer that gets killed), few retries.
    func options(_ fixture: RemoteFixture, device: String, server: SeaweedServer, rate: Int64? = 4 << 20) -> RemoteOptions {
        var configuration = server.configuration(attempts: rate == nil ? 6 : 2)
        configuration.transport.retryDelay = 0.2
        var options = RemoteOptions(
            configuration: configuration, cacheDirectory: fixture.path("cache-\(device)"), packSize: 1 << 20)
        options.configuration.transport.concurrency = 2
        options.configuration.transport.maximumBytesPerSecond = rate
        return options
    }

    @Test func serverKilledMidPushThenRestarted() throws {
        let server = Self.killable
        let bucket = try server.makeBucket("killpush")
        let fixture = try RemoteFixture(existingBucket: bucket, server: server)
        let source = try fixture.makePackage("source", pages: 40, mediaSize: 12 << 20)
        let first = try PackageRemote.push(source, to: fixture.location, options: options(fixture, device: "a", server: server, rate: nil))

        // A second version, killed after a third of its bytes went up.
        try fixture.overwrite(source + "/media/movie.mp4", at: 0, count: 12 << 20, seed: 42)
        let progress = ProgressManager(totalCount: 1)
        let pushOptions = options(fixture, device: "a", server: server)
        let location = fixture.location
        let failure = Self.killDuring(server, trigger: { progress.summary(of: ProgressManager.Properties.CompletedByteCount.self) >= 4 << 20 }) {
            _ = try PackageRemote.push(source, to: location, options: pushOptions, progress: progress.subprogress(assigningCount: 1))
        }
        #expect((failure as? RemoteError)?.kind == .unreachable, "\(String(describing: failure))")
        try server.start()

        // The remote still holds version 1, intact.
        let check = options(fixture, device: "check", server: server, rate: nil)
        #expect(try PackageRemote.log(fixture.location, options: check).map(\.id) == [first.version.id])
        let old = try PackageRemote.pull(fixture.location, to: fixture.path("old"), options: check)
        #expect(old.version.id == first.version.id)
        #expect(try RemoteFixture.rootHash(fixture.path("old")) == first.version.rootHash)

        // The next push sends only what did not arrive.
        let second = try PackageRemote.push(source, to: fixture.location, options: options(fixture, device: "a", server: server, rate: nil))
        #expect(second.createdVersion)
        #expect(second.packsResumed >= 2)
        #expect(second.bytesUploaded <= 10 << 20)
        #expect(second.bytesUploaded > 0)
        let pulled = try PackageRemote.pull(fixture.location, to: fixture.path("old"), options: check)
        #expect(pulled.version.id == second.version.id)
        #expect(try RemoteFixture.rootHash(fixture.path("old")) == (try RemoteFixture.rootHash(source)))
    }

    @Test func serverKilledMidPullThenRestarted() throws {
        let server = Self.killable
        let bucket = try server.makeBucket("killpull")
        let fixture = try RemoteFixture(existingBucket: bucket, server: server)
        let source = try fixture.makePackage("source", pages: 40, mediaSize: 12 << 20)
        let first = try PackageRemote.push(source, to: fixture.location, options: options(fixture, device: "a", server: server, rate: nil))
        let destination = fixture.path("copy")
        _ = try PackageRemote.pull(fixture.location, to: destination, options: options(fixture, device: "b", server: server, rate: nil))

        // 8 of the media file's 12 MiB change: its chunks outside the change come from DEST, the
        // new ones are fetched as single blobs (streamed to the engine), the page is assembled.
        try fixture.overwrite(source + "/media/movie.mp4", at: 2 << 20, count: 8 << 20, seed: 43)
        try Files.write(source + "/pages/a/page0.json", "{\"new\": true}")
        let second = try PackageRemote.push(source, to: fixture.location, options: options(fixture, device: "a", server: server, rate: nil))

        // The pull of version 2, killed after a third of its bytes came down.
        let progress = ProgressManager(totalCount: 1)
        let pullOptions = options(fixture, device: "b", server: server)
        let location = fixture.location
        let failure = Self.killDuring(server, trigger: { progress.summary(of: ProgressManager.Properties.CompletedByteCount.self) >= 6 << 20 }) {
            _ = try PackageRemote.pull(location, to: destination, options: pullOptions, progress: progress.subprogress(assigningCount: 1))
        }
        #expect((failure as? RemoteError)?.kind == .unreachable, "\(String(describing: failure))")
        // DEST untouched: still version 1.
        #expect(try RemoteFixture.rootHash(destination) == first.version.rootHash)
        try server.start()

        let resumed = try PackageRemote.pull(fixture.location, to: destination, options: options(fixture, device: "b", server: server, rate: nil))
        #expect(resumed.version.id == second.version.id)
        #expect(resumed.blobsResumed >= 3)
        #expect(resumed.blobsFromDestination >= 1)
        #expect(resumed.bytesDownloaded < 8 << 20)
        #expect(try RemoteFixture.rootHash(destination) == second.version.rootHash)
        #expect(try FileSystem.statusIfExists(fixture.path(".copy.pkgtool-pull")) == nil)
    }

    @Test func aDamagedObjectIsRefusedAndDestinationUntouched() throws {
        let fixture = try RemoteFixture("damaged")
        let source = try fixture.makePackage("source", pages: 10, mediaSize: 3 << 20)
        let first = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        let destination = fixture.path("copy")
        _ = try PackageRemote.pull(fixture.location, to: destination, options: fixture.options(device: "b"))
        try fixture.overwrite(source + "/media/movie.mp4", at: 100, count: 1000, seed: 5)
        let second = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        #expect(second.packsUploaded == 1)

        // Flip one byte of the new pack on the store.
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let manifest = try #require(
            try s3.getObject(bucket: fixture.bucket, key: RemoteLayout.version(second.version.id, fixture.location), limit: 1 << 20))
        let decoded = try VersionManifest.decode(manifest.bytes, id: second.version.id)
        let oldPacks = Set(try VersionManifest.decode(
            try #require(try s3.getObject(bucket: fixture.bucket, key: RemoteLayout.version(first.version.id, fixture.location), limit: 1 << 20)).bytes,
            id: first.version.id).entries.flatMap { $0.blobs.map(\.pack) })
        let newPack = try #require(decoded.entries.flatMap { $0.blobs.map(\.pack) }.first { !oldPacks.contains($0) })
        let key = RemoteLayout.pack(newPack, fixture.location)
        var bytes = try #require(try s3.getObject(bucket: fixture.bucket, key: key, limit: 8 << 20)).bytes
        bytes[10] ^= 0x40
        _ = try s3.put(bucket: fixture.bucket, key: key, bytes: bytes)

        let before = try RemoteFixture.rootHash(destination)
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: destination, options: fixture.options(device: "b"))
        } throws: { error in
            let remote = error as? RemoteError
            return remote?.kind == .verificationFailed && remote!.message.contains("does not match its SHA-256")
        }
        #expect(try RemoteFixture.rootHash(destination) == before)
        #expect {
            _ = try PackageRemote.pull(fixture.location, to: fixture.path("fresh"), options: fixture.options(device: "c"))
        } throws: { error in (error as? RemoteError)?.kind == .verificationFailed }
        #expect(try FileSystem.statusIfExists(fixture.path("fresh")) == nil)

        // A damaged manifest is refused too (its name is its SHA-256).
        var damaged = manifest.bytes
        damaged[damaged.count - 3] ^= 1
        _ = try s3.put(bucket: fixture.bucket, key: RemoteLayout.version(second.version.id, fixture.location), bytes: damaged)
        let cli = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-d"))
        let refused = try cli.run("pull", fixture.location.description, fixture.path("other"))
        #expect(refused.status == 1)
        #expect(refused.errors.contains("does not match its SHA-256"))
        #expect(try FileSystem.statusIfExists(fixture.path("other")) == nil)
    }

    @Test func concurrentPushesNeverLoseAVersion() throws {
        let fixture = try RemoteFixture("race")
        let remote = fixture.location.description
        let devices = ["a", "b"].map { PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-\($0)")) }
        let seed = try fixture.makePackage("seed", pages: 6, mediaSize: 2000)
        #expect(try devices[0].run("push", seed, remote).status == 0)
        var successes: [(round: Int, root: ContentHash)] = []
        for round in 0..<8 {
            // Both devices start from the head, make their own change, and push at once;
            // from round 4 on, with --force (no base check: only the compare-and-swap).
            var packages: [String] = []
            for (index, device) in devices.enumerated() {
                let package = fixture.path("round\(round)-\(index)")
                let pulled = try device.run("pull", remote, package)
                #expect(pulled.status == 0, "\(pulled.errors)")
                try Files.write(package + "/metadata.json", "{\"round\": \(round), \"device\": \(index)}")
                packages.append(package)
            }
            let force = round >= 4 ? ["--force"] : []
            let running = try zip(devices, packages).map { try $0.start(["push"] + force + [$1, remote]) }
            let outcomes = running.map { $0.wait() }
            for (index, outcome) in outcomes.enumerated() {
                #expect(outcome.status == 0 || outcome.status == 1, "\(outcome.errors)")
                if outcome.status == 1 { #expect(outcome.errors.contains("the remote moved on")) }
                if outcome.status == 0 { successes.append((round, try RemoteFixture.rootHash(packages[index]))) }
            }
            #expect(outcomes.contains { $0.status == 0 }, "round \(round): neither push succeeded")
            if round < 4 { #expect(outcomes.filter { $0.status == 0 }.count == 1) }
        }
        // Every push that said so is in the history, which is a valid chain.
        let versions = try PackageRemote.log(fixture.location, options: fixture.options(device: "check"))
        let roots = Set(versions.map(\.rootHash))
        for success in successes { #expect(roots.contains(success.root), "round \(success.round)'s version is missing") }
        #expect(versions.count == successes.count + 1)
        for (newer, older) in zip(versions, versions.dropFirst()) {
            #expect(newer.parent == older.id)
            #expect(newer.sequence == older.sequence + 1)
        }
        let head = try PackageRemote.pull(fixture.location, to: fixture.path("head"), options: fixture.options(device: "check"))
        #expect(try RemoteFixture.rootHash(fixture.path("head")) == head.version.rootHash)
    }
}
