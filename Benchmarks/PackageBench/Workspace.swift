import Foundation
import PackageCore

/// A generated shape in a fresh directory: the source tree the scenarios edit, one target
/// per measured job (a package per strategy and fsync policy, rsync's copy), and the jobs
/// that bring them up to date.
///
/// Targets are made by a first save (`pkgtool save`, untimed) or a first `rsync -a`, never
/// by copying a package: a copy has new inodes and ctimes, its manifest's stat cache would
/// not match, and the first save would rehash everything — a cost no real save pays.
final class Workspace {
    let shape: PackageShape
    let directory: String
    /// Where the targets live: `directory`, or a directory on another file system (the
    /// XFS image of the large-file suite) while the source stays in `directory`.
    let targetDirectory: String
    let source: String
    let tree: SourceTree
    var record: ShapeRecord
    let pkgtool: String
    /// A second pkgtool (an earlier build) measured beside `pkgtool`, with its own packages.
    let baseline: String?
    /// The loop-mounted image the targets live on, whose device's writes each job counts.
    let device: LoopImage?
    private(set) var packages: [String: String] = [:]
    private(set) var copy: String?
    /// The copy `rsync -a --inplace --no-whole-file` keeps up to date.
    private(set) var inplaceCopy: String?
    /// Directories `cp -r` made; removed by `removeCopies()`.
    private(set) var copies: [String] = []
    /// The first saves and first copy that made the targets (one run each, into fresh
    /// directories, nothing deleted just before): what a save costs outside the
    /// delete-then-create trap of this machine.
    private(set) var firstSaves: [JobMeasurement] = []

    /// The name tables give the baseline pkgtool's rows: "pkgtool save journaled (baseline)".
    static let baselineSuffix = " (baseline)"

    /// Generates `shape` in `directory` (which must not exist) and makes the targets:
    /// a package per target (and per target again with `baseline`), rsync's copy, and with
    /// `inplacePeer` a second copy for `rsync --inplace --no-whole-file`.
    init(
        shape: PackageShape, directory: String, targetDirectory: String? = nil, targets: [(strategy: String, fsync: String)],
        rsync: String?, inplacePeer: Bool = false, baseline: String? = nil, device: LoopImage? = nil, slug: String? = nil,
        pkgtool: String, progress: ProgressDisplay
    ) throws {
        self.shape = shape
        self.directory = directory
        self.targetDirectory = targetDirectory ?? directory
        self.pkgtool = pkgtool
        self.baseline = baseline
        self.device = device
        source = directory + "/src"
        try FileSystem.makeDirectories(directory)
        try FileSystem.makeDirectories(self.targetDirectory)
        progress.log("generating \(shape.label) (seed \(shape.seed))")
        let start = Date()
        let generated = try ShapeGenerator.generate(shape, at: source)
        record = ShapeRecord(
            shape: shape, slug: slug ?? shape.slug,
            label: shape.label + (device.map { ", packages and copies on \($0.filesystem) (a loop image)" } ?? ""),
            totalBytes: generated.totalBytes, entries: generated.entryCount, generationSeconds: Date().timeIntervalSince(start))
        record.targetFilesystem = device.map { "\($0.filesystem) (loop image)" }
        let slug = record.slug
        tree = SourceTree(generated)
        progress.log("making each job's package (first saves)\(device.map { " on \($0.filesystem) (\($0.device))" } ?? "")")
        var first: [String: [Outcome]] = [:]
        let tools = [(pkgtool, "")] + (baseline.map { [($0, Self.baselineKey)] } ?? [])
        for (tool, key) in tools {
            for (strategy, fsync) in targets {
                let path = Self.packagePath(self.targetDirectory, key + strategy, fsync)
                progress.step("\(slug) · first save · \(strategy) (fsync \(fsync))\(key.isEmpty ? "" : Self.baselineSuffix)")
                let arguments = ["save"] + Self.saveArguments(strategy) + ["--fsync", "none", "--json", source, path]
                let cost = try Spawn.run(tool, arguments, captureOutput: true)
                first[key + strategy, default: []].append(
                    Outcome(
                        cost: cost, filesWritten: JSONFields.integer(cost.standardOutput, "files_written"),
                        reportedBytes: JSONFields.reportedBytes(cost.standardOutput), command: shellQuoted([tool] + arguments)))
                packages["\(key + strategy)/\(fsync)"] = path
            }
        }
        for (_, key) in tools {
            for strategy in ["full", "atomic", "atomic-keep", "journaled"] {
                guard let outcomes = first[key + strategy] else { continue }
                let job = Job(
                    name: "pkgtool save \(Self.title(strategy))" + (key.isEmpty ? "" : Self.baselineSuffix),
                    tool: key.isEmpty ? "pkgtool" : Self.baselineTool, strategy: strategy, fsync: "none"
                ) { outcomes[0] }
                firstSaves.append(JobMeasurement(suite: "save", shape: slug, scenario: Self.firstSave, job: job, outcomes: outcomes))
            }
        }
        if let rsync {
            for (name, inplace) in [("rsync-copy", false), ("rsync-inplace-copy", true)] where !inplace || inplacePeer {
                let path = self.targetDirectory + "/" + name
                progress.step("\(slug) · first rsync -a")
                let arguments = ["-a", source + "/", path + "/"]
                let cost = try Spawn.run(rsync, arguments)
                let job = Job(name: "rsync -a" + (inplace ? " (the --inplace copy)" : ""), tool: "rsync", fsync: "none") {
                    Outcome(cost: cost, command: "")
                }
                firstSaves.append(
                    JobMeasurement(
                        suite: "save", shape: slug, scenario: Self.firstSave, job: job,
                        outcomes: [Outcome(cost: cost, filesWritten: tree.fileCount, command: shellQuoted([rsync] + arguments))]))
                if inplace { inplaceCopy = path } else { copy = path }
            }
        }
    }

    /// The pseudo-scenario of the first saves.
    static let firstSave = "first-save"
    /// Package keys and the tool name of the baseline pkgtool's targets.
    static let baselineKey = "baseline-"
    static let baselineTool = "pkgtool-baseline"

    /// The save options of a job's strategy label: `atomic-keep` is the atomic strategy
    /// keeping the previous version (`--keep-previous`).
    static func saveArguments(_ strategy: String) -> [String] {
        strategy == "atomic-keep" ? ["--strategy", "atomic", "--keep-previous"] : ["--strategy", strategy]
    }

    /// How tables name a strategy label.
    static func title(_ strategy: String) -> String {
        strategy == "atomic-keep" ? "atomic --keep-previous" : strategy
    }

    static func packagePath(_ directory: String, _ strategy: String, _ fsync: String) -> String {
        "\(directory)/pkg-\(strategy)-fsync-\(fsync)"
    }

    func package(_ strategy: String, _ fsync: String, baseline: Bool = false) -> String? {
        packages["\(baseline ? Self.baselineKey : "")\(strategy)/\(fsync)"]
    }

    // MARK: Jobs

    /// `pkgtool save --strategy S --fsync F --json SRC PKG` into this strategy's package
    /// (the baseline pkgtool's own package with `baseline`).
    func saveJob(strategy: String, fsync: String, baseline: Bool = false) -> Job {
        let package = self.package(strategy, fsync, baseline: baseline)!
        let (tool, source) = (baseline ? self.baseline! : self.pkgtool, self.source)
        return measuredOnDevice(
            Job(
                name: "pkgtool save \(Self.title(strategy))" + (baseline ? Self.baselineSuffix : ""),
                tool: baseline ? Self.baselineTool : "pkgtool", strategy: strategy, fsync: fsync
            ) {
                let arguments = ["save"] + Self.saveArguments(strategy) + ["--fsync", fsync, "--json", source, package]
                let cost = try Spawn.run(tool, arguments, captureOutput: true)
                let output = cost.standardOutput
                return Outcome(
                    cost: cost, filesWritten: JSONFields.integer(output, "files_written"),
                    reportedBytes: JSONFields.reportedBytes(output), command: shellQuoted([tool] + arguments),
                    filesPatched: JSONFields.integer(output, "files_patched"),
                    filesCloned: JSONFields.integer(output, "files_cloned"),
                    bytesPatched: JSONFields.integer(output, "bytes_patched").map(Int64.init))
            })
    }

    /// `rsync -a --delete --stats SRC/ COPY/`: the peer bringing a copy up to date.
    func rsyncJob(_ rsync: String) -> Job {
        let (source, copy) = (self.source, self.copy!)
        return measuredOnDevice(
            Job(name: "rsync -a --delete", tool: "rsync", fsync: "none") {
                let arguments = ["-a", "--delete", "--stats", source + "/", copy + "/"]
                let cost = try Spawn.run(rsync, arguments, captureOutput: true)
                return Outcome(
                    cost: cost, filesWritten: JSONFields.rsyncTransferred(cost.standardOutput),
                    command: shellQuoted([rsync] + arguments))
            })
    }

    /// `rsync -a --delete --inplace --no-whole-file --stats SRC/ COPY/`: rsync writing only
    /// the blocks that changed, into its copy's files (after reading both sides whole).
    func rsyncInPlaceJob(_ rsync: String) -> Job {
        let (source, copy) = (self.source, self.inplaceCopy!)
        return measuredOnDevice(
            Job(name: "rsync -a --delete --inplace --no-whole-file", tool: "rsync", strategy: "inplace", fsync: "none") {
                let arguments = ["-a", "--delete", "--inplace", "--no-whole-file", "--stats", source + "/", copy + "/"]
                let cost = try Spawn.run(rsync, arguments, captureOutput: true)
                return Outcome(
                    cost: cost, filesWritten: JSONFields.rsyncTransferred(cost.standardOutput),
                    command: shellQuoted([rsync] + arguments))
            })
    }

    /// With the targets on a loop image, `job` also counts what the device wrote: the file
    /// system is flushed before (so earlier jobs' writes are not counted) and after.
    private func measuredOnDevice(_ job: Job) -> Job {
        guard let device else { return job }
        var measured = job
        let run = job.run
        measured.run = {
            let before = try device.bytesWritten()
            var outcome = try run()
            outcome.deviceBytesWritten = try device.bytesWritten() - before
            return outcome
        }
        return measured
    }

    /// `cp -r SRC NEW` into a fresh directory each run: the peer making a full copy.
    func copyJob(_ cp: String, label: String) -> Job {
        Job(name: "cp -r (full copy)", tool: "cp", fsync: "none") { [self] in
            let destination = "\(targetDirectory)/cp-\(label)-\(copies.count)"
            copies.append(destination)
            let cost = try Spawn.run(cp, ["-r", source, destination])
            return Outcome(cost: cost, filesWritten: tree.fileCount, command: shellQuoted([cp, "-r", source, destination]))
        }
    }

    /// `find TREE… -printf '%s %T@\n'`: the stat walk, output discarded.
    func statWalkJob(_ find: String, trees: [String], name: String) -> Job {
        Job(name: name, tool: "find") {
            let arguments = trees + ["-printf", "%s %T@\n"]
            return Outcome(cost: try Spawn.run(find, arguments), command: shellQuoted([find] + arguments))
        }
    }

    func removeCopies() throws {
        for path in copies { try FileSystem.removeTree(path) }
        copies.removeAll()
    }

    /// Every target: the packages, then rsync's copies.
    var allTargets: [String] {
        packages.values.sorted() + (copy.map { [$0] } ?? []) + (inplaceCopy.map { [$0] } ?? [])
    }

    /// The pkgtool that wrote `path` (the baseline's packages are read by the baseline).
    private func tool(for path: String) -> String {
        if let baseline, packages.contains(where: { $0.key.hasPrefix(Self.baselineKey) && $0.value == path }) { return baseline }
        return pkgtool
    }

    /// Checks that every target holds exactly the source (`pkgtool diff SRC TARGET`, exit
    /// 0): a save that went wrong would make its figures meaningless.
    func verifyTargets(_ only: [String]? = nil) throws {
        for path in only ?? allTargets {
            do {
                _ = try Spawn.run(tool(for: path), ["diff", source, path])
            } catch {
                throw BenchError("\(path) does not hold the same tree as \(source) after the runs: \(error)")
            }
        }
    }

    /// Compares each target with the source byte for byte (`TreeComparison`) and runs
    /// `pkgtool verify` on each package (every file rehashed against its manifest). Returns
    /// what was wrong with each target that is not right, by path.
    func compareTargetsBytes(_ paths: [String]) throws -> [(path: String, problem: String?)] {
        try paths.map { path in
            if let difference = try TreeComparison.firstDifference(source: source, target: path) {
                return (path, "differs from the source: \(difference)")
            }
            if packages.values.contains(path) {
                do {
                    _ = try Spawn.run(tool(for: path), ["verify", path])
                } catch {
                    return (path, "pkgtool verify failed: \(error)")
                }
            }
            return (path, nil)
        }
    }

    func remove() throws {
        try Removal.removeTree(directory, parallelDepth: 1)
        if targetDirectory != directory, (try? FileSystem.statusIfExists(targetDirectory)) != nil {
            for name in try DirectoryListing.names(in: try FileDescriptor.openDirectory(targetDirectory)) {
                try Removal.removeTree(targetDirectory + "/" + name, parallelDepth: 1)
            }
        }
    }
}

/// Reading the figures tools print.
enum JSONFields {
    /// An integer field of a JSON object (pkgtool's `--json` output).
    static func integer(_ text: String, _ key: String) -> Int? {
        guard let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return (object[key] as? NSNumber)?.intValue
    }

    /// pkgtool's own count of bytes written: file contents plus manifest and journal.
    static func reportedBytes(_ text: String) -> Int64? {
        guard let data = integer(text, "bytes_written"), let metadata = integer(text, "metadata_bytes_written") else { return nil }
        return Int64(data + metadata)
    }

    /// "Number of regular files transferred: 1,234" from `rsync --stats`.
    static func rsyncTransferred(_ text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("Number of regular files transferred:") {
            return Int(line.split(separator: ":").last?.filter(\.isNumber) ?? "")
        }
        return nil
    }
}

/// Refuses to start a suite that would fill the disk.
enum DiskSpace {
    static func available(at path: String) -> Int64? {
        var probe = path
        while !probe.isEmpty && access(probe, F_OK) != 0 {
            probe = (probe as NSString).deletingLastPathComponent
        }
        var info = statvfs()
        guard statvfs(probe.isEmpty ? "." : probe, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Throws when `path`'s file system has less than `bytes` free beyond a reserve: a
    /// tenth of the free space (at least 2 GiB) left to everyone else on the machine, or
    /// nothing on a file system of the suite's own (`shared: false`, an image it made).
    static func require(bytes: Int64, at path: String, for purpose: String, shared: Bool = true) throws {
        guard let available = available(at: path) else { return }
        if bytes > available - (shared ? max(available / 10, 2 << 30) : 0) {
            throw BenchError(
                "\(purpose) needs about \(Format.bytes(bytes)) but \(path) has \(Format.bytes(available)) free; "
                    + "use a smaller --size, fewer shapes or scenarios, --fsync none, or another --workdir")
        }
    }
}

/// Removes generated trees on all cores: deleting a few hundred thousand files is a good
/// part of a quick run's wall time on this machine, and most of it is system time that
/// two threads can share.
enum Removal {
    /// Removes `path` and everything beneath it; the subtrees `depth` levels down are
    /// removed in parallel.
    static func removeTree(_ path: String, parallelDepth depth: Int = 2) throws {
        var level = [path]
        var directories: [String] = []
        for _ in 0..<depth {
            var next: [String] = []
            for directory in level {
                guard let status = try FileSystem.statusIfExists(directory), status.kind == .directory else {
                    next.append(directory)
                    continue
                }
                directories.append(directory)
                let handle = try FileDescriptor.openDirectory(directory)
                next += try DirectoryListing.names(in: handle).map { directory + "/" + $0 }
            }
            level = next
        }
        let subtrees = level
        _ = try ShapeGenerator.parallelMap(0..<subtrees.count) { index in try FileSystem.removeTree(subtrees[index]) }
        for directory in directories.reversed() { try FileSystem.removeTree(directory) }
    }
}
