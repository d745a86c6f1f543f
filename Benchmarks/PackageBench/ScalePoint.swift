import Foundation
import PackageCore

/// One point of the scale suite: a generated `small-files` package of `files` files and
/// the targets its operations make (fresh directories, archives, remote prefixes), with the
/// jobs of each operation.
final class ScalePoint {
    let files: Int
    let directory: String
    let source: String
    let tree: SourceTree
    private(set) var record: ShapeRecord
    let pkgtool: String
    let runs: Int
    let warmups: Int
    var tools = ScaleSuite.Tools(sh: "/bin/sh", rsync: "rsync", zip: nil, restic: nil)
    var store: SeaweedStore?

    /// The package and rsync's copy the first save's last run made: the targets of the
    /// saves, diffs and push after it.
    private(set) var package: String?
    private(set) var copy: String?
    /// The remote prefix and restic repository the last push wrote: what the pulls fetch.
    private var pushedPrefix: String?
    private var resticRepository: String?
    private var pulled: String?
    private var counter = 0

    init(
        files: Int, seed: UInt64, directory: String, pkgtool: String, runs: Int, warmups: Int, progress: ProgressDisplay
    ) throws {
        self.files = files
        self.directory = directory
        self.pkgtool = pkgtool
        self.runs = runs
        self.warmups = warmups
        source = directory + "/src"
        let shape = PackageShape.make(.smallFiles, entries: files, seed: seed)
        try DiskSpace.require(
            bytes: Self.diskNeed(files: files, runs: runs + warmups), at: directory,
            for: "the scale suite at \(Format.count(files)) files (the source, its copies, archives and the store)")
        try FileSystem.makeDirectories(directory)
        progress.log("scale suite: generating \(shape.label) (seed \(seed))")
        let start = Date()
        let generated = try ShapeGenerator.generate(shape, at: source)
        record = ShapeRecord(
            shape: shape, slug: shape.slug, label: shape.label, totalBytes: generated.totalBytes,
            entries: generated.entryCount, generationSeconds: Date().timeIntervalSince(start))
        tree = SourceTree(generated)
        progress.log(
            "scale suite: \(Format.count(files)) files (\(Format.bytes(generated.totalBytes))) generated in "
                + Format.seconds(record.generationSeconds))
    }

    /// About what a point needs on disk: each small file takes a 4 KiB block, and the first
    /// saves make three trees per run; the pulls two more, the archives and the store about
    /// the bytes again each.
    static func diskNeed(files: Int, runs: Int) -> Int64 {
        let tree = Int64(files) * 4096 + Int64(files / 100) * 4096
        return tree * Int64(1 + 3 * runs + 2 * runs) + Int64(files) * 2048 * Int64(4 * runs)
    }

    /// A number not used before at this point: fresh names for targets, prefixes, caches.
    func next() -> Int {
        counter += 1
        return counter
    }

    func fresh(_ label: String) -> String { "\(directory)/\(label)-\(next())" }

    /// Every operation in turn. An operation that fails (a tool's error) is noted and the
    /// next goes on: a figure missing is better than a run lost.
    func measureAll(progress: ProgressDisplay) -> (measurements: [JobMeasurement], notes: [String], equal: Bool) {
        var measurements: [JobMeasurement] = []
        var notes: [String] = []
        for operation in ScaleSuite.Operation.allCases {
            do {
                let jobs = try self.jobs(operation)
                guard !jobs.isEmpty else { continue }
                let outcomes = try runInterleaved(
                    jobs, runs: runs, warmups: warmups, progress: progress, label: "scale · \(record.slug) · \(operation.rawValue)"
                ) { [self] _ in
                    if operation == .edit { record.edits[operation.rawValue] = try tree.rewriteSpread(ScaleSuite.editedFiles) }
                }
                for (job, jobOutcomes) in zip(jobs, outcomes) {
                    var measurement = JobMeasurement(
                        suite: "scale", shape: record.slug, scenario: operation.rawValue, job: job, outcomes: jobOutcomes)
                    measurement.packageEntries = files
                    measurement.packageBytes = record.totalBytes
                    measurements.append(measurement)
                    // Each figure as it is known: a long point interrupted still leaves its log.
                    progress.log(
                        "scale · \(Format.count(files)) files · \(operation.rawValue) · \(job.name): "
                            + "\(Format.seconds(measurement.seconds.median)), peak RSS "
                            + (measurement.peakRssBytes.map(Format.bytes) ?? "–"))
                }
                if operation == .pack { try removeArchives() }
            } catch {
                notes.append("scale: \(Format.count(files)) files: \(operation.rawValue) failed: \(error)")
                progress.warn("scale: \(Format.count(files)) files: \(operation.rawValue) failed: \(error)")
            }
        }
        progress.log("scale suite: checking that the package, rsync's copy and the pulled package equal the source")
        var equal = true
        for target in [package, copy, pulled] {
            guard let target else {
                equal = false
                continue
            }
            if (try? Spawn.run(pkgtool, ["diff", source, target])) == nil {
                equal = false
                notes.append("scale: \(target) does not hold the same tree as \(source)")
            }
        }
        return (measurements, notes, equal)
    }

    /// The jobs of one operation (none when its tools are missing).
    func jobs(_ operation: ScaleSuite.Operation) throws -> [Job] {
        switch operation {
        case .firstSave: return firstSaveJobs()
        case .noChange, .edit: return [saveJob(), rsyncJob(dryRun: false)]
        case .diff:
            let (package, source) = (try need(package), self.source)
            return [
                command("pkgtool diff PKG", tool: "pkgtool", pkgtool, ["diff", package]),
                command("pkgtool diff SRC PKG", tool: "pkgtool", strategy: "two-trees", pkgtool, ["diff", source, package]),
                rsyncJob(dryRun: true),
            ]
        case .pack: return packJobs()
        case .push, .pull:
            guard let store, let restic = tools.restic else { return [] }
            return operation == .push ? try pushJobs(store, restic: restic) : try pullJobs(store, restic: restic)
        }
    }

    private func need(_ path: String?) throws -> String {
        guard let path else { throw BenchError("the first save did not make its package and copy") }
        return path
    }

    /// A job running one command (no state between runs).
    private func command(_ name: String, tool: String, strategy: String? = nil, _ program: String, _ arguments: [String]) -> Job {
        Job(name: name, tool: tool, strategy: strategy) {
            Outcome(cost: try Spawn.run(program, arguments, captureOutput: true), command: shellQuoted([program] + arguments))
        }
    }

    /// `sh -c SCRIPT`, recorded as the script.
    private func shell(_ script: String) throws -> Outcome {
        Outcome(cost: try Spawn.run(tools.sh, ["-c", script]), command: script)
    }

    private func firstSaveJobs() -> [Job] {
        let (pkgtool, source, rsync) = (self.pkgtool, self.source, tools.rsync)
        return [
            Job(name: "pkgtool save", tool: "pkgtool") { [self] in
                let target = fresh("pkg")
                let arguments = ["save", "--json", source, target]
                let cost = try Spawn.run(pkgtool, arguments, captureOutput: true)
                package = target
                return Outcome(
                    cost: cost, filesWritten: JSONFields.integer(cost.standardOutput, "files_written"),
                    reportedBytes: JSONFields.reportedBytes(cost.standardOutput), command: shellQuoted([pkgtool] + arguments))
            },
            Job(name: "cp -a + sync", tool: "cp") { [self] in
                let target = fresh("cp")
                var outcome = try shell("cp -a \(shellQuoted([source])) \(shellQuoted([target])) && sync -f \(shellQuoted([target]))")
                outcome.filesWritten = tree.fileCount
                return outcome
            },
            Job(name: "rsync -a + sync", tool: "rsync") { [self] in
                let target = fresh("rsync")
                var outcome = try shell(
                    "\(shellQuoted([rsync])) -a \(shellQuoted([source + "/"])) \(shellQuoted([target + "/"])) && sync -f \(shellQuoted([target]))")
                copy = target
                outcome.filesWritten = tree.fileCount
                return outcome
            },
        ]
    }

    /// `pkgtool save --json SRC PKG` (default strategy and durability) into the package.
    private func saveJob() -> Job {
        Job(name: "pkgtool save", tool: "pkgtool") { [self] in
            let arguments = ["save", "--json", source, try need(package)]
            let cost = try Spawn.run(pkgtool, arguments, captureOutput: true)
            return Outcome(
                cost: cost, filesWritten: JSONFields.integer(cost.standardOutput, "files_written"),
                reportedBytes: JSONFields.reportedBytes(cost.standardOutput), command: shellQuoted([pkgtool] + arguments))
        }
    }

    /// `rsync -a --delete --stats SRC/ COPY/`, or its dry run (the stat walk of both trees).
    private func rsyncJob(dryRun: Bool) -> Job {
        Job(name: dryRun ? "rsync -a --delete --dry-run" : "rsync -a --delete", tool: "rsync") { [self] in
            let arguments = ["-a", "--delete"] + (dryRun ? ["--dry-run"] : []) + ["--stats", source + "/", try need(copy) + "/"]
            let cost = try Spawn.run(tools.rsync, arguments, captureOutput: true)
            return Outcome(
                cost: cost, filesWritten: JSONFields.rsyncTransferred(cost.standardOutput),
                command: shellQuoted([tools.rsync] + arguments))
        }
    }

    /// `pkgtool pack SRC NEW.zip` beside `cd SRC && zip -r -q NEW.zip .`, each into a new archive.
    private func packJobs() -> [Job] {
        let (pkgtool, source) = (self.pkgtool, self.source)
        var jobs = [
            Job(name: "pkgtool pack", tool: "pkgtool") { [self] in
                let arguments = ["pack", source, fresh("pkgtool") + ".zip"]
                return Outcome(cost: try Spawn.run(pkgtool, arguments), command: shellQuoted([pkgtool] + arguments))
            }
        ]
        if let zip = tools.zip {
            jobs.append(
                Job(name: "zip -r -q", tool: "zip") { [self] in
                    try shell("cd \(shellQuoted([source])) && \(shellQuoted([zip])) -r -q \(shellQuoted([fresh("zip") + ".zip"])) .")
                })
        }
        return jobs
    }

    private func removeArchives() throws {
        for name in try DirectoryListing.names(in: try FileDescriptor.openDirectory(directory)) where name.hasSuffix(".zip") {
            try FileSystem.remove(directory + "/" + name)
        }
    }

    /// `pkgtool push PKG s3://bench-pkgtool/PREFIX` beside `restic backup SRC`, each run to a
    /// new prefix or repository (restic's `init` untimed), with empty caches: first pushes.
    private func pushJobs(_ store: SeaweedStore, restic: String) throws -> [Job] {
        let (package, source, pkgtool) = (try need(package), self.source, self.pkgtool)
        return [
            Job(name: "pkgtool push", tool: "pkgtool") { [self] in
                let prefix = "scale-\(files)-\(next())"
                let command = store.command(
                    pkgtool, ["push", "--json", package, "s3://bench-pkgtool/\(prefix)"],
                    extra: ["PKGTOOL_CACHE_DIR": fresh("pkgtool-cache")])
                let cost = try Spawn.run("/usr/bin/env", command, captureOutput: true)
                pushedPrefix = prefix
                return Outcome(cost: cost, command: shellQuoted(["env"] + command))
            },
            Job(name: "restic backup", tool: "restic") { [self] in
                let repository = "s3:\(store.endpoint)/bench-restic/scale-\(files)-\(next())"
                let environment = ["RESTIC_PASSWORD": "pkgbench", "RESTIC_CACHE_DIR": fresh("restic-cache")]
                _ = try Spawn.run("/usr/bin/env", store.command(restic, ["-r", repository, "init"], extra: environment))
                let command = store.command(restic, ["-r", repository, "backup", "--quiet", source], extra: environment)
                let cost = try Spawn.run("/usr/bin/env", command, captureOutput: true)
                resticRepository = repository
                return Outcome(cost: cost, command: shellQuoted(["env"] + command))
            },
        ]
    }

    /// `pkgtool pull --fsync none` and `restic restore latest` of the last push, each into a
    /// new directory with an empty cache.
    private func pullJobs(_ store: SeaweedStore, restic: String) throws -> [Job] {
        guard let prefix = pushedPrefix, let repository = resticRepository else {
            throw BenchError("nothing was pushed to pull")
        }
        let pkgtool = self.pkgtool
        return [
            Job(name: "pkgtool pull", tool: "pkgtool") { [self] in
                let target = fresh("pulled")
                let command = store.command(
                    pkgtool, ["pull", "--json", "--fsync", "none", "s3://bench-pkgtool/\(prefix)", target],
                    extra: ["PKGTOOL_CACHE_DIR": fresh("pkgtool-cache")])
                let cost = try Spawn.run("/usr/bin/env", command, captureOutput: true)
                pulled = target
                return Outcome(cost: cost, command: shellQuoted(["env"] + command))
            },
            Job(name: "restic restore", tool: "restic") { [self] in
                let environment = ["RESTIC_PASSWORD": "pkgbench", "RESTIC_CACHE_DIR": fresh("restic-cache")]
                let command = store.command(
                    restic, ["-r", repository, "restore", "latest", "--target", fresh("restored")], extra: environment)
                return Outcome(cost: try Spawn.run("/usr/bin/env", command, captureOutput: true), command: shellQuoted(["env"] + command))
            },
        ]
    }
}
