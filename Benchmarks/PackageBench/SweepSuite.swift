import Foundation
import PackageCore

/// The scaling sweeps of the one-small-edit scenario: (a) package bytes with the entries
/// fixed, (b) entries, through the CLI beside the stat walk of the same trees and through
/// the library.
///
/// Every point of a sweep lives at once in its own workspace, and the rounds interleave the
/// points as well as the jobs: a point measured minutes after another would carry the
/// machine's drift (3× between quiet and busy periods here) into the growth it is meant
/// to show.
struct SweepSuite {
    enum Axis: String {
        case bytes = "sweep-bytes"
        case entries = "sweep-entries"
    }

    var axis: Axis
    var points: [PackageShape]
    var runs: Int
    var warmups = 1
    var directory: String
    var pkgtool: String
    var targets: [(strategy: String, fsync: String)]
    /// Extra jobs for a point, made after its targets exist (the library leg).
    var extraJobs: ((Workspace) throws -> [Job])? = nil
    var keep = false

    struct Result {
        var shapes: [ShapeRecord]
        var measurements: [JobMeasurement]
        var notes: [String]
    }

    func run(progress: ProgressDisplay) throws -> Result {
        let rsync = Spawn.which("rsync")
        let find = Spawn.which("find")
        let totalBytes = points.map(\.bytes).reduce(0, +)
        try DiskSpace.require(
            bytes: totalBytes * Int64(targets.count + 2) + (points.map(\.bytes).max() ?? 0), at: directory,
            for: "the \(axis.rawValue) (\(points.count) packages × \(targets.count) targets, copies and sources)")
        var workspaces: [Workspace] = []
        defer {
            if !keep {
                progress.log("removing \(directory)")
                try? Removal.removeTree(directory, parallelDepth: 2)
            }
        }
        for point in points {
            workspaces.append(
                try Workspace(
                    shape: point, directory: directory + "/" + point.slug, targets: targets, rsync: rsync, pkgtool: pkgtool,
                    progress: progress))
        }
        var jobs: [Job] = []
        var owners: [Int] = []
        for (index, workspace) in workspaces.enumerated() {
            var pointJobs = targets.map { workspace.saveJob(strategy: $0.strategy, fsync: $0.fsync) }
            if let rsync { pointJobs.append(workspace.rsyncJob(rsync)) }
            if axis == .entries, let find, let (strategy, fsync) = targets.first {
                pointJobs.append(
                    workspace.statWalkJob(
                        find, trees: [workspace.source, workspace.package(strategy, fsync)!],
                        name: "find SRC PKG -printf '%s %T@' (stat walk)"))
            }
            if let extraJobs { pointJobs += try extraJobs(workspace) }
            for var job in pointJobs {
                job.detail = workspace.shape.slug
                jobs.append(job)
                owners.append(index)
            }
        }
        let outcomes = try runInterleaved(jobs, runs: runs, warmups: warmups, progress: progress, label: axis.rawValue) { _ in
            for workspace in workspaces { _ = try workspace.tree.apply(.smallEdit) }
        }
        var measurements: [JobMeasurement] = []
        for ((job, jobOutcomes), owner) in zip(zip(jobs, outcomes), owners) {
            let workspace = workspaces[owner]
            var measurement = JobMeasurement(
                suite: axis.rawValue, shape: workspace.shape.slug, scenario: Scenario.smallEdit.rawValue, job: job,
                outcomes: jobOutcomes)
            measurement.packageBytes = workspace.record.totalBytes
            measurement.packageEntries = workspace.record.entries
            measurements.append(measurement)
        }
        addRatiosToFull(&measurements)
        progress.log("checking that every package and copy equals its source (pkgtool diff)")
        for workspace in workspaces { try workspace.verifyTargets() }
        var notes: [String] = []
        let fulls = workspaces.compactMap { workspace in
            workspace.firstSaves.first { $0.strategy == "full" }.map { (workspace.shape.slug, $0.seconds.median) }
        }
        if !fulls.isEmpty {
            notes.append(
                "\(axis.rawValue): full's first saves into fresh directories took "
                    + fulls.map { "\(Format.seconds($0.1)) (\($0.0))" }.joined(separator: ", ")
                    + "; in the rounds every full save creates all the files again right after the previous save deleted as many, "
                    + "the slow path of ext4 (deleting many files, then creating as many), so its time grows less than its bytes")
        }
        return Result(shapes: workspaces.map(\.record), measurements: measurements, notes: notes)
    }
}
