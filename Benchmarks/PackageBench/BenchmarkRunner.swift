import Foundation
import Glibc
import PackageCore

/// Runs the suites a `BenchmarkOptions` asks for, then prints the tables and writes the
/// JSON record and the HTML report.
public struct BenchmarkRunner {
    public var options: BenchmarkOptions
    /// Print the tables and the paths of the files written (off in tests).
    public var printsSummary = true

    public init(options: BenchmarkOptions) { self.options = options }

    #if DEBUG
    static let build = "debug"
    #else
    static let build = "release"
    #endif

    public func run() throws -> BenchmarkRecord {
        let progress = ProgressDisplay(quiet: options.quiet)
        let workDirectory = Self.absolute(options.workDirectory)
        let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        let pkgtool = Self.absolute(options.pkgtool ?? (selfPath as NSString).deletingLastPathComponent + "/pkgtool")
        guard access(pkgtool, X_OK) == 0 else {
            throw BenchError("no pkgtool executable at '\(pkgtool)'; build it (swift build -c release) or pass --pkgtool")
        }
        guard access(Spawn.measureTool, X_OK) == 0 else {
            throw BenchError("no pkgbench-measure at '\(Spawn.measureTool)'; build it: swift build -c release --product pkgbench-measure")
        }
        if Self.build != "release" {
            progress.warn("THIS IS A DEBUG BUILD OF PKGBENCH: its figures are not representative; use swift build -c release")
        }
        if pkgtool.contains("/debug/") {
            progress.warn("the pkgtool measured (\(pkgtool)) looks like a debug build: its figures are not representative")
        }
        try FileSystem.makeDirectories(workDirectory)
        let stamp = Self.timestamp(compact: true)
        let runDirectory = "\(workDirectory)/run-\(stamp)-\(getpid())"

        let machine = Machine.current(workDirectory: workDirectory)
        var record = BenchmarkRecord(
            pkgbench: RunInfo(
                mode: options.mode.rawValue, arguments: options.arguments, build: Self.build, started: Self.timestamp(compact: false),
                workDirectory: workDirectory, pkgtool: pkgtool),
            machine: machine, tools: Self.toolVersions(pkgtool: pkgtool), seed: options.seed, runs: options.runs,
            warmups: options.warmups)
        record.commands = Self.commandTemplates
        progress.log("\(options.mode.rawValue) run on \(machine.summary); data in \(runDirectory)")
        if machine.filesystem != "ext4" {
            record.notes.append("the work directory is on \(machine.filesystem), not ext4: figures are not comparable with the ones in Benchmarks/README.md")
        }
        if Self.build != "release" { record.notes.append("pkgbench was a debug build: figures are not representative") }

        // Generated trees are removed as each suite ends (disk space), except the last one's,
        // removed after the tables are printed: deleting 100,000+ files takes a while here.
        var removeAtEnd = !options.keep
        defer { if removeAtEnd { try? FileSystem.removeTree(runDirectory) } }
        let generating = options.suites.flatMap { suite -> [String] in
            suite == "save"
                ? options.shapes.map { "save/\($0.rawValue)" }
                : suite.hasPrefix("sweep") || suite == "large-file" || suite == "scale" ? [suite] : []
        }
        if let baseline = options.baseline {
            guard access(baseline, X_OK) == 0 else { throw BenchError("no pkgtool executable at '\(baseline)' (--baseline)") }
            record.tools["pkgtool (baseline)"] = Self.firstLine(baseline, "--version") ?? "unknown"
            record.pkgbench.baseline = Self.absolute(baseline)
            record.notes.append(
                "baseline: every pkgtool save job also runs with \(Self.absolute(baseline)) on its own packages, in the same rounds (rows marked (baseline))")
        }
        func keepData(_ step: String) -> Bool { options.keep || step == generating.last }

        for suite in options.suites {
            switch suite {
            case "save":
                for kind in options.shapes {
                    let shape = PackageShape.make(kind, bytes: options.size, entries: options.entries, seed: options.seed)
                    var save = SaveSuite(
                        shape: shape, scenarios: options.scenarios, runs: options.runs, warmups: options.warmups,
                        directory: "\(runDirectory)/\(shape.slug)", pkgtool: pkgtool)
                    save.fsyncPolicies = options.fsyncPolicies
                    save.keep = keepData("save/\(kind.rawValue)")
                    save.baseline = options.baseline
                    save.inplacePeerIn = { $0 == .largeFile }
                    save.comparesBytes = options.scenarios.contains(.largeFile)
                    if options.mode == .quick {
                        // The minute's budget: `full` (every file created again, right after the
                        // previous tree was deleted: the slow path of this machine), `cp -r` and
                        // the fsync-full rows only in the one-small-edit scenario, and `full`
                        // without fsync (one fsync per file would cost more than the rest).
                        save.includes = { scenario, strategy, fsync in
                            strategy == "full" ? scenario == .smallEdit && fsync == "none" : scenario == .smallEdit || fsync == "none"
                        }
                        save.copyPeerIn = { $0 == .smallEdit }
                        save.measureHash = true
                    } else if kind == .huge {
                        // Multi-GiB packages: one target per strategy and fsync would not fit
                        // most disks; the fsync policy hardly matters next to the copies.
                        save.fsyncPolicies = ["none"]
                        record.notes.append("huge: pkgtool measured with --fsync none only (disk space)")
                    }
                    if options.mode == .quick {
                        record.notes.append(
                            "quick: full (with --fsync none), cp -r and the --fsync full rows are measured in the one-small-edit scenario only (full's and cp's cost does not depend on the change); the full run measures every job in every scenario")
                    }
                    let result = try save.run(progress: progress)
                    record.shapes.append(result.shape)
                    record.measurements += result.measurements
                    record.notes += result.notes
                    record.checks += result.checks
                }
            case "large-file":
                var suite = LargeFileSuite(
                    sizes: options.largeFileSizes, entries: options.entries, seed: options.seed, runs: options.runs,
                    directory: runDirectory, pkgtool: pkgtool)
                suite.warmups = options.warmups
                suite.fsyncPolicies = options.fsyncPolicies
                suite.baseline = options.baseline
                suite.xfs = options.xfs
                suite.keep = keepData("large-file")
                let result = try suite.run(progress: progress)
                record.shapes += result.shapes
                record.measurements += result.measurements
                record.notes += result.notes
                record.checks += result.checks
            case "hash":
                progress.log(
                    "hash suite: a 1 GiB file vs xxhsum -H2 and with chunking, a 20,000-file tree on 1 and all cores, a 4 GiB sparse file")
                let hash = try HashBenchmark(workDirectory: workDirectory + "/hash-data", pkgtool: pkgtool, runs: options.runs).run {
                    progress.log($0)
                }
                for sample in hash.samples {
                    record.measurements.append(
                        JobMeasurement(suite: "hash", sample: sample, tool: String(sample.name.split(separator: " ").first ?? "")))
                }
                record.checks += Self.hashChecks(hash.figures)
            case "manifest":
                progress.log("manifest suite: 100,000 records loaded and diffed in-process, a no-change diff vs rsync --dry-run")
                let manifest = try ManifestBenchmark(
                    workDirectory: workDirectory + "/manifest-data", pkgtool: pkgtool, runs: options.runs
                ).run { progress.log($0) }
                for sample in manifest.samples {
                    record.measurements.append(
                        JobMeasurement(suite: "manifest", sample: sample, tool: String(sample.name.split(separator: " ").first ?? "")))
                }
                record.checks += Self.manifestChecks(manifest.figures)
            case "zip":
                progress.log("zip suite: pack, repack, unpack and verify against zip, unzip, bsdtar and 7z (about 10 minutes)")
                let zip = try ZipBenchmark(workDirectory: workDirectory + "/zip-data", pkgtool: pkgtool, runs: options.runs).run {
                    progress.log($0)
                }
                for sample in zip.samples {
                    let first = String(sample.name.split(separator: " ").first ?? "")
                    record.measurements.append(JobMeasurement(suite: "zip", sample: sample, tool: first))
                }
                record.checks += Self.zipChecks(zip.figures)
            case "sweep-bytes":
                let points = options.sweepSizes.map {
                    PackageShape.make(.document, bytes: $0, entries: options.entries, seed: options.seed)
                }
                var sweep = SweepSuite(
                    axis: .bytes, points: points, runs: options.runs, warmups: options.warmups,
                    directory: "\(runDirectory)/sweep-bytes", pkgtool: pkgtool,
                    targets: Self.sweepTargets(options.fsyncPolicies, withFull: true))
                sweep.keep = keepData(suite)
                let result = try sweep.run(progress: progress)
                record.shapes += result.shapes
                record.measurements += result.measurements
                record.notes += result.notes
            case "sweep-entries":
                let points = options.sweepEntries.map { PackageShape.make(.smallFiles, entries: $0, seed: options.seed) }
                var sweep = SweepSuite(
                    axis: .entries, points: points, runs: options.runs, warmups: options.warmups,
                    directory: "\(runDirectory)/sweep-entries", pkgtool: pkgtool,
                    targets: Self.sweepTargets(options.fsyncPolicies, withFull: false))
                sweep.keep = keepData(suite)
                let policies = options.fsyncPolicies
                sweep.extraJobs = { try LibraryJobs.make($0, fsyncPolicies: policies) }
                let result = try sweep.run(progress: progress)
                record.shapes += result.shapes
                record.measurements += result.measurements
                record.notes += result.notes
            case "sync":
                var sync = SyncBenchmark(
                    directory: "\(runDirectory)/sync", pkgtool: pkgtool, runs: options.runs, warmups: options.warmups,
                    seed: options.seed)
                sync.keep = options.keep
                if let size = options.size, !options.suites.contains("save") { sync.mediaBytes = size }
                let result = try sync.run(progress: progress)
                record.shapes.append(result.shape)
                record.measurements += result.measurements
                record.checks += result.checks
                record.notes += result.notes
            case "scale":
                progress.log(
                    "scale suite: \(options.scaleEntries.map(Format.count).joined(separator: ", ")) files through save, diff, pack, push and pull")
                var scale = ScaleSuite(
                    entries: options.scaleEntries, runs: options.runs, warmups: options.warmups, seed: options.seed,
                    directory: "\(runDirectory)/scale", pkgtool: pkgtool)
                scale.keep = keepData("scale")
                let result = try scale.run(progress: progress)
                record.shapes += result.shapes
                record.measurements += result.measurements
                record.checks += result.checks
                record.notes += result.notes
            default:
                throw BenchError("unknown suite '\(suite)'")
            }
        }
        record.checks += Checks.evaluate(record)
        record.pkgbench.durationSeconds = progress.elapsed
        if options.mode == .quick {
            let seconds = record.pkgbench.durationSeconds
            record.checks.append(
                Check(
                    suite: "run", name: "quick run: total time", value: seconds, shown: String(format: "%.0f s", seconds),
                    want: "≤ 90 s", met: seconds <= 90, source: "the quick benchmark answers in a minute or so"))
        }
        progress.clear()

        let mode = options.mode.rawValue
        let jsonPath = Self.absolute(options.jsonPath ?? workDirectory + "/pkgbench-\(mode)-results.json")
        let reportPath = Self.absolute(options.reportPath ?? workDirectory + "/pkgbench-\(mode)-report.html")
        try record.encoded().write(to: URL(fileURLWithPath: jsonPath))
        // A run without sweeps shows how saves grow with the package from the last sweep
        // recorded in the same work directory, if any, marked as the separate run it is.
        var included: [BenchmarkRecord] = []
        let sweepPath = workDirectory + "/pkgbench-sweep-results.json"
        if !options.suites.contains(where: { $0.hasPrefix("sweep") }), sweepPath != jsonPath,
            let data = FileManager.default.contents(atPath: sweepPath), let sweep = try? BenchmarkRecord.decode(data)
        {
            included.append(sweep)
        }
        try HTMLReport.render(record, including: included).write(toFile: reportPath, atomically: true, encoding: .utf8)
        if printsSummary {
            print(TextReport.render(record), terminator: "")
            print("\nJSON:   \(jsonPath)\nreport: \(reportPath)")
            fflush(nil)
        }
        if removeAtEnd {
            let start = progress.elapsed
            progress.log("removing the generated data (\(runDirectory))")
            try Removal.removeTree(runDirectory, parallelDepth: 3)
            removeAtEnd = false
            progress.log(String(format: "removed in %.1f s", progress.elapsed - start))
        } else {
            progress.log("kept the generated data in \(runDirectory)")
        }
        return record
    }

    /// Pkgtool targets of a sweep. The bytes sweep (with `full`) holds every point at once,
    /// up to 4 GiB each, so it keeps to one package per strategy with the first policy asked
    /// for (`none` by default: its cost is the bytes) plus `journaled` with the second; the
    /// entries sweep measures atomic and journaled with each policy.
    static func sweepTargets(_ policies: [String], withFull: Bool) -> [(strategy: String, fsync: String)] {
        guard let first = policies.first else { return [] }
        if withFull {
            return [("full", first), ("atomic", first)] + policies.map { ("journaled", $0) }
        }
        return ["atomic", "journaled"].flatMap { strategy in policies.map { (strategy, $0) } }
    }

    static func hashChecks(_ figures: [(String, JSONNumber)]) -> [Check] {
        var checks: [Check] = []
        for (name, number) in figures {
            switch (name, number) {
            case ("file_speed_vs_xxhsum", .double(let value)):
                checks.append(
                    Check(
                        suite: "hash", name: "hash a 1 GiB file: speed vs xxhsum -H2", value: value, shown: Format.ratio(value),
                        want: "≥ 0.90×", met: value >= 0.9, source: "hashing a file runs at xxhsum's speed"))
            case ("tree_parallel_speedup", .double(let value)):
                checks.append(
                    Check(
                        suite: "hash", name: "hash a 20,000-file tree: all cores vs one", value: value,
                        shown: Format.ratio(value), want: "≥ 1.60×", met: value >= 1.6, source: "hashing a tree uses every core"))
            case ("chunking_speed_vs_hash", .double(let value)):
                checks.append(
                    Check(
                        suite: "hash", name: "hash a 1 GiB file with chunking: speed vs hashing alone (paired runs)",
                        value: value,
                        shown: Format.ratio(value), want: "≥ 0.90×", met: value >= 0.9, source: "finding a large file's chunks costs little more than hashing it"))
            case ("huge_file_peak_rss_bytes", .int(let value)):
                checks.append(
                    Check(
                        suite: "hash", name: "hash a 4 GiB file: peak RSS", value: Double(value), shown: Format.bytes(value),
                        want: "≤ 32.0 MiB", met: value <= 32 << 20, source: "memory stays small whatever the file's size"))
            default:
                break
            }
        }
        return checks
    }

    static func manifestChecks(_ figures: [(String, JSONNumber)]) -> [Check] {
        var checks: [Check] = []
        for (name, number) in figures {
            guard case .double(let value) = number else { continue }
            switch name {
            case "manifest_load_100k_seconds":
                checks.append(
                    Check(
                        suite: "manifest", name: "load 100,000 manifest records (in-process)", value: value,
                        shown: Format.seconds(value), want: "≤ 50.0 ms", met: value <= 0.05, source: "a package's record loads in a blink, even for 100,000 files"))
            case "manifest_diff_100k_10_changes_seconds":
                checks.append(
                    Check(
                        suite: "manifest", name: "diff two 100,000-entry manifests with 10 changes", value: value,
                        shown: Format.seconds(value), want: "≤ 50.0 ms", met: value <= 0.05, source: "comparing two records costs little, even for 100,000 files"))
            case "diff_vs_rsync_dry_run":
                checks.append(
                    Check(
                        suite: "manifest", name: "100,000 files: pkgtool diff PKG / rsync -a --dry-run", value: value,
                        shown: Format.ratio(value), want: "≤ 1.20×", met: value <= 1.2, source: "seeing what changed costs about what rsync's dry run costs"))
            default:
                break
            }
        }
        return checks
    }

    /// Issue 5's targets from the zip suite's figures.
    static func zipChecks(_ figures: [(String, JSONNumber)]) -> [Check] {
        let targets: [String: (name: String, limit: Double, atLeast: Bool)] = [
            "pack_speed_vs_zip6": ("1 GiB document: pack speed vs zip -r -6", 5, true),
            "pack_speed_vs_zip6n": ("1 GiB document: pack speed vs zip -r -6 -n (media stored)", 1.2, true),
            "size_vs_zip6": ("1 GiB document: archive size vs zip -6", 1.01, false),
            "small_pack_speed_vs_zip6": ("100,000 small files: pack speed vs zip -r -6", 1.7, true),
            "unpack_speed_vs_fastest": ("unpack speed vs the fastest of unzip, bsdtar, 7z", 1, true),
            "verify_speed_vs_7z": ("verify speed vs 7z t", 1, true),
            "repack_time_vs_zip_u": ("repack after one small file changed (--keep-previous): time vs zip -u", 0.5, false),
        ]
        var checks: [Check] = []
        for (name, number) in figures {
            switch number {
            case .double(let value):
                guard let target = targets[name] else { continue }
                checks.append(
                    Check(
                        suite: "zip", name: target.name, value: value, shown: Format.ratio(value),
                        want: (target.atLeast ? "≥ " : "≤ ") + Format.ratio(target.limit),
                        met: target.atLeast ? value >= target.limit : value <= target.limit, source: "zipping and unzipping keep pace with zip and unzip"))
            case .int(let value):
                guard name == "huge_file_peak_rss_bytes" else { continue }
                checks.append(
                    Check(
                        suite: "zip", name: "pack and unpack a 4 GiB file: peak RSS", value: Double(value),
                        shown: Format.bytes(value), want: "≤ 64.0 MiB", met: value <= 64 << 20, source: "memory stays small whatever the archive's size"))
            }
        }
        return checks
    }

    /// The command of every kind of job, with placeholders for paths (each measurement
    /// also records its exact command line).
    static let commandTemplates: [String: String] = [
        "save": "pkgtool save --strategy full|atomic|journaled --fsync none|full --json SRC PKG",
        "first save (untimed, makes each job's package)": "pkgtool save --strategy S --fsync none SRC PKG",
        "first copy (untimed, makes rsync's copy)": "rsync -a SRC/ COPY/",
        "rsync": "rsync -a --delete --stats SRC/ COPY/",
        "rsync in place (large-file)": "rsync -a --delete --inplace --no-whole-file --stats SRC/ COPY/",
        "device writes (targets on an XFS image)": "syncfs(MOUNT); sectors written of /sys/block/loopN/stat before and after each job, × 512",
        "byte comparison (large-file)": "every file of SRC and TARGET read and compared (TARGET/.pkgtool left out); pkgtool verify PKG",
        "cp": "cp -r SRC NEW (NEW a fresh directory each run)",
        "diff": "pkgtool diff PKG",
        "diff peer": "rsync -a --delete --dry-run SRC/ COPY/",
        "stat walk": "find PKG -printf '%s %T@\\n' (sweep (b): find SRC PKG -printf '%s %T@\\n')",
        "hash file": "pkgtool hash FILE; xxhsum -H2 FILE",
        "hash tree": "pkgtool hash --jobs 1 TREE; pkgtool hash TREE",
        "check": "pkgtool diff SRC TARGET (after the runs: every target must equal the source)",
        "library": "PackageSaver.save(FileWrapper tree, to: PKG, options: SaveOptions(strategy:durability:)) in-process",
        "sync push": "pkgtool push --json SRC s3://bench-pkgtool/doc; rclone sync SRC bench:bench-rclone/doc; restic -r s3:ENDPOINT/bench-restic/doc backup --quiet SRC",
        "sync pull": "pkgtool pull --json --fsync none s3://bench-pkgtool/doc DEST; rclone sync bench:bench-rclone/doc DEST; restic -r … restore latest --target DEST",
        "scale first save": "pkgtool save --json SRC NEW; cp -a SRC NEW && sync -f NEW; rsync -a SRC/ NEW/ && sync -f NEW",
        "scale saves (no change, 100 files edited)": "pkgtool save --json SRC PKG; rsync -a --delete --stats SRC/ COPY/",
        "scale diff": "pkgtool diff PKG; pkgtool diff SRC PKG; rsync -a --delete --dry-run --stats SRC/ COPY/",
        "scale pack": "pkgtool pack SRC NEW.zip; cd SRC && zip -r -q NEW.zip .",
        "scale push": "pkgtool push --json PKG s3://bench-pkgtool/scale-N-K; restic -r s3:ENDPOINT/bench-restic/scale-N-K backup --quiet SRC (after an untimed init)",
        "scale pull": "pkgtool pull --json --fsync none s3://bench-pkgtool/scale-N-K NEW; restic -r … restore latest --target NEW",
    ]

    /// The first line of each tool's version, for the record.
    static func toolVersions(pkgtool: String) -> [String: String] {
        var versions: [String: String] = [:]
        let probes: [(String, String)] = [
            ("rsync", "--version"), ("cp", "--version"), ("find", "--version"), ("xxhsum", "--version"),
            ("zip", "-v"), ("unzip", "-v"), ("bsdtar", "--version"), ("7z", ""), ("rclone", "version"), ("restic", "version"),
        ]
        versions["pkgtool"] = firstLine(pkgtool, "--version") ?? "unknown"
        for (tool, flag) in probes {
            guard let path = Spawn.which(tool) else { continue }
            versions[tool] = firstLine(path, flag) ?? "unknown"
        }
        versions["swift"] = firstLine(Spawn.which("swift") ?? "/opt/swift/usr/bin/swift", "--version") ?? "unknown"
        return versions
    }

    /// The first non-empty line a command prints on stdout or stderr.
    static func firstLine(_ executable: String, _ flag: String) -> String? {
        guard access(executable, X_OK) == 0 else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = flag.isEmpty ? [] : [flag]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        // Info-ZIP's zip starts with a copyright line; its version is on "This is Zip 3.0 …".
        return lines.first { $0.hasPrefix("This is Zip") } ?? lines.first
    }

    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    static func timestamp(compact: Bool) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = compact ? "yyyyMMdd-HHmmss" : "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date())
    }
}
