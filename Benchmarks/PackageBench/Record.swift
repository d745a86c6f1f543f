import Foundation
import PackageCore

/// Everything one pkgbench run measured, with what is needed to reproduce it: written as
/// `--json FILE`, read back by the HTML report and its test.
///
/// Keys are snake_case in the file (`bytes_written`); sizes are bytes, times seconds.
public struct BenchmarkRecord: Codable, Sendable {
    public var pkgbench: RunInfo
    public var machine: Machine
    /// `tool name → first line of its --version`, for every tool a job ran.
    public var tools: [String: String]
    public var seed: UInt64
    public var runs: Int
    public var warmups: Int
    public var shapes: [ShapeRecord] = []
    /// Command templates of every kind of job (SRC, PKG, COPY, NEW stand for paths); each
    /// measurement also carries its exact command line.
    public var commands: [String: String] = [:]
    public var measurements: [JobMeasurement] = []
    public var checks: [Check] = []
    public var notes: [String] = []

    public init(pkgbench: RunInfo, machine: Machine, tools: [String: String], seed: UInt64, runs: Int, warmups: Int) {
        self.pkgbench = pkgbench
        self.machine = machine
        self.tools = tools
        self.seed = seed
        self.runs = runs
        self.warmups = warmups
    }

    public func measurements(suite: String) -> [JobMeasurement] { measurements.filter { $0.suite == suite } }

    /// Encodes as pretty-printed JSON with snake_case keys, sorted, through pkgtool's one
    /// JSON writer (PackageCore's `JSON`).
    /// - Throws: `EncodingError` when a figure is not a finite number.
    public func encoded() throws -> Data {
        Data(try JSON(encoding: self, keys: .snakeCase).serialized(pretty: true).utf8)
    }

    public static func decode(_ data: Data) throws -> BenchmarkRecord {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode(BenchmarkRecord.self, from: data)
    }
}

/// How pkgbench was run.
public struct RunInfo: Codable, Sendable {
    public var mode: String
    public var arguments: [String]
    /// "release" or "debug" (a debug build's figures mean nothing).
    public var build: String
    public var started: String
    public var durationSeconds: Double = 0
    public var workDirectory: String
    public var pkgtool: String
    /// The second pkgtool measured beside `pkgtool` (`--baseline`), if any.
    public var baseline: String? = nil

    public init(mode: String, arguments: [String], build: String, started: String, workDirectory: String, pkgtool: String) {
        self.mode = mode
        self.arguments = arguments
        self.build = build
        self.started = started
        self.workDirectory = workDirectory
        self.pkgtool = pkgtool
    }
}

/// A generated package as used by a run: its shape (kind, bytes, counts, seed) and totals.
public struct ShapeRecord: Codable, Sendable {
    public var shape: PackageShape
    public var slug: String
    public var label: String
    public var totalBytes: Int64
    public var entries: Int
    public var generationSeconds: Double
    /// What each scenario changed, per scenario name.
    public var edits: [String: Edit] = [:]
    /// Where the targets lived when not beside the source on the work directory's file
    /// system: "xfs (loop image)" for the large-file suite's second half.
    public var targetFilesystem: String? = nil
}

/// Minimum, median and maximum of repeated runs, with every value.
public struct Distribution: Codable, Sendable, Equatable {
    public var median: Double
    public var min: Double
    public var max: Double
    public var values: [Double]

    public init(_ values: [Double]) {
        self.values = values
        median = Sample.median(values)
        min = values.min() ?? 0
        max = values.max() ?? 0
    }
}

/// One job measured over N runs (after warm-ups), side by side with the others of its group.
public struct JobMeasurement: Codable, Sendable {
    /// "save", "hash", "diff", "zip", "sweep-bytes", "sweep-entries", "sync".
    public var suite: String
    /// The shape's slug, when the job ran on a generated package.
    public var shape: String?
    public var scenario: String?
    /// The row's name: "pkgtool save --strategy atomic", "rsync -a --delete", "cp -r".
    public var job: String
    /// The program: "pkgtool", "rsync", "cp", "find", "xxhsum", "library" (in-process).
    public var tool: String
    public var strategy: String?
    /// "none" or "full" for pkgtool saves; "none" for peers (they never fsync).
    public var fsync: String?
    /// The exact command line of the last run (paths included).
    public var command: String
    public var runs: Int
    public var seconds: Distribution
    /// Bytes the process (and its children) caused to be written: /proc/PID/io write_bytes.
    public var bytesWritten: Distribution
    public var bytesRead: Distribution
    /// Files written, as the tool reports it (pkgtool's `files_written`, rsync's "regular
    /// files transferred"), or the files of the tree for a full copy; nil when unknown.
    public var filesWritten: Int?
    /// Bytes the tool says it wrote (pkgtool: file contents plus its manifest and journal),
    /// median; the difference from `bytesWritten` is the file system's own metadata
    /// (directory blocks, inode tables) and, for rsync, nothing it reports.
    public var reportedBytesWritten: Int64?
    /// Peak resident set size over the runs; nil for in-process jobs.
    public var peakRssBytes: Int64?
    /// CPU time over wall time (median): how many cores the job kept busy.
    public var coresBusy: Double
    /// This job's median over the median of `full` with the same fsync policy, same scenario.
    public var ratioToFull: Ratio?
    /// For sweeps: the package's bytes and entries at this point.
    public var packageBytes: Int64?
    public var packageEntries: Int?
    /// pkgtool's own counters of chunk-level saves (`files_patched`, `files_cloned`,
    /// `bytes_patched` of `pkgtool save --json`), medians; nil when the tool does not say.
    public var filesPatched: Int? = nil
    public var filesCloned: Int? = nil
    public var bytesPatched: Int64? = nil
    /// For targets on a loop-mounted image: the bytes the loop device wrote during each run
    /// (sectors written × 512, the file system flushed before and after), which the
    /// process's own counters do not see.
    public var deviceBytesWritten: Distribution? = nil
    /// For the sync suite: how much the job's bucket grew on the server, and the requests
    /// the server answered for it (medians).
    public var bytesStored: Int64?
    public var requests: Int?

    /// A stable identifier: suite/shape/scenario/job/fsync.
    public var id: String {
        [suite, shape ?? "", scenario ?? "", job, fsync ?? ""].joined(separator: "|")
    }
}

public struct Ratio: Codable, Sendable, Equatable {
    public var seconds: Double
    public var bytesWritten: Double
}

/// A target of the issues, evaluated on this run's figures.
public struct Check: Codable, Sendable {
    public var suite: String
    /// What is compared: "small-edit: journaled bytes written".
    public var name: String
    public var value: Double
    /// The value as printed: "12.0 KiB", "0.43×".
    public var shown: String
    /// The target: "≤ 512.0 KiB".
    public var want: String
    public var met: Bool
    /// Why the goal matters to a user, in words (the JSON key stays `source`): "a small
    /// edit writes about what changed, never the whole package".
    public var source: String
}

/// The machine a run measured.
public struct Machine: Codable, Sendable {
    public var cores: Int
    public var cpuModel: String
    public var memoryBytes: Int64
    public var kernel: String
    public var workDirectory: String
    public var filesystem: String
    public var mountOptions: String
    public var hostname: String

    /// Reads /proc and uname for the machine running this process, and the file system
    /// holding `workDirectory` from /proc/self/mountinfo (the longest mount point above it).
    public static func current(workDirectory: String) -> Machine {
        var name = utsname()
        uname(&name)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        let kernel = "\(field(name.sysname)) \(field(name.release)) \(field(name.machine))"
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let meminfo = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let memory = meminfo.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int64($0) }.map { $0 * 1024 } ?? 0
        let absolute = URL(fileURLWithPath: workDirectory).standardizedFileURL.path
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: absolute)) ?? absolute
        var filesystem = "unknown"
        var options = ""
        var best = -1
        let mountinfo = (try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)) ?? ""
        for line in mountinfo.split(separator: "\n") {
            // id parent major:minor root mountpoint options ... - fstype source superoptions
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let left = halves[0].split(separator: " ")
            let right = halves[1].split(separator: " ")
            guard left.count >= 6, right.count >= 1 else { continue }
            let point = String(left[4])
            let matches = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if matches && point.count > best {
                best = point.count
                filesystem = String(right[0])
                options = String(left[5]) + (right.count >= 3 ? "," + right[2] : "")
            }
        }
        return Machine(
            cores: ProcessInfo.processInfo.activeProcessorCount, cpuModel: model, memoryBytes: memory, kernel: kernel,
            workDirectory: resolved, filesystem: filesystem, mountOptions: options,
            hostname: ProcessInfo.processInfo.hostName)
    }

    public var summary: String {
        "\(cores) cores (\(cpuModel)), \(Format.bytes(memoryBytes)) RAM, \(kernel), work dir on \(filesystem)"
    }
}
