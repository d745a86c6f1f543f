import Foundation
import PackageCore

/// The save suite on one generated shape: every scenario, with `pkgtool save` under each
/// strategy and fsync policy and the peers doing the same job (`rsync -a --delete`
/// bringing a copy up to date, `cp -r` making a full copy), interleaved round by round.
///
/// Each job has its own target, made fresh for the run (see `Workspace`). Each round makes
/// one new edit in the source and every job brings its own target from the previous state
/// to the new one: the same change, measured side by side. `cp -r` copies into a fresh
/// directory each round; those copies are removed after the scenario. No tree is deleted
/// and recreated between rounds except by the jobs themselves: `full` replaces the whole
/// package every time, and on this machine creating files soon after deleting many is
/// slow — `full` and `cp -r` pay that, as they would in real use.
struct SaveSuite {
    var shape: PackageShape
    var scenarios: [Scenario]
    var runs: Int
    var warmups = 1
    /// A directory that must not exist yet; removed at the end unless `keep`.
    var directory: String
    var pkgtool: String
    /// `atomic-keep` is `--strategy atomic --keep-previous` (`Workspace.saveArguments`).
    var strategies = ["full", "atomic", "atomic-keep", "journaled"]
    var fsyncPolicies = ["none", "full"]
    /// Whether a pkgtool job (scenario, strategy, fsync) runs; `--quick` leaves out the slowest.
    var includes: @Sendable (Scenario, String, String) -> Bool = { _, _, _ in true }
    /// Scenarios in which `cp -r` is measured (its cost does not depend on the change).
    var copyPeerIn: @Sendable (Scenario) -> Bool = { _ in true }
    /// Also measure a no-change `pkgtool diff PKG` against `rsync -a --dry-run` at the end.
    var measureDiff = true
    /// Also measure hashing on this shape (for `--quick`; the full run has the hash suite).
    var measureHash = false
    /// Scenarios in which `rsync -a --inplace --no-whole-file` is measured too (it writes
    /// only the changed blocks of a file, after reading both sides whole).
    var inplacePeerIn: @Sendable (Scenario) -> Bool = { _ in false }
    /// Compare each target with the source byte for byte once it has finished, and run
    /// `pkgtool verify` on each package: one check per shape (large-file suite).
    var comparesBytes = false
    /// Where the targets live, when not in `directory` (an XFS image's mount point), and
    /// the image whose device's writes each job counts.
    var targetDirectory: String?
    var device: LoopImage?
    /// Appended to the shape's slug in the record ("-xfs").
    var slugSuffix = ""
    /// A second pkgtool measured beside the first, job for job, on its own packages.
    var baseline: String?
    var keep = false

    struct Result {
        var shape: ShapeRecord
        var measurements: [JobMeasurement]
        var notes: [String]
        var checks: [Check] = []
    }

    func run(progress: ProgressDisplay) throws -> Result {
        let rsync = Spawn.which("rsync")
        let cp = Spawn.which("cp")
        let scenarios = self.scenarios.filter { $0.applies(to: shape) }
        let targets = strategies.flatMap { strategy in
            fsyncPolicies.filter { fsync in scenarios.contains { includes($0, strategy, fsync) } }.map { (strategy, $0) }
        }
        let copyRounds = scenarios.contains(where: copyPeerIn) && cp != nil ? runs + warmups : 0
        let inplace = scenarios.contains(where: inplacePeerIn) && rsync != nil
        let packageCount = targets.count * (baseline == nil ? 1 : 2)
        let slug = shape.slug + slugSuffix
        if let targetDirectory {
            try DiskSpace.require(bytes: shape.bytes * 2, at: directory, for: "the source of \(shape.label)")
            try DiskSpace.require(
                bytes: shape.bytes * Int64(packageCount + 2 + (inplace ? 1 : 0) + copyRounds), at: targetDirectory,
                for: "the save suite's targets (\(packageCount) packages, rsync's copies)", shared: false)
        } else {
            try DiskSpace.require(
                bytes: shape.bytes * Int64(packageCount + 3 + (inplace ? 1 : 0) + copyRounds), at: directory,
                for: "the save suite on \(shape.label) (\(packageCount) packages, rsync's copies, the source, cp's copies)")
        }
        var notes: [String] = []
        if rsync == nil { notes.append("rsync is not installed: no rsync rows") }
        if cp == nil { notes.append("cp is not on PATH: no cp -r rows") }

        let workspace = try Workspace(
            shape: shape, directory: directory, targetDirectory: targetDirectory, targets: targets, rsync: rsync,
            inplacePeer: inplace, baseline: baseline, device: device, slug: slug, pkgtool: pkgtool, progress: progress)
        defer {
            if !keep {
                progress.log("removing \(directory)")
                try? workspace.remove()
                progress.log("removed")
            }
        }
        var measurements = workspace.firstSaves
        var checks: [Check] = []
        var problems: [(path: String, problem: String?)] = []
        for (scenarioIndex, scenario) in scenarios.enumerated() {
            var jobs: [Job] = []
            for (strategy, fsync) in targets where includes(scenario, strategy, fsync) {
                jobs.append(workspace.saveJob(strategy: strategy, fsync: fsync))
                if baseline != nil { jobs.append(workspace.saveJob(strategy: strategy, fsync: fsync, baseline: true)) }
            }
            if let rsync { jobs.append(workspace.rsyncJob(rsync)) }
            if let rsync, inplacePeerIn(scenario) { jobs.append(workspace.rsyncInPlaceJob(rsync)) }
            if let cp, copyPeerIn(scenario) { jobs.append(workspace.copyJob(cp, label: scenario.rawValue)) }
            var largest = Edit()
            let outcomes = try runInterleaved(
                jobs, runs: runs, warmups: warmups, progress: progress, label: "\(slug) · \(scenario.rawValue)"
            ) { _ in
                var edit = try workspace.tree.apply(scenario)
                edit.bytesChanged = max(edit.bytesChanged, largest.bytesChanged)
                largest = edit
            }
            workspace.record.edits[scenario.rawValue] = largest
            for (job, jobOutcomes) in zip(jobs, outcomes) {
                measurements.append(
                    JobMeasurement(suite: "save", shape: slug, scenario: scenario.rawValue, job: job, outcomes: jobOutcomes))
            }
            try workspace.removeCopies()
            // Each target must hold exactly the source after the last scenario it takes part
            // in (later ones leave it behind): otherwise its figures would mean nothing.
            let finished = targets.filter { target in
                includes(scenario, target.0, target.1)
                    && !scenarios[(scenarioIndex + 1)...].contains { includes($0, target.0, target.1) }
            }
            progress.log("\(slug) · \(scenario.rawValue) done; checking the targets that finished")
            let last = scenarioIndex == scenarios.count - 1
            let finishedPaths = finished.flatMap { target in
                [workspace.package(target.0, target.1)] + [baseline == nil ? nil : workspace.package(target.0, target.1, baseline: true)]
            }.compactMap { $0 } + (last ? [workspace.copy, workspace.inplaceCopy].compactMap { $0 } : [])
            try workspace.verifyTargets(finishedPaths)
            if comparesBytes {
                progress.log("\(slug): comparing \(finishedPaths.count) targets with the source byte for byte, pkgtool verify on each package")
                problems += try workspace.compareTargetsBytes(finishedPaths)
            }
        }
        if comparesBytes {
            let wrong = problems.filter { $0.problem != nil }
            checks.append(
                Check(
                    suite: "save", name: "\(slug): every target equals its source byte for byte (and pkgtool verify passes)",
                    value: Double(wrong.count),
                    shown: wrong.isEmpty ? "all \(problems.count) equal" : "\(wrong.count) of \(problems.count) differ",
                    want: "all equal", met: wrong.isEmpty, source: "every copy is exactly its source"))
            for (path, problem) in wrong { notes.append("\(slug): \(path) \(problem!)") }
        }
        addRatiosToFull(&measurements)
        if let first = measurements.first(where: { $0.scenario == Workspace.firstSave && $0.strategy == "full" && $0.tool == "pkgtool" }),
            let steady = measurements.first(where: {
                $0.scenario != Workspace.firstSave && $0.strategy == "full" && $0.fsync == "none" && $0.tool == "pkgtool"
            })
        {
            let slower = steady.seconds.median > 1.5 * first.seconds.median
            notes.append(
                "\(slug): full's first save into a fresh directory took \(Format.seconds(first.seconds.median)); "
                    + "a save replacing the package (\(steady.scenario ?? ""), median) took \(Format.seconds(steady.seconds.median))"
                    + (slower
                        ? " — it creates every file again just after deleting the previous tree's, the slow path of this ext4 "
                            + "(measured on this machine's ext4 before); cp -r's copies meet it too"
                        : " — the delete-then-create slow path of ext4 cost little in this run"))
        }

        if measureDiff, let last = scenarios.last, let (strategy, fsync) = targets.last(where: { includes(last, $0.0, $0.1) }) {
            measurements += try diffJobs(workspace, package: workspace.package(strategy, fsync)!, rsync: rsync, progress: progress)
        }
        if measureHash {
            measurements += try hashJobs(workspace, progress: progress)
        }
        return Result(shape: workspace.record, measurements: measurements, notes: notes, checks: checks)
    }

    /// A no-change diff of a package against its manifest, beside rsync's stat walk of two
    /// trees with nothing to do (`rsync -a --dry-run`) and find's stat walk of one tree.
    private func diffJobs(_ workspace: Workspace, package: String, rsync: String?, progress: ProgressDisplay) throws
        -> [JobMeasurement]
    {
        let pkgtool = self.pkgtool
        var jobs = [
            Job(name: "pkgtool diff PKG (no change)", tool: "pkgtool") {
                Outcome(cost: try Spawn.run(pkgtool, ["diff", package]), command: shellQuoted([pkgtool, "diff", package]))
            }
        ]
        if let rsync, let copy = workspace.copy {
            let source = workspace.source
            jobs.append(
                Job(name: "rsync -a --dry-run (no change)", tool: "rsync") {
                    let arguments = ["-a", "--delete", "--dry-run", source + "/", copy + "/"]
                    return Outcome(cost: try Spawn.run(rsync, arguments), command: shellQuoted([rsync] + arguments))
                })
        }
        if let find = Spawn.which("find") {
            jobs.append(workspace.statWalkJob(find, trees: [package], name: "find PKG -printf '%s %T@' (stat walk)"))
        }
        let outcomes = try runInterleaved(jobs, runs: runs, warmups: warmups, progress: progress, label: "\(shape.slug + slugSuffix) · diff")
        return zip(jobs, outcomes).map { JobMeasurement(suite: "diff", shape: shape.slug + slugSuffix, scenario: nil, job: $0, outcomes: $1) }
    }

    /// Hashing on this shape: its largest file against `xxhsum -H2`, and its tree on one core
    /// and on all.
    private func hashJobs(_ workspace: Workspace, progress: ProgressDisplay) throws -> [JobMeasurement] {
        let (pkgtool, source) = (self.pkgtool, workspace.source)
        var jobs: [Job] = []
        if let largest = workspace.tree.package.largeFiles.max(by: { $0.size < $1.size }) {
            let file = source + "/" + largest.path
            jobs.append(
                Job(name: "pkgtool hash FILE (\(Format.bytes(largest.size)))", tool: "pkgtool") {
                    Outcome(cost: try Spawn.run(pkgtool, ["hash", file]), command: shellQuoted([pkgtool, "hash", file]))
                })
            if let xxhsum = Spawn.which("xxhsum") {
                jobs.append(
                    Job(name: "xxhsum -H2 FILE (\(Format.bytes(largest.size)))", tool: "xxhsum") {
                        Outcome(cost: try Spawn.run(xxhsum, ["-H2", file]), command: shellQuoted([xxhsum, "-H2", file]))
                    })
            }
        }
        jobs.append(
            Job(name: "pkgtool hash --jobs 1 TREE", tool: "pkgtool") {
                let arguments = ["hash", "--jobs", "1", source]
                return Outcome(cost: try Spawn.run(pkgtool, arguments), command: shellQuoted([pkgtool] + arguments))
            })
        jobs.append(
            Job(name: "pkgtool hash TREE (all cores)", tool: "pkgtool") {
                Outcome(cost: try Spawn.run(pkgtool, ["hash", source]), command: shellQuoted([pkgtool, "hash", source]))
            })
        let outcomes = try runInterleaved(jobs, runs: runs, warmups: warmups, progress: progress, label: "\(shape.slug + slugSuffix) · hash")
        let largest = workspace.tree.package.largeFiles.map(\.size).max()
        return zip(jobs, outcomes).map { job, outcomes in
            var measurement = JobMeasurement(suite: "hash", shape: shape.slug + slugSuffix, scenario: nil, job: job, outcomes: outcomes)
            measurement.packageBytes = job.name.contains("FILE") ? largest : workspace.record.totalBytes
            measurement.packageEntries = job.name.contains("FILE") ? 1 : workspace.record.entries
            return measurement
        }
    }
}
