import Dispatch
import Foundation
import PackageCore
import PackageTestSupport
import Synchronization
import Testing

@testable import PackageRemote

/// `prune` against a real SeaweedFS: retention, the record it leaves, space coming back,
/// pushes and pulls racing it.
@Suite("Prune") struct PruneTests {
    /// Every object of the remote: key → size.
    static func objects(_ fixture: RemoteFixture) throws -> [String: Int64] {
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        var result: [String: Int64] = [:]
        var token: String? = nil
        repeat {
            let page = try s3.list(bucket: fixture.bucket, prefix: fixture.location.prefix + "/", continuation: token)
            for object in page.objects { result[object.key] = object.size }
            token = page.next
        } while token != nil
        return result
    }

    /// Bytes the remote's objects take.
    static func storeBytes(_ fixture: RemoteFixture) throws -> Int64 { try objects(fixture).values.reduce(0, +) }

    /// Pulls `version` into a fresh directory (the pull checks every blob and file) and
    /// checks the result hashes to its root.
    static func referee(_ fixture: RemoteFixture, _ version: VersionSummary, device: String, label: String) throws {
        let destination = fixture.path("referee-\(label)-\(version.sequence)")
        let pulled = try PackageRemote.pull(
            fixture.location, to: destination, version: version.id.description, options: fixture.options(device: device))
        #expect(pulled.version.id == version.id)
        #expect(try RemoteFixture.rootHash(destination) == version.rootHash)
        try FileSystem.removeTree(destination)
    }

    /// `count` versions of the package at `source`, each a small edit of a page and of the media file.
    static func pushVersions(_ fixture: RemoteFixture, _ source: String, count: Int, options: RemoteOptions, seed: UInt64 = 1)
        throws -> [VersionSummary]
    {
        try pushVersions(fixture.location, source, count: count, options: options, seed: seed)
    }

    static func pushVersions(
        _ location: RemoteLocation, _ source: String, count: Int, options: RemoteOptions, seed: UInt64 = 1,
        pushed: (PushResult) -> Void = { _ in }
    ) throws -> [VersionSummary] {
        var versions: [VersionSummary] = []
        for index in 0..<count {
            if index > 0 || (try? FileSystem.statusIfExists(source + "/.pkgtool/sync")) != nil {
                try Files.write(source + "/pages/a/page1.json", "{\"edit\": \(seed &* 1000 &+ UInt64(index))}")
                let descriptor = try FileDescriptor.open(source + "/media/movie.mp4", access: .readWrite)
                let bytes = SeededBytes(seed: seed &* 1000 &+ UInt64(index)).bytesArray(64 << 10)
                try bytes.withUnsafeBytes { try descriptor.write($0, at: Int64((index * 397_000) % (2 << 20))) }
            }
            let result = try PackageRemote.push(source, to: location, options: options)
            pushed(result)
            versions.append(result.version)
        }
        return versions
    }

    @Test func retentionKeepsTheHeadAndWhatTheRulesNameAndRecordsTheRest() throws {
        let fixture = try RemoteFixture("prune")
        let source = try fixture.makePackage("source", mediaSize: 3 << 20)
        let options = fixture.options(packSize: 256 << 10)
        let versions = try Self.pushVersions(fixture, source, count: 8, options: options)
        let before = try Self.objects(fixture)

        // A dry run plans and deletes nothing.
        let plan = try PackageRemote.prune(
            fixture.location, policy: PrunePolicy(keepLast: 3, keep: ["2"]), options: fixture.options(device: "p"),
            dryRun: true)
        #expect(plan.dropped.map(\.sequence) == [5, 4, 3, 1])
        #expect(plan.kept.map(\.sequence) == [8, 7, 6, 2])
        #expect(try Self.objects(fixture) == before)

        let result = try PackageRemote.prune(
            fixture.location, policy: PrunePolicy(keepLast: 3, keep: [String(versions[1].id.description.prefix(8))]),
            options: fixture.options(device: "p"))
        #expect(result.dropped.map(\.sequence) == [5, 4, 3, 1])
        #expect(result.kept.map(\.sequence) == [8, 7, 6, 2])
        #expect(result.manifestsDeleted == 4)
        #expect(result.storeBytesAfter < result.storeBytesBefore)
        #expect(result.storeBytesAfter == (try Self.storeBytes(fixture)))
        let after = try Self.objects(fixture)
        for version in versions {
            let key = RemoteLayout.version(version.id, fixture.location)
            #expect((after[key] != nil) == [8, 7, 6, 2].contains(version.sequence), "version \(version.sequence)")
        }

        // The record says what was pruned; log shows every version the record holds.
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let store = RemoteStore(location: fixture.location, options: fixture.options(device: "p"))
        let head = try #require(try store.readHead(s3)).record
        #expect(head.pruned == [1...1, 3...5])
        #expect(head.head.id == versions[7].id)
        #expect(try PackageRemote.log(fixture.location, options: options).count == 8)
        // Walks past the record stop cleanly at a pruned version.
        #expect(try PackageRemote.log(fixture.location, options: options, limit: 20).count == 8)

        // Every kept version pulls and verifies; a pruned one is refused in one line.
        for version in versions where [8, 7, 6, 2].contains(version.sequence) {
            try Self.referee(fixture, version, device: "r", label: "kept")
        }
        let refused = #expect(throws: RemoteError.self) {
            try PackageRemote.pull(
                fixture.location, to: fixture.path("pruned"), version: "4", options: fixture.options(device: "r"))
        }
        #expect(refused?.kind == .unknownVersion)
        #expect(refused?.message.contains("was pruned") == true, "\(String(describing: refused))")

        // A push on top keeps the record's pruned versions; a second prune has nothing to drop.
        try Files.write(source + "/pages/a/page1.json", "{\"edit\": \"after\"}")
        let ninth = try PackageRemote.push(source, to: fixture.location, options: options)
        #expect(ninth.version.sequence == 9)
        let again = try PackageRemote.prune(
            fixture.location, policy: PrunePolicy(keepLast: 10), options: fixture.options(device: "p"))
        #expect(again.dropped.isEmpty)
        #expect(again.kept.map(\.sequence) == [9, 8, 7, 6, 2])
        let record = try #require(try store.readHead(s3)).record
        #expect(record.pruned == [1...1, 3...5])
        try Self.referee(fixture, ninth.version, device: "r2", label: "ninth")

        // An incremental pull into a package synced with a pruned version goes on.
        let keepWithin = try PackageRemote.prune(
            fixture.location, policy: PrunePolicy(keepWithin: 0), options: fixture.options(device: "p"))
        #expect(keepWithin.kept.map(\.sequence) == [9])
    }

    @Test func aSyncWhoseBaseWasPrunedMergesFromTheCacheOrIsRefusedAndAPullGoesOn() throws {
        let fixture = try RemoteFixture("prunebase")
        let source = try fixture.makePackage("source", mediaSize: 1 << 20)
        let versions = try Self.pushVersions(fixture, source, count: 4, options: fixture.options())
        let other = fixture.path("other")
        _ = try PackageRemote.pull(fixture.location, to: other, version: "2", options: fixture.options(device: "b"))
        _ = try PackageRemote.prune(fixture.location, policy: PrunePolicy(keepLast: 1), options: fixture.options(device: "p"))
        // Both sides changed: the merge needs the base's tree, which was pruned. Another
        // machine (no cached copy of it) is refused in one line.
        try Files.write(other + "/pages/b/page5.json", "{\"other\": true}")
        let refused = #expect(throws: RemoteError.self) {
            try PackageRemote.sync(other, with: fixture.location, options: fixture.options(device: "elsewhere"))
        }
        #expect(refused?.isRefusal == true)
        #expect(
            refused?.message.contains("version 2 (\(versions[1].shortID)) of \(fixture.location) was pruned") == true,
            "\(String(describing: refused))")
        // The machine that pulled it keeps its manifest in its cache: the merge goes on.
        let merged = try PackageRemote.sync(other, with: fixture.location, options: fixture.options(device: "b"))
        #expect(merged.action == .merged)
        #expect(merged.version.sequence == 5)

        // A package synced with a version pruned since pulls the head: the ancestry check
        // finds its base among the record's summaries.
        let third = fixture.path("third")
        _ = try PackageRemote.pull(fixture.location, to: third, options: fixture.options(device: "c"))
        try Files.write(source + "/pages/a/page1.json", "{\"edit\": \"sixth\"}")
        _ = try PackageRemote.sync(source, with: fixture.location, options: fixture.options())
        let pruned = try PackageRemote.prune(fixture.location, policy: PrunePolicy(keepLast: 1), options: fixture.options(device: "p"))
        #expect(pruned.dropped.map(\.sequence) == [5, 4])
        let pulled = try PackageRemote.pull(fixture.location, to: third, options: fixture.options(device: "c"))
        #expect(pulled.version.sequence == 6)
        #expect(try RemoteFixture.rootHash(third) == pulled.version.rootHash)
    }

    /// A store serving a damaged blob of a pack the prune repacks: the prune stops before
    /// committing anything (exit 1's refusal), and deletes nothing.
    @Test func aDamagedBlobStopsTheRepackBeforeAnythingIsCommitted() throws {
        let fixture = try RemoteFixture("prunedamage")
        let source = try fixture.makePackage("source", pages: 30, mediaSize: 256 << 10)
        let options = fixture.options(packSize: 256 << 10)
        _ = try PackageRemote.push(source, to: fixture.location, options: options)
        let firstPacks = try Self.objects(fixture).keys.filter { $0.contains("/packs/") }
        for index in 0..<5 {
            for page in (index * 5)..<(index * 5 + 5) {
                try Files.write(source + "/pages/\(page % 2 == 0 ? "a" : "b")/page\(page).json", "{\"edited\": \(index)}")
            }
            _ = try PackageRemote.push(source, to: fixture.location, options: options)
        }
        // Damage every byte but the trailers of the first push's packs (the ones repacked).
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        for key in firstPacks {
            var (bytes, _) = try #require(try s3.getObject(bucket: fixture.bucket, key: key, limit: 64 << 20))
            let trailer = bytes.withUnsafeBytes { PackFormat.index(of: $0) }
            let end = (trailer?.last).map { $0.offset + $0.length } ?? 0
            for position in 0..<end { bytes[position] ^= 0x5a }
            _ = try s3.put(bucket: fixture.bucket, key: key, bytes: bytes)
        }
        let before = try Self.objects(fixture)
        let headBefore = try #require(try s3.getObject(bucket: fixture.bucket, key: RemoteLayout.head(fixture.location), limit: 1 << 20)).bytes
        let refused = #expect(throws: RemoteError.self) {
            try PackageRemote.prune(fixture.location, policy: PrunePolicy(keepLast: 2), options: fixture.options(device: "p"))
        }
        #expect(refused?.kind == .verificationFailed)
        #expect(refused?.message.contains("nothing was deleted") == true, "\(String(describing: refused))")
        let headAfter = try #require(try s3.getObject(bucket: fixture.bucket, key: RemoteLayout.head(fixture.location), limit: 1 << 20)).bytes
        #expect(headAfter == headBefore)
        // Nothing deleted (the marker is gone again; new packs may have been written).
        let after = try Self.objects(fixture)
        #expect(Set(before.keys).isSubset(of: Set(after.keys)))
    }

    @Test func aPolicyIsRequiredAndTheCommandPrintsThePlan() throws {
        let fixture = try RemoteFixture("prunecli")
        let source = try fixture.makePackage("source", mediaSize: 1 << 20)
        _ = try Self.pushVersions(fixture, source, count: 3, options: fixture.options())
        let pkgtool = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-cli"))
        let url = "s3://\(fixture.bucket)/\(fixture.location.prefix)"

        let none = try pkgtool.run("prune", url)
        #expect(none.status == 2)
        #expect(none.errors.contains("needs a rule"), "\(none.errors)")
        let badDuration = try pkgtool.run("prune", "--keep-within", "3 days", url)
        #expect(badDuration.status == 2)
        let unknown = try pkgtool.run("prune", "--keep", "77", url)
        #expect(unknown.status == 1, "\(unknown)")

        let dry = try pkgtool.run("prune", "--dry-run", "--keep-last", "1", url)
        #expect(dry.status == 0, "\(dry.errors)")
        #expect(dry.output.contains("would prune"), "\(dry.output)")
        #expect(dry.output.contains("would drop version 2"), "\(dry.output)")
        #expect(dry.output.contains("would drop version 1"), "\(dry.output)")

        let json = try pkgtool.run("prune", "--json", "--keep-last", "2", url)
        #expect(json.status == 0, "\(json.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect((object["dropped"] as? [[String: Any]])?.count == 1)
        #expect(object["dry_run"] as? Bool == false)

        let nothing = try pkgtool.run("prune", "--keep-last", "2", url)
        #expect(nothing.status == 0, "\(nothing.errors)")
        #expect(nothing.output.contains("nothing to prune"), "\(nothing.output)")
        let log = try pkgtool.run("log", url)
        #expect(log.status == 0, "\(log.errors)")
        #expect(log.output.split(separator: "\n").filter { $0.hasSuffix("(pruned)") }.count == 1, "\(log.output)")
        #expect(log.output.contains("pruned: versions 1\n"), "\(log.output)")
        let logJSON = try pkgtool.run("log", "--json", url)
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(logJSON.output.utf8)) as? [[String: Any]])
        #expect(listed.map { $0["pruned"] as? Bool } == [false, false, true])
        // pull --version of a pruned version: refused, exit 1.
        let pulled = try pkgtool.run("pull", "--version", "1", url, fixture.path("old"))
        #expect(pulled.status == 1, "\(pulled)")
        #expect(pulled.errors.contains("was pruned"), "\(pulled.errors)")
    }
}

extension PruneTests {
    /// Issue 28's scenario: 30 versions of 1 MiB edits at random offsets inside the 64 MiB
    /// media file of a 144 MiB package (pages and other media around it); `--keep-last 5`
    /// must leave the store at most 1.3× the package. `PKGTOOL_PRUNE_SCALE=N` divides every
    /// size by N (the edits too) for a quicker run.
    @Test func spaceComesBackAfterKeepLastFive() throws {
        let scale = ProcessInfo.processInfo.environment["PKGTOOL_PRUNE_SCALE"].flatMap { Int($0) }.map { max(1, $0) } ?? 1
        let fixture = try RemoteFixture("prunespace")
        let source = fixture.path("package")
        let mediaSize = (64 << 20) / scale
        try Files.makeDirectory(source + "/media")
        try Files.makeDirectory(source + "/pages")
        try Files.writeRandom(source + "/media/film.mov", size: mediaSize, seed: 1)
        for index in 0..<4 { try Files.writeRandom(source + "/media/clip\(index).mp4", size: (16 << 20) / scale, seed: 10 + UInt64(index)) }
        var generator = SeededBytes(seed: 5)
        for index in 0..<(2048 / scale) {
            try Files.write(source + "/pages/page\(index).json", generator.bytes(8 << 10))
        }
        let packageBytes = Int64(mediaSize + 4 * ((16 << 20) / scale) + (2048 / scale) * (8 << 10))
        let options = fixture.options()
        var versions: [VersionSummary] = []
        var offsets = SeededBytes(seed: 77)
        for index in 0..<30 {
            if index > 0 {
                let edit = (1 << 20) / scale
                let offset = Int64(offsets.next() % UInt64(mediaSize - edit))
                try fixture.overwrite(source + "/media/film.mov", at: offset, count: edit, seed: 1000 + UInt64(index))
            }
            versions.append(try PackageRemote.push(source, to: fixture.location, options: options).version)
        }
        let before = try Self.storeBytes(fixture)
        var usage = rusage()
        let result = try PackageRemote.prune(
            fixture.location, policy: PrunePolicy(keepLast: 5), options: fixture.options(device: "p"))
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let after = try Self.storeBytes(fixture)
        let ratio = Double(after) / Double(packageBytes)
        print(
            "prune figure (scale 1/\(scale)): package \(packageBytes) B, store before \(before) B (\(Double(before) / Double(packageBytes))×), "
                + "after \(after) B (\(ratio)×), \(result.seconds) s, \(result.requests) requests, "
                + "\(result.packsDeleted) packs deleted (\(result.packsRepacked) repacked into \(result.packsWritten)), "
                + "test process max RSS \(usage.ru_maxrss) KiB")
        #expect(result.kept.map(\.sequence) == [30, 29, 28, 27, 26])
        #expect(result.dropped.count == 25)
        #expect(after == result.storeBytesAfter)
        #expect(ratio <= 1.3, "the store holds \(ratio)× the package after --keep-last 5")
        // The oldest and the newest kept versions pull and verify.
        try Self.referee(fixture, versions[25], device: "r", label: "oldest")
        try Self.referee(fixture, versions[29], device: "r", label: "head")
    }
}

extension PruneTests {
    /// Pushes and pulls on threads of their own while prunes run, against the real store;
    /// then a referee pulls and verifies every version the history keeps, and every version a
    /// push reported is in the history.
    @Test func pushesAndPullsRunThroughPrunes() throws {
        let fixture = try RemoteFixture("prunerace")
        let source = try fixture.makePackage("source", mediaSize: 3 << 20)
        // Small packs: edits leave many packs partly dead, so prunes repack while pushes run.
        let pushOptions = fixture.options(packSize: 128 << 10)
        var pushed = try Self.pushVersions(fixture, source, count: 6, options: pushOptions)
        let location = fixture.location
        let pruneOptions = fixture.options(device: "p")
        let pullOptions = fixture.options(device: "c")
        let follower = fixture.path("follower")
        let failures = Mutex<[String]>([])
        let attempts = Mutex<[Int]>([])
        let pulls = Mutex(0)
        let rebases = Mutex(0)
        for round in 0..<3 {
            let group = DispatchGroup()
            let newVersions = Mutex<[VersionSummary]>([])
            // Prunes and pulls go on for as long as the pushes do.
            let pushing = Atomic(true)
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for attempt in 0..<200 where attempt == 0 || pushing.load(ordering: .acquiring) {
                    do {
                        let result = try PackageRemote.prune(location, policy: PrunePolicy(keepLast: 3), options: pruneOptions)
                        attempts.withLock { $0.append(result.attempts) }
                    } catch { failures.withLock { $0.append("prune: \(error)") } }
                }
            }
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    let versions = try Self.pushVersions(
                        location, source, count: 6, options: pushOptions, seed: 100 + UInt64(round)) { result in
                            rebases.withLock { $0 += result.rebasedOntoPrunes }
                        }
                    newVersions.withLock { $0 += versions }
                } catch { failures.withLock { $0.append("push: \(error)") } }
                pushing.store(false, ordering: .releasing)
            }
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for attempt in 0..<200 where attempt == 0 || pushing.load(ordering: .acquiring) {
                    do {
                        let result = try PackageRemote.pull(location, to: follower, options: pullOptions)
                        #expect(try RemoteFixture.rootHash(follower) == result.version.rootHash)
                        pulls.withLock { $0 += 1 }
                    } catch { failures.withLock { $0.append("pull: \(error)") } }
                }
            }
            group.wait()
            pushed += newVersions.withLock { $0 }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(pulls.withLock { $0 } >= 3)

        // The referee: every pushed version is in the history (kept or recorded as pruned),
        // and every kept one pulls and verifies.
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let store = RemoteStore(location: fixture.location, options: fixture.options(device: "referee"))
        let record = try #require(try store.readHead(s3)).record
        let chain = try PackageRemote.log(fixture.location, options: fixture.options(device: "referee"), limit: 1000)
        let chainIDs = Set(chain.map(\.id))
        for version in pushed {
            #expect(chainIDs.contains(version.id) || record.isPruned(version.sequence), "version \(version.sequence) lost")
        }
        let kept = ([record.head] + record.history).filter { !record.isPruned($0.sequence) }
        for version in kept { try Self.referee(fixture, version, device: "referee", label: "race") }
        #expect(record.head.id == pushed.last?.id)
        print(
            "prune race: \(pushed.count) versions pushed (\(rebases.withLock { $0 }) rebased onto a prune's record), "
                + "\(attempts.withLock { $0.count }) prunes (\(attempts.withLock { $0.filter { $0 > 1 }.count }) started over), "
                + "\(pulls.withLock { $0 }) pulls, \(kept.count) kept versions verified, 0 failures")
    }
}

extension PruneTests {
    /// Copies every object of `from` to `to` in the same bucket.
    static func copyRemote(_ fixture: RemoteFixture, from: String, to: String) throws {
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        let page = try s3.list(bucket: fixture.bucket, prefix: from + "/")
        #expect(page.next == nil)
        for object in page.objects {
            let (bytes, _) = try #require(try s3.getObject(bucket: fixture.bucket, key: object.key, limit: 64 << 20))
            _ = try s3.put(bucket: fixture.bucket, key: to + "/" + object.key.dropFirst(from.count + 1), bytes: bytes)
        }
    }

    /// `pkgtool prune` SIGKILLed before each of its requests in turn (the test build's
    /// `PKGTOOL_TEST_KILL_AFTER_REQUESTS`), each time on a fresh copy of the same remote:
    /// after the kill every version the policy keeps pulls and verifies, and the next prune
    /// finishes the job (every object the uninterrupted prune deleted is gone, and the kept
    /// versions still pull).
    @Test func aPruneKilledAtAnyRequestLeavesEveryKeptVersionAndTheNextOneFinishes() throws {
        let fixture = try RemoteFixture("prunekill", prefix: "template")
        // Six versions, each rewriting five more of 30 pages: the first push's pack of small
        // files ends up about a third live in the two versions kept, so the prune repacks it.
        let source = try fixture.makePackage("source", pages: 30, mediaSize: 256 << 10)
        let options = fixture.options(packSize: 256 << 10)
        var versions = [try PackageRemote.push(source, to: fixture.location, options: options).version]
        for index in 0..<5 {
            for page in (index * 5)..<(index * 5 + 5) {
                try Files.write(source + "/pages/\(page % 2 == 0 ? "a" : "b")/page\(page).json", "{\"edited\": \(index)}")
            }
            versions.append(try PackageRemote.push(source, to: fixture.location, options: options).version)
        }
        let kept = Array(versions.suffix(2))
        let template = try Self.objects(fixture)
        func remote(_ prefix: String) -> RemoteFixture {
            // The same bucket and server, another prefix.
            RemoteFixture(copying: fixture, prefix: prefix)
        }
        func url(_ prefix: String) -> String { "s3://\(fixture.bucket)/\(prefix)" }
        let arguments = ["prune", "--json", "--keep-last", "2", "--grace", "0s"]

        // The uninterrupted prune: how many requests it sends, and what it deletes.
        try Self.copyRemote(fixture, from: "template", to: "reference")
        let reference = try PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-reference"))
            .run(arguments + [url("reference")])
        #expect(reference.status == 0, "\(reference.errors)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(reference.output.utf8)) as? [String: Any])
        let total = try #require(summary["requests"] as? Int)
        // The sweep covers a repack: new packs and a blob index written before the commit.
        #expect((summary["packs_repacked"] as? Int ?? 0) > 0, "\(summary)")
        let afterReference = Set(try Self.objects(remote("reference")).keys.map { $0.dropFirst("reference/".count) })
        let deletedByReference = Set(template.keys.map { $0.dropFirst("template/".count) }).subtracting(afterReference)
        #expect(!deletedByReference.isEmpty)

        var violations: [String] = []
        var killed = 0
        for limit in 0..<total {
            let prefix = "sweep-\(limit)"
            try Self.copyRemote(fixture, from: "template", to: prefix)
            var process = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-sweep-\(limit)"))
            process.extraEnvironment["PKGTOOL_TEST_KILL_AFTER_REQUESTS"] = String(limit)
            let run = try process.run(arguments + [url(prefix)])
            if run.status != 0 { killed += 1 }
            let target = remote(prefix)
            for version in kept {
                do {
                    try Self.referee(target, version, device: "k\(limit)", label: "killed\(limit)")
                } catch {
                    violations.append("killed after \(limit) requests: version \(version.sequence) does not pull: \(error)")
                }
            }
            // The next prune finishes the job.
            let finish = try PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-finish-\(limit)"))
                .run(arguments + [url(prefix)])
            if finish.status != 0 { violations.append("killed after \(limit) requests: the next prune failed: \(finish.errors)") }
            let left = Set(try Self.objects(target).keys.map { $0.dropFirst(prefix.count + 1) })
            let notDeleted = deletedByReference.intersection(left)
            if !notDeleted.isEmpty { violations.append("killed after \(limit) requests: left \(notDeleted.sorted())") }
            for version in [kept.first!, kept.last!] {
                do {
                    try Self.referee(target, version, device: "f\(limit)", label: "finished\(limit)")
                } catch {
                    violations.append("killed after \(limit) requests, then pruned: version \(version.sequence) does not pull: \(error)")
                }
            }
        }
        print(
            "prune kill sweep: \(total) request boundaries (repacking \(summary["packs_repacked"] ?? 0) packs), "
                + "\(killed) prunes killed, \(violations.count) violations")
        #expect(killed == total)
        #expect(violations.isEmpty, "\(violations)")
    }
}

extension RemoteFixture {
    /// Another prefix of `fixture`'s bucket, sharing its server and directory.
    init(copying fixture: RemoteFixture, prefix: String) {
        server = fixture.server
        bucket = fixture.bucket
        location = RemoteLocation(bucket: fixture.bucket, prefix: prefix)
        directory = fixture.directory
    }
}

extension PruneTests {
    /// Runs `arguments` under `/usr/bin/time`: status, output, seconds and peak RSS (KiB).
    static func measured(_ arguments: [String], environment: [String: String], directory: String) throws
        -> (status: Int32, output: String, seconds: Double, rss: Int)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        let rssFile = directory + "/rss"
        process.arguments = ["-f", "%M", "-o", rssFile] + arguments
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let start = Date()
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let seconds = Date().timeIntervalSince(start)
        let rss = Int((try String(contentsOfFile: rssFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), seconds, rss)
    }

    /// Issue 28's figures, measured once (`PKGTOOL_PRUNE_FIGURES=DIR` names the release
    /// build's directory): the same 30-version history pushed with `pkgtool push` and backed up
    /// with `restic backup` to the same SeaweedFS, then `pkgtool prune --keep-last 5` against
    /// `restic forget --keep-last 5 --prune`: store bytes before and after, time, peak RSS.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["PKGTOOL_PRUNE_FIGURES"] != nil))
    func figuresAgainstRestic() throws {
        let binaries = ProcessInfo.processInfo.environment["PKGTOOL_PRUNE_FIGURES"]!
        let fixture = try RemoteFixture("prunefigures")
        let resticFixture = try RemoteFixture("prunerestic")
        let source = fixture.path("package")
        let mediaSize = 64 << 20
        try Files.makeDirectory(source + "/media")
        try Files.makeDirectory(source + "/pages")
        try Files.writeRandom(source + "/media/film.mov", size: mediaSize, seed: 1)
        for index in 0..<4 { try Files.writeRandom(source + "/media/clip\(index).mp4", size: 16 << 20, seed: 10 + UInt64(index)) }
        var generator = SeededBytes(seed: 5)
        for index in 0..<2048 { try Files.write(source + "/pages/page\(index).json", generator.bytes(8 << 10)) }
        let packageBytes = Int64(mediaSize + 4 * (16 << 20) + 2048 * (8 << 10))
        var environment = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache")).environment
        environment["RESTIC_PASSWORD"] = "pkgtool-prune"
        environment["RESTIC_CACHE_DIR"] = fixture.path("restic-cache")
        let restic = "s3:\(fixture.server.endpoint)/\(resticFixture.bucket)/restic"
        let url = "s3://\(fixture.bucket)/\(fixture.location.prefix)"
        _ = try Self.measured(["/usr/bin/restic", "-r", restic, "init"], environment: environment, directory: fixture.path(""))
        var offsets = SeededBytes(seed: 77)
        for index in 0..<30 {
            if index > 0 {
                let offset = Int64(offsets.next() % UInt64(mediaSize - (1 << 20)))
                try fixture.overwrite(source + "/media/film.mov", at: offset, count: 1 << 20, seed: 1000 + UInt64(index))
            }
            let push = try Self.measured([binaries + "/pkgtool", "push", source, url], environment: environment, directory: fixture.path(""))
            #expect(push.status == 0)
            let backup = try Self.measured(
                ["/usr/bin/restic", "-r", restic, "backup", "--quiet", source], environment: environment, directory: fixture.path(""))
            #expect(backup.status == 0)
        }
        func bucketBytes(_ bucket: String) throws -> Int64 {
            let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
            var total: Int64 = 0
            var token: String? = nil
            repeat {
                let page = try s3.list(bucket: bucket, prefix: "", continuation: token)
                total += page.objects.reduce(0) { $0 + $1.size }
                token = page.next
            } while token != nil
            return total
        }
        let pkgtoolBefore = try bucketBytes(fixture.bucket)
        let resticBefore = try bucketBytes(resticFixture.bucket)
        let prune = try Self.measured(
            [binaries + "/pkgtool", "prune", "--json", "--keep-last", "5", url], environment: environment, directory: fixture.path(""))
        #expect(prune.status == 0)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(prune.output.utf8)) as? [String: Any])
        let forget = try Self.measured(
            ["/usr/bin/restic", "-r", restic, "forget", "--keep-last", "5", "--prune"], environment: environment,
            directory: fixture.path(""))
        #expect(forget.status == 0)
        let pkgtoolAfter = try bucketBytes(fixture.bucket)
        let resticAfter = try bucketBytes(resticFixture.bucket)
        func ratio(_ bytes: Int64) -> String { String(format: "%.3f×", Double(bytes) / Double(packageBytes)) }
        print(
            """
            prune figures: package \(packageBytes) B, 30 versions of 1 MiB edits in the 64 MiB file, --keep-last 5
            pkgtool prune: store \(pkgtoolBefore) B (\(ratio(pkgtoolBefore))) → \(pkgtoolAfter) B (\(ratio(pkgtoolAfter))), \
            \(String(format: "%.2f", prune.seconds)) s, \(summary["requests"] ?? "?") requests, peak RSS \(prune.rss) KiB (pkgtool execs pkgtool-remote: one process)
            restic forget --prune: store \(resticBefore) B (\(ratio(resticBefore))) → \(resticAfter) B (\(ratio(resticAfter))), \
            \(String(format: "%.2f", forget.seconds)) s, peak RSS \(forget.rss) KiB
            """)
    }
}
