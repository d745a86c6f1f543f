import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// Transfers against a hostile server (issue 25, "A store is hostile"): bodies trickled,
/// going on past the range asked for, answering a range with the whole object, claiming a
/// terabyte; a head record claiming a million versions. Crafted answers come from
/// `HostileStore` (Python's `http.server` on 127.0.0.1); libcurl really talks HTTP to it.
@Suite("Transfers from a hostile store", .enabled(if: HostileStore.isAvailable, "python3 is not installed: no hostile store to test against"))
struct HostileTransferTests {
    // MARK: Bodies (item 4)

    func connection(_ store: HostileStore, _ adjust: (inout TransportSettings) -> Void = { _ in }) -> S3Connection {
        var configuration = store.configuration()
        adjust(&configuration.transport)
        return S3Connection(configuration: configuration, counters: TransferCounters(), cancellation: nil)
    }

    @Test func aTrickledBodyIsAbandonedByTheLowSpeedLimitOrTheDeadline() throws {
        let store = try HostileStore(crafted: "trickle")
        // 2 bytes a second is under a limit of 100 bytes a second over 1 s.
        let slow = connection(store) {
            $0.minimumBytesPerSecond = 100
            $0.stallTimeoutSeconds = 1
        }
        #expect {
            try slow.get(bucket: "b", key: "k", range: 0..<1000, into: MemorySink(limit: 1000))
        } throws: { error in (error as? RemoteError)?.kind == .unreachable }
        // Above a limit of 1 byte a second: the deadline ends it.
        let patient = connection(store) {
            $0.minimumBytesPerSecond = 1
            $0.stallTimeoutSeconds = 60
            $0.transferTimeoutSeconds = 2
        }
        #expect {
            try patient.get(bucket: "b", key: "k", range: 0..<1000, into: MemorySink(limit: 1000))
        } throws: { error in (error as? RemoteError)?.kind == .unreachable }
    }

    @Test(arguments: ["endless", "overlong"])
    func aBodyLongerThanTheRangeIsCutOffAndRefused(mode: String) throws {
        let store = try HostileStore(crafted: mode)
        let sink = MemorySink(limit: 1 << 30)
        #expect {
            try connection(store).get(bucket: "b", key: "k", range: 4096..<8192, into: sink)
        } throws: { error in
            let error = error as? RemoteError
            return error?.kind == .server && error?.message.contains("s3://b/k") == true
                && (error?.message.contains("more than the 4096 bytes asked for") == true
                    || error?.message.contains("Content-Length of 8192") == true)
        }
        #expect(sink.received <= 4096)
    }

    @Test func aRangeAnsweredWithTheWholeObjectIsRefused() throws {
        let store = try HostileStore(crafted: "whole")
        let sink = MemorySink(limit: 1 << 30)
        #expect {
            try connection(store).get(bucket: "b", key: "k", range: 1000..<2000, into: sink)
        } throws: { error in
            (error as? RemoteError)?.message.contains("answered a ranged GET with HTTP 200") == true
        }
        #expect(sink.received == 0)
    }

    @Test func aClaimedLengthIsNotBelieved() throws {
        let store = try HostileStore(crafted: "claim")
        // A terabyte claimed for an object of at most 4 MiB: refused before a byte is kept.
        #expect {
            _ = try connection(store).getObject(bucket: "b", key: "k", limit: 4 << 20)
        } throws: { error in
            (error as? RemoteError)?.message.contains("Content-Length of 1000000000000") == true
        }
        // A manifest body's claimed size is not believed either: PackageCoreTests'
        // CompressionTests (the one inflater's bounds).
    }

    @Test func aPullFromATricklingOrOverlongStoreEndsInOneLine() throws {
        let fixture = try RemoteFixture("trickle-pull")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 4000)
        _ = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        for (mode, expected) in [("trickle-packs", "took the request but did not answer in time"), ("overlong-packs", "bytes asked for")] {
            let hostile = try HostileStore(proxying: fixture.server, mode: mode)
            var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-\(mode)"))
            device.extraEnvironment = ["AWS_ENDPOINT_URL": hostile.endpoint]
            let destination = fixture.path("dest-\(mode)")
            let run = try device.run(
                "pull", "--speed-limit", "1k", "--speed-time", "1", "--max-time", "60", "--retries", "0",
                fixture.location.description, destination)
            #expect(run.status == 2, "\(mode): \(run.errors)")
            #expect(run.errors.hasPrefix("pkgtool: ") && run.errors.contains(expected), "\(mode): \(run.errors)")
            #expect(run.errors.split(separator: "\n").count == 1, "\(mode): \(run.errors)")
            #expect(try FileSystem.statusIfExists(destination) == nil)
        }
    }

    /// A store that answers an error and then holds requests without answering (SeaweedFS
    /// out of writable volumes) is not called unreachable: the line says it took the
    /// request, did not answer in time, and what it answered before — whichever of the
    /// parallel uploads (one pack per reader) gives up first: the one answered 500 or one
    /// only ever held.
    @Test func aStoreThatStopsAnsweringIsNotCalledUnreachable() throws {
        let fixture = try RemoteFixture("silent-store")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 4000)
        let hostile = try HostileStore(proxying: fixture.server, mode: "out-of-space")
        var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        device.extraEnvironment = ["AWS_ENDPOINT_URL": hostile.endpoint]
        let run = try device.run(
            "push", "--speed-limit", "1k", "--speed-time", "1", "--max-time", "60", "--retries", "1", source,
            fixture.location.description)
        #expect(run.status == 2, "\(run.errors)")
        #expect(run.errors.split(separator: "\n").count == 1, "\(run.errors)")
        #expect(run.errors.contains("took the request but did not answer in time"), "\(run.errors)")
        #expect(run.errors.contains("before that it answered HTTP 500 InternalError (no free volumes left)"), "\(run.errors)")
        #expect(!run.errors.contains("cannot reach"), "\(run.errors)")
    }

    // MARK: A head claiming a million versions (item 4)

    @Test func aHeadClaimingAMillionVersionsCostsOneRequest() throws {
        let fixture = try RemoteFixture("million")
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let forged = VersionSummary(
            id: SHA256Digest.of([1]), sequence: 1_000_000, time: 0, parent: SHA256Digest.of([2]),
            rootHash: ContentHash(high: 1, low: 2), size: 0, entryCount: 0)
        _ = try s3.put(
            bucket: fixture.bucket, key: RemoteLayout.head(fixture.location),
            bytes: HeadRecord(head: forged, history: []).encoded())

        // log answers from the head record: one request.
        let store = RemoteStore(location: fixture.location, options: fixture.options())
        let versions = try LogOperation.run(store: store, limit: nil)
        #expect(versions.map(\.sequence) == [1_000_000])
        #expect(store.counters.requests == 1)
        // Paging past it costs one request per version asked for: here the first is missing.
        #expect {
            _ = try LogOperation.run(store: store, limit: 5)
        } throws: { error in (error as? RemoteError)?.kind == .verificationFailed }
        // pull --version 1 is refused at once, without walking a million headers.
        let walker = RemoteStore(location: fixture.location, options: fixture.options())
        #expect {
            _ = try LogOperation.resolve(
                "1", store: walker, connection: walker.connection(), head: HeadRecord(head: forged, history: []))
        } throws: { error in
            (error as? RemoteError)?.kind == .unknownVersion
                && (error as? RemoteError)?.message.contains("give its full id") == true
        }
        #expect(walker.counters.requests == 0)

        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        let log = try device.run("log", fixture.location.description)
        #expect(log.status == 0, "\(log.errors)")
        #expect(log.output.split(separator: "\n").count == 2)
        let pull = try device.run("pull", "--version", "1", fixture.location.description, fixture.path("dest"))
        #expect(pull.status == 1)
        #expect(pull.errors.contains("more than 1000 versions older"))
    }
}
