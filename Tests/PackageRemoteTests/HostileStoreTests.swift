import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// A store that does not honour conditional writes (issue 25, "A store is hostile"):
/// conditions dropped, HEAD overwritten behind a push, a probe answered with an error. The
/// tampering is a real HTTP endpoint on 127.0.0.1 (`HostileStore`, a proxy that signs the
/// requests again) before the real SeaweedFS; libcurl talks HTTP to it as to any store.
@Suite("A hostile store", .enabled(if: HostileStore.isAvailable, "python3 is not installed: no hostile store to test against"))
struct HostileStoreTests {
    /// The keys under the remote's prefix, as the real store holds them.
    func keys(_ fixture: RemoteFixture) throws -> [String] {
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        return try s3.list(bucket: fixture.bucket, prefix: fixture.location.prefix + "/").objects.map(\.key)
    }

    func probes(_ fixture: RemoteFixture) throws -> [String] {
        try keys(fixture).filter { $0.contains(RemoteLayout.probeName) }
    }

    // MARK: Conditions ignored (items 3 and 8)

    @Test func aStoreIgnoringConditionsGetsNoVersionAndKeepsNoProbe() throws {
        let fixture = try RemoteFixture("ignoring")
        let hostile = try HostileStore(proxying: fixture.server, mode: "drop-conditions")
        let remote = fixture.location.description
        var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        device.extraEnvironment = ["AWS_ENDPOINT_URL": hostile.endpoint]
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 1000)

        // A new remote: refused before anything is written, the probe removed.
        let first = try device.run("push", source, remote)
        #expect(first.status == 2, "\(first.errors)")
        #expect(first.errors.hasPrefix("pkgtool: \(hostile.endpoint) ignores conditional writes"), "\(first.errors)")
        #expect(first.errors.split(separator: "\n").count == 1)
        #expect(!first.output.contains("pushed"))
        #expect(try keys(fixture).allSatisfy { !$0.hasSuffix("/HEAD") })
        #expect(try probes(fixture).isEmpty)

        // A remote made on the honest store, later reached through the proxy (another
        // endpoint: this machine has no base for it, hence --force): refused too, every time,
        // however many pushes race.
        var direct = device
        direct.extraEnvironment = [:]
        #expect(try direct.run("push", source, remote).status == 0)
        var packages: [String] = []
        for index in 0..<2 {
            let package = fixture.path("copy\(index)")
            #expect(try direct.run("pull", remote, package).status == 0)
            try Files.write(package + "/metadata.json", "{\"device\": \(index)}")
            packages.append(package)
        }
        let running = try packages.map { try device.start(["push", "--force", $0, remote]) }
        for outcome in running.map({ $0.wait() }) {
            #expect(outcome.status == 2, "\(outcome.errors)")
            #expect(outcome.errors.contains("\(hostile.endpoint) ignores conditional writes (If-None-Match, If-Match)"))
            #expect(!outcome.output.contains("pushed"))
        }
        #expect(try PackageRemote.log(fixture.location, options: fixture.options(device: "check")).count == 1)
        #expect(try probes(fixture).isEmpty)
    }

    @Test func aHeadOverwrittenAfterThePushIsNotReportedAsAVersion() throws {
        let fixture = try RemoteFixture("reverted")
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 1000)
        let first = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        // The probe's conditions are honoured; HEAD's are dropped, and right after the push's
        // PUT of HEAD the previous record is put back, as a racer that read it would. (The
        // proxy is another endpoint, for which this machine has no base: hence force.)
        let hostile = try HostileStore(proxying: fixture.server, mode: "revert-head")
        try Files.write(source + "/metadata.json", "{\"edited\": true}")
        var options = fixture.options()
        options.configuration = hostile.configuration(attempts: 3)
        #expect {
            _ = try PackageRemote.push(source, to: fixture.location, options: options, force: true)
        } throws: { error in
            let error = error as? RemoteError
            return error?.kind == .unsupportedStore
                && error?.message.hasPrefix("\(hostile.endpoint) did not keep the HEAD this push wrote") == true
                && error?.message.contains("version 2") == true && error?.message.contains("\n") == false
        }
        // The command says so in one line, exit 2, and reports no version.
        var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        device.extraEnvironment = ["AWS_ENDPOINT_URL": hostile.endpoint]
        let run = try device.run("push", "--force", source, fixture.location.description)
        #expect(run.status == 2, "\(run.errors)")
        #expect(run.errors.contains("did not keep the HEAD this push wrote"))
        #expect(run.output.isEmpty)
        let versions = try PackageRemote.log(fixture.location, options: fixture.options(device: "check"))
        #expect(versions.map(\.id) == [first.version.id])
        #expect(try probes(fixture).isEmpty)
    }

    @Test func theProbeIsRemovedWhenPushingSucceedsAndWhenTheStoreFails() throws {
        // Success: a first push and a second leave no probe.
        let fixture = try RemoteFixture("probe")
        let source = try fixture.makePackage("source", pages: 3, mediaSize: 1000)
        _ = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        try Files.write(source + "/metadata.json", "{\"second\": true}")
        let second = try PackageRemote.push(source, to: fixture.location, options: fixture.options())
        #expect(second.version.sequence == 2)
        #expect(try probes(fixture).isEmpty)

        // An error in the middle of the check (a 400 to the probe's second PUT): the push
        // fails in one line and the probe is removed all the same.
        let hostile = try HostileStore(proxying: fixture.server, mode: "fail-probe")
        try Files.write(source + "/metadata.json", "{\"third\": true}")
        var options = fixture.options()
        options.configuration = hostile.configuration(attempts: 3)
        #expect {
            _ = try PackageRemote.push(source, to: fixture.location, options: options, force: true)
        } throws: { error in
            (error as? RemoteError)?.kind == .server && (error as? RemoteError)?.message.contains("HTTP 400: InvalidRequest") == true
        }
        #expect(try probes(fixture).isEmpty)
        #expect(try PackageRemote.log(fixture.location, options: fixture.options()).count == 2)
    }
}
