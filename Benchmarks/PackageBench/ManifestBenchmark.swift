import Foundation
import PackageCore

/// The manifest's figures: loading 100,000 records, diffing two 100,000-entry
/// manifests with 10 changes, and a no-change diff of a 100,000-file package against its
/// manifest compared with `rsync -a --dry-run` on the same tree (the stat-walk floor).
public struct ManifestBenchmark {
    public var workDirectory: String
    public var pkgtool: String
    public var runs: Int
    public var files = 100_000

    public init(workDirectory: String, pkgtool: String, runs: Int) {
        self.workDirectory = workDirectory
        self.pkgtool = pkgtool
        self.runs = runs
    }

    public func run(log: (String) -> Void) throws -> (table: Table, figures: [(String, JSONNumber)], samples: [Sample]) {
        try FileSystem.makeDirectories(workDirectory)
        let package = workDirectory + "/manifest-100k"
        let copy = workDirectory + "/manifest-100k-copy"
        if (try? FileSystem.status(package + "/.pkgtool/index")) == nil {
            log("generating a \(files)-file package and its manifest")
            try? FileSystem.removeTree(package)
            try FixtureWriter.smallFileTree(package, count: files, seed: 3)
            _ = try Spawn.run(pkgtool, ["manifest", package])
        }
        if (try? FileSystem.status(copy)) == nil, let rsync = Spawn.which("rsync") {
            log("copying it for rsync")
            _ = try Spawn.run(rsync, ["-a", package + "/", copy + "/"])
        }
        // Settle racy entries: the manifest written after the files' timestamps.
        _ = try Spawn.run(pkgtool, ["manifest", package])

        log("loading the manifest in-process (\(runs) runs)")
        var loads: [Double] = []
        var manifest: PackageManifest?
        for _ in 0...runs {
            let start = DispatchTime.now().uptimeNanoseconds
            manifest = try PackageManifest.load(packagePath: package)
            loads.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        loads.removeFirst()
        guard let manifest else { throw BenchError("no manifest was written") }

        // A second snapshot with 10 files changed: the diff of two manifests.
        var changed = manifest.snapshot.entries
        var touched = 0
        for index in changed.indices where changed[index].kind == .regular && touched < 10 && index % 9_000 == 7 {
            changed[index].hash = ContentHash.of(Array("changed \(index)".utf8))
            touched += 1
        }
        let other = TreeSnapshot.assemble(changed)
        var diffs: [Double] = []
        var changeCount = 0
        for _ in 0...runs {
            let start = DispatchTime.now().uptimeNanoseconds
            changeCount = TreeDiff.changes(from: manifest.snapshot, to: other).count
            diffs.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        }
        diffs.removeFirst()

        log("no-change diff against the manifest vs rsync -a --dry-run (\(runs) runs, interleaved)")
        var jobs: [(name: String, run: () throws -> ProcessCost)] = [
            ("pkgtool diff PKG (100k, no change)", { try Spawn.run(pkgtool, ["diff", package]) })
        ]
        if let rsync = Spawn.which("rsync") {
            jobs.append(("rsync -a --dry-run PKG/ COPY/", { try Spawn.run(rsync, ["-a", "--dry-run", package + "/", copy + "/"]) }))
        }
        let samples = try measureInterleaved(jobs, runs: runs)

        var table = Table(["job", "median", "min", "max", "peak RSS"])
        table.add(["load 100,000 records (in-process)", Format.seconds(Sample.median(loads)), Format.seconds(loads.min() ?? 0), Format.seconds(loads.max() ?? 0), ""])
        table.add(["diff two 100k manifests, \(changeCount) changes", Format.seconds(Sample.median(diffs)), Format.seconds(diffs.min() ?? 0), Format.seconds(diffs.max() ?? 0), ""])
        for sample in samples {
            table.add([sample.name, Format.seconds(sample.median), Format.seconds(sample.minimum), Format.seconds(sample.maximum), Format.bytes(sample.peakRSSBytes)])
        }
        var figures: [(String, JSONNumber)] = [
            ("manifest_load_100k_seconds", .double(Sample.median(loads))),
            ("manifest_diff_100k_10_changes_seconds", .double(Sample.median(diffs))),
        ]
        if samples.count == 2 {
            let ratio = samples[0].median / samples[1].median
            figures.append(("diff_vs_rsync_dry_run", .double(ratio)))
            table.add(["pkgtool diff / rsync --dry-run (want ≤ 1.20×)", Format.ratio(ratio), "", "", ""])
        }
        return (table, figures, samples)
    }
}
