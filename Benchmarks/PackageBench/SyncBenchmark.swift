import Foundation
import Glibc
import PackageCore

/// Sync through S3, side by side in one run against one local SeaweedFS:
/// `pkgtool push` beside `rclone sync` and `restic backup` (each to its own bucket), and
/// `pkgtool pull` beside `rclone sync` back and `restic restore`, on a 64 MiB document
/// package plus a 256 MiB media file. Scenarios: first push, no-change push, fresh pull,
/// one page edited, 1 MiB inside the media file plus one page (each with an incremental
/// pull after it). Per job: time, bytes stored on the server (`rclone size` of its bucket,
/// before and after), requests (counted by the server: its Prometheus counter per bucket),
/// peak RSS.
struct SyncBenchmark {
    var directory: String
    var pkgtool: String
    var runs: Int
    var warmups: Int
    var seed: UInt64
    var documentBytes: Int64 = 64 << 20
    /// Pages of the document: 8,000 of about 4 KiB leave half of the 64 MiB to media.
    var pages = 8_000
    var mediaBytes: Int64 = 256 << 20
    var keep = false

    struct Result {
        var shape: ShapeRecord
        var measurements: [JobMeasurement]
        var checks: [Check]
        var notes: [String]
    }

    /// One run of a job: its cost, and what the server saw.
    struct Run {
        var cost: ProcessCost
        var stored: Int64
        var requests: Int
        var command: String
    }

    /// A job: a name, the bucket it talks to, and how to run it once.
    struct SyncJob {
        var name: String
        var tool: String
        var bucket: String
        var measuresStorage: Bool
        var command: () throws -> [String]
    }

    func run(progress: ProgressDisplay) throws -> Result {
        guard let rclone = Spawn.which("rclone"), let restic = Spawn.which("restic") else {
            throw BenchError("the sync suite needs rclone and restic (apt-get install rclone restic)")
        }
        try FileSystem.makeDirectories(directory)
        defer { if !keep { try? FileSystem.removeTree(directory) } }
        var notes: [String] = []

        // The package: the document shape at 64 MiB, and one large media file.
        progress.log("sync suite: generating a \(Format.bytes(documentBytes)) document package (\(pages) pages) plus a \(Format.bytes(mediaBytes)) media file")
        let shape = PackageShape.make(.document, bytes: documentBytes, entries: pages, seed: seed)
        let clock = Date()
        var package = try ShapeGenerator.generate(shape, at: directory + "/source")
        let mediaPath = "media/feature-film.mp4"
        try ShapeGenerator.writeRandomFile(
            package.root + "/" + mediaPath, size: mediaBytes, seed: ShapeGenerator.mix(seed, 0x5359_4E43))
        package.largeFiles.append(GeneratedPackage.LargeFile(path: mediaPath, size: mediaBytes))
        package.totalBytes += mediaBytes
        package.entryCount += 1
        let tree = SourceTree(package)
        let source = package.root
        var shapeRecord = ShapeRecord(
            shape: shape, slug: "sync-document", label: "\(shape.label) + one \(Format.bytes(mediaBytes)) media file",
            totalBytes: package.totalBytes, entries: package.entryCount, generationSeconds: Date().timeIntervalSince(clock))

        progress.log("sync suite: starting SeaweedFS")
        let store = try SeaweedStore(directory: directory + "/seaweedfs") { progress.log($0) }
        defer { store.stop() }
        let remote = "s3://bench-pkgtool/doc"
        for bucket in ["bench-pkgtool", "bench-rclone", "bench-restic"] { try store.rclone(["mkdir", "bench:\(bucket)"]) }
        let resticRepository = "s3:\(store.endpoint)/bench-restic/doc"
        let resticEnvironment = ["RESTIC_PASSWORD": "pkgbench", "RESTIC_CACHE_DIR": directory + "/restic-cache"]
        let pkgtoolEnvironment = ["PKGTOOL_CACHE_DIR": directory + "/pkgtool-cache"]
        try runQuietly(store.command(restic, ["-r", resticRepository, "init"], extra: resticEnvironment))

        var counter = 0
        func fresh(_ label: String) -> String {
            counter += 1
            return "\(directory)/\(label)-\(counter)"
        }
        let pushJobs = [
            SyncJob(name: "pkgtool push", tool: "pkgtool", bucket: "bench-pkgtool", measuresStorage: true) {
                store.command(pkgtool, ["push", "--json", source, remote], extra: pkgtoolEnvironment)
            },
            SyncJob(name: "rclone sync (push)", tool: "rclone", bucket: "bench-rclone", measuresStorage: true) {
                store.command(rclone, ["sync", source, "bench:bench-rclone/doc"])
            },
            SyncJob(name: "restic backup", tool: "restic", bucket: "bench-restic", measuresStorage: true) {
                store.command(restic, ["-r", resticRepository, "backup", "--quiet", source], extra: resticEnvironment)
            },
        ]
        var measurements: [JobMeasurement] = []
        func record(_ scenario: String, _ jobs: [SyncJob], _ runs: [[Run]]) {
            for (job, outcomes) in zip(jobs, runs) where !outcomes.isEmpty {
                measurements.append(Self.measurement(scenario: scenario, job: job, runs: outcomes))
            }
        }

        // First push: one run each, into empty buckets.
        progress.log("sync suite: first push (pkgtool, rclone sync, restic backup)")
        record("first-push", pushJobs, try pushJobs.map { [try measure($0, store: store)] })

        // No change.
        record(
            "no-change", pushJobs,
            try rounds(pushJobs, store: store, progress: progress, label: "no-change push") { _ in })

        // Fresh pulls, each into a new directory.
        var pulledByPkgtool: [String] = []
        var pulledByRclone: [String] = []
        var restored: [String] = []
        let freshPulls = [
            SyncJob(name: "pkgtool pull (fresh)", tool: "pkgtool", bucket: "bench-pkgtool", measuresStorage: false) {
                let target = fresh("pkgtool-pull")
                pulledByPkgtool.append(target)
                return store.command(pkgtool, ["pull", "--json", "--fsync", "none", remote, target], extra: pkgtoolEnvironment)
            },
            SyncJob(name: "rclone sync (fresh pull)", tool: "rclone", bucket: "bench-rclone", measuresStorage: false) {
                let target = fresh("rclone-pull")
                pulledByRclone.append(target)
                return store.command(rclone, ["sync", "bench:bench-rclone/doc", target])
            },
            SyncJob(name: "restic restore (fresh)", tool: "restic", bucket: "bench-restic", measuresStorage: false) {
                let target = fresh("restic-restore")
                restored.append(target)
                return store.command(
                    restic, ["-r", resticRepository, "restore", "latest", "--target", target], extra: resticEnvironment)
            },
        ]
        record("fresh-pull", freshPulls, try rounds(freshPulls, store: store, progress: progress, label: "fresh pull") { _ in })
        let freshEqual = try Spawn.run(pkgtool, ["diff", source, pulledByPkgtool.last!]).status == 0
        // One copy of each kind stays for the incremental pulls; the others go.
        for path in pulledByPkgtool.dropLast() + pulledByRclone.dropLast() + restored { try FileSystem.removeTree(path) }
        let pkgtoolCopy = pulledByPkgtool.last!
        let rcloneCopy = pulledByRclone.last!

        // Edits: each round one new edit, pushed by all three, then pulled by pkgtool and rclone.
        let pulls = [
            SyncJob(name: "pkgtool pull (incremental)", tool: "pkgtool", bucket: "bench-pkgtool", measuresStorage: false) {
                store.command(pkgtool, ["pull", "--json", "--fsync", "none", remote, pkgtoolCopy], extra: pkgtoolEnvironment)
            },
            SyncJob(name: "rclone sync (incremental pull)", tool: "rclone", bucket: "bench-rclone", measuresStorage: false) {
                store.command(rclone, ["sync", "bench:bench-rclone/doc", rcloneCopy])
            },
        ]
        for scenario in ["small-edit", "media-1mib"] {
            let jobs = pushJobs + pulls
            var lastEdit = Edit()
            let outcomes = try rounds(jobs, store: store, progress: progress, label: scenario, rotate: false) { _ in
                lastEdit = try tree.apply(.smallEdit)
                if scenario == "media-1mib" {
                    lastEdit = try Self.patchMedia(tree, path: mediaPath, size: mediaBytes, page: lastEdit)
                }
            }
            shapeRecord.edits[scenario] = lastEdit
            record(scenario, jobs, outcomes)
        }
        let incrementalEqual = try Spawn.run(pkgtool, ["diff", source, pkgtoolCopy]).status == 0
        if !incrementalEqual { notes.append("sync: the incrementally pulled package differs from the source") }

        let checks = Self.checks(measurements, freshPullEqual: freshEqual && incrementalEqual)
        notes.append(
            "sync: each tool has its own bucket on one local SeaweedFS \(store.endpoint) (weed server -s3, signed requests); "
                + "stored = growth of the bucket (rclone size), requests = the server's count for the bucket; rclone 1.60 "
                + "and restic 0.14 with their defaults; pkgtool pull and restic restore are run with --fsync none and "
                + "no fsync respectively, like rclone")
        return Result(shape: shapeRecord, measurements: measurements, checks: checks, notes: notes)
    }

    /// 1 MiB of fresh bytes in the middle of the media file (in place), with the page's time.
    static func patchMedia(_ tree: SourceTree, path: String, size: Int64, page: Edit) throws -> Edit {
        let count = 1 << 20
        let offset = (size / 2 + Int64(tree.edits) * 7_777_777) % (size - Int64(count)) / 4096 * 4096
        let file = try FileDescriptor.open(tree.package.root + "/" + path, access: .writeOnly)
        var generator = SeededGenerator(seed: ShapeGenerator.mix(tree.package.shape.seed, 0x4D45_4449 &+ UInt64(tree.edits)))
        let buffer = ChunkBuffer()
        let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<count])
        generator.fill(chunk)
        try file.write(UnsafeRawBufferPointer(chunk), at: offset)
        try file.setModificationTime(GeneratedPackage.baseTime + Int64(3600 + tree.edits) * 1_000_000_000)
        var edit = page
        edit.filesChanged += 1
        edit.bytesChanged += Int64(count)
        edit.description = "\(Format.bytes(Int64(count))) at offset \(offset) of \(path) (\(Format.bytes(size))) and \(page.description)"
        return edit
    }

    /// Warm-ups then `runs` rounds; `before` makes each round's edit. Jobs rotate from round
    /// to round unless `rotate` is false (pulls must follow the pushes they fetch).
    func rounds(
        _ jobs: [SyncJob], store: SeaweedStore, progress: ProgressDisplay, label: String, rotate: Bool = true,
        before: (Int) throws -> Void
    ) throws -> [[Run]] {
        var outcomes = Array(repeating: [Run](), count: jobs.count)
        for round in 0..<(warmups + runs) {
            try before(round)
            let measured = round >= warmups
            for offset in 0..<jobs.count {
                let index = rotate ? (offset + round) % jobs.count : offset
                progress.step("sync · \(label) · \(measured ? "run \(round - warmups + 1)/\(runs)" : "warm-up") · \(jobs[index].name)")
                let run = try measure(jobs[index], store: store)
                if measured { outcomes[index].append(run) }
            }
        }
        return outcomes
    }

    /// Runs a job once through pkgbench-measure, with the server's counts around it.
    func measure(_ job: SyncJob, store: SeaweedStore) throws -> Run {
        let command = try job.command()
        let storedBefore = job.measuresStorage ? try store.stored(job.bucket).bytes : 0
        let requestsBefore = try store.requests(job.bucket)
        let cost = try Spawn.run("/usr/bin/env", command, captureOutput: true)
        let requests = try store.requests(job.bucket) - requestsBefore
        let stored = job.measuresStorage ? try store.stored(job.bucket).bytes - storedBefore : 0
        return Run(cost: cost, stored: stored, requests: requests, command: shellQuoted(["env"] + command))
    }

    private func runQuietly(_ command: [String]) throws {
        _ = try Spawn.run("/usr/bin/env", command)
    }

    static func measurement(scenario: String, job: SyncJob, runs: [Run]) -> JobMeasurement {
        let costs = runs.map(\.cost)
        var measurement = JobMeasurement(
            suite: "sync", shape: "sync-document", scenario: scenario, job: job.name, tool: job.tool, strategy: nil,
            fsync: nil, command: runs.last?.command ?? "", runs: runs.count, seconds: Distribution(costs.map(\.seconds)),
            bytesWritten: Distribution(costs.map { Double($0.bytesWritten) }),
            bytesRead: Distribution(costs.map { Double($0.bytesRead) }), filesWritten: nil, reportedBytesWritten: nil,
            peakRssBytes: costs.map(\.peakRSSBytes).max(),
            coresBusy: Sample.median(costs.map { ($0.userSeconds + $0.systemSeconds) / max($0.seconds, 1e-9) }),
            ratioToFull: nil, packageBytes: nil, packageEntries: nil)
        measurement.requests = Int(Sample.median(runs.map { Double($0.requests) }))
        if job.measuresStorage { measurement.bytesStored = Int64(Sample.median(runs.map { Double($0.stored) })) }
        return measurement
    }

    /// Issue 14's targets on this run's figures.
    static func checks(_ measurements: [JobMeasurement], freshPullEqual: Bool) -> [Check] {
        func find(_ scenario: String, _ job: String) -> JobMeasurement? {
            measurements.first { $0.scenario == scenario && $0.job == job }
        }
        var checks: [Check] = []
        func ratio(_ name: String, _ scenario: String, _ peer: String, limit: Double) {
            guard let ours = find(scenario, "pkgtool push"), let theirs = find(scenario, peer) else { return }
            let value = ours.seconds.median / max(theirs.seconds.median, 1e-9)
            checks.append(
                Check(
                    suite: "sync", name: name, value: value, shown: Format.ratio(value), want: "≤ " + Format.ratio(limit),
                    met: value <= limit, source: "a sync takes no longer than the tools people use for it"))
        }
        if let media = find("media-1mib", "pkgtool push"), let stored = media.bytesStored {
            checks.append(
                Check(
                    suite: "sync", name: "push after 1 MiB in the media file + a page: new objects stored",
                    value: Double(stored), shown: Format.bytes(stored), want: "≤ 6.0 MiB", met: stored <= 6 << 20,
                    source: "a push stores about what changed, not the file"))
        }
        ratio("push after 1 MiB in the media file + a page: time vs rclone sync", "media-1mib", "rclone sync (push)", limit: 0.5)
        ratio("push after 1 MiB in the media file + a page: time vs restic backup", "media-1mib", "restic backup", limit: 1.0)
        ratio("first push: time vs rclone sync", "first-push", "rclone sync (push)", limit: 1.0)
        ratio("no-change push: time vs no-change rclone sync", "no-change", "rclone sync (push)", limit: 0.5)
        checks.append(
            Check(
                suite: "sync", name: "fresh and incremental pulls equal the pushed package (pkgtool diff)",
                value: freshPullEqual ? 1 : 0, shown: freshPullEqual ? "equal" : "DIFFERENT", want: "equal",
                met: freshPullEqual, source: "what is pulled is exactly what was pushed"))
        let peak = measurements.filter { $0.tool == "pkgtool" }.compactMap(\.peakRssBytes).max() ?? 0
        checks.append(
            Check(
                suite: "sync", name: "pkgtool push and pull: peak RSS", value: Double(peak), shown: Format.bytes(peak),
                want: "≤ 64.0 MiB", met: peak <= 64 << 20, source: "memory stays small whatever the package's size"))
        return checks
    }
}
