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
    let source: String
    let tree: SourceTree
    var record: ShapeRecord
    let pkgtool: String
    private(set) var packages: [String: String] = [:]
    private(set) var copy: String?
    /// Directories `cp -r` made; removed by `removeCopies()`.
    private(set) var copies: [String] = []
    /// The first saves and first copy that made the targets (one run each, into fresh
    /// directories, nothing deleted just before): what a save costs outside the
    /// delete-then-create trap of this machine.
    private(set) var firstSaves: [JobMeasurement] = []

    /// Generates `shape` in `directory` (which must not exist) and makes the targets.
    init(
        shape: PackageShape, directory: String, targets: [(strategy: String, fsync: String)], rsync: String?,
        pkgtool: String, progress: ProgressDisplay
    ) throws {
        self.shape = shape
        self.directory = directory
        self.pkgtool = pkgtool
        source = directory + "/src"
        try FileSystem.makeDirectories(directory)
        progress.log("generating \(shape.label) (seed \(shape.seed))")
        let start = Date()
        let generated = try ShapeGenerator.generate(shape, at: source)
        record = ShapeRecord(
            shape: shape, slug: shape.slug, label: shape.label, totalBytes: generated.totalBytes,
            entries: generated.entryCount, generationSeconds: Date().timeIntervalSince(start))
        tree = SourceTree(generated)
        progress.log("making each job's package (first saves)")
        var first: [String: [Outcome]] = [:]
        for (strategy, fsync) in targets {
            let path = Self.packagePath(directory, strategy, fsync)
            progress.step("\(shape.slug) · first save · \(strategy) (fsync \(fsync))")
            let arguments = ["save"] + Self.saveArguments(strategy) + ["--fsync", "none", "--json", source, path]
            let cost = try Spawn.run(pkgtool, arguments, captureOutput: true)
            first[strategy, default: []].append(
                Outcome(
                    cost: cost, filesWritten: JSONFields.integer(cost.standardOutput, "files_written"),
                    reportedBytes: JSONFields.reportedBytes(cost.standardOutput), command: shellQuoted([pkgtool] + arguments)))
            packages["\(strategy)/\(fsync)"] = path
        }
        for strategy in ["full", "atomic", "atomic-keep", "journaled"] {
            guard let outcomes = first[strategy] else { continue }
            let job = Job(name: "pkgtool save \(Self.title(strategy))", tool: "pkgtool", strategy: strategy, fsync: "none") { outcomes[0] }
            firstSaves.append(JobMeasurement(suite: "save", shape: shape.slug, scenario: Self.firstSave, job: job, outcomes: outcomes))
        }
        if let rsync {
            let path = directory + "/rsync-copy"
            progress.step("\(shape.slug) · first rsync -a")
            let arguments = ["-a", source + "/", path + "/"]
            let cost = try Spawn.run(rsync, arguments)
            let job = Job(name: "rsync -a", tool: "rsync", fsync: "none") { Outcome(cost: cost, command: "") }
            firstSaves.append(
                JobMeasurement(
                    suite: "save", shape: shape.slug, scenario: Self.firstSave, job: job,
                    outcomes: [Outcome(cost: cost, filesWritten: tree.fileCount, command: shellQuoted([rsync] + arguments))]))
            copy = path
        }
    }

    /// The pseudo-scenario of the first saves.
    static let firstSave = "first-save"

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

    func package(_ strategy: String, _ fsync: String) -> String? { packages["\(strategy)/\(fsync)"] }

    // MARK: Jobs

    /// `pkgtool save --strategy S --fsync F --json SRC PKG` into this strategy's package.
    func saveJob(strategy: String, fsync: String) -> Job {
        let package = self.package(strategy, fsync)!
        let (pkgtool, source) = (self.pkgtool, self.source)
        return Job(name: "pkgtool save \(Self.title(strategy))", tool: "pkgtool", strategy: strategy, fsync: fsync) {
            let arguments = ["save"] + Self.saveArguments(strategy) + ["--fsync", fsync, "--json", source, package]
            let cost = try Spawn.run(pkgtool, arguments, captureOutput: true)
            return Outcome(
                cost: cost, filesWritten: JSONFields.integer(cost.standardOutput, "files_written"),
                reportedBytes: JSONFields.reportedBytes(cost.standardOutput), command: shellQuoted([pkgtool] + arguments))
        }
    }

    /// `rsync -a --delete --stats SRC/ COPY/`: the peer bringing a copy up to date.
    func rsyncJob(_ rsync: String) -> Job {
        let (source, copy) = (self.source, self.copy!)
        return Job(name: "rsync -a --delete", tool: "rsync", fsync: "none") {
            let arguments = ["-a", "--delete", "--stats", source + "/", copy + "/"]
            let cost = try Spawn.run(rsync, arguments, captureOutput: true)
            return Outcome(
                cost: cost, filesWritten: JSONFields.rsyncTransferred(cost.standardOutput),
                command: shellQuoted([rsync] + arguments))
        }
    }

    /// `cp -r SRC NEW` into a fresh directory each run: the peer making a full copy.
    func copyJob(_ cp: String, label: String) -> Job {
        Job(name: "cp -r (full copy)", tool: "cp", fsync: "none") { [self] in
            let destination = "\(directory)/cp-\(label)-\(copies.count)"
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

    /// Checks that every target holds exactly the source (`pkgtool diff SRC TARGET`, exit
    /// 0): a save that went wrong would make its figures meaningless.
    func verifyTargets(_ only: [String]? = nil) throws {
        let paths = only ?? (packages.values.sorted() + (copy.map { [$0] } ?? []))
        for path in paths {
            do {
                _ = try Spawn.run(pkgtool, ["diff", source, path])
            } catch {
                throw BenchError("\(path) does not hold the same tree as \(source) after the runs: \(error)")
            }
        }
    }

    func remove() throws { try Removal.removeTree(directory, parallelDepth: 1) }
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

    static func require(bytes: Int64, at path: String, for purpose: String) throws {
        guard let available = available(at: path) else { return }
        // Leave a tenth of the free space (at least 2 GiB) to everyone else on the machine.
        if bytes > available - max(available / 10, 2 << 30) {
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
