import Foundation
import Glibc

/// One kind of work, measured from outside its process (or, for in-process library jobs,
/// from /proc/self/io around the call).
struct Job {
    var name: String
    var tool: String
    var strategy: String? = nil
    var fsync: String? = nil
    /// Shown before the name in the progress line (the sweep point, say).
    var detail: String? = nil
    /// Runs the job once.
    var run: () throws -> Outcome
}

/// One run of a job.
struct Outcome {
    var cost: ProcessCost
    var filesWritten: Int?
    /// Bytes the tool itself says it wrote (pkgtool's `bytes_written` + `metadata_bytes_written`).
    var reportedBytes: Int64? = nil
    /// The exact command line.
    var command: String
    /// False for in-process jobs (their peak RSS is the harness's own).
    var measuredRSS = true
    /// pkgtool's chunk-level counters (`files_patched`, `files_cloned`, `bytes_patched`).
    var filesPatched: Int? = nil
    var filesCloned: Int? = nil
    var bytesPatched: Int64? = nil
    /// What the loop device under the target wrote during the run (targets on an image).
    var deviceBytesWritten: Int64? = nil
}

/// Runs `warmups` rounds then `runs` rounds; each round first calls `before(round)` (the
/// scenario's edit of the source, for instance) and then every job once. Jobs are
/// interleaved, and their order rotates from round to round, so that drift in the
/// machine's speed and the page cache left by one job fall on all of them alike.
/// Returns the measured rounds' outcomes, per job.
func runInterleaved(
    _ jobs: [Job], runs: Int, warmups: Int = 1, progress: ProgressDisplay, label: String,
    before: (Int) throws -> Void = { _ in }
) throws -> [[Outcome]] {
    var outcomes = Array(repeating: [Outcome](), count: jobs.count)
    for round in 0..<(warmups + runs) {
        try before(round)
        let measured = round >= warmups
        let roundLabel = measured ? "run \(round - warmups + 1)/\(runs)" : "warm-up"
        for offset in 0..<jobs.count {
            let index = (offset + round) % jobs.count
            let job = jobs[index]
            progress.step(
                "\(label) · \(roundLabel) · \(job.detail.map { $0 + " · " } ?? "")\(job.name)"
                    + (job.fsync.map { " (fsync \($0))" } ?? ""))
            let outcome = try job.run()
            if measured { outcomes[index].append(outcome) }
        }
    }
    return outcomes
}

extension JobMeasurement {
    /// Summarises a job's outcomes.
    init(suite: String, shape: String?, scenario: String?, job: Job, outcomes: [Outcome]) {
        let costs = outcomes.map(\.cost)
        self.init(
            suite: suite, shape: shape, scenario: scenario, job: job.name, tool: job.tool, strategy: job.strategy,
            fsync: job.fsync, command: outcomes.last?.command ?? "", runs: outcomes.count,
            seconds: Distribution(costs.map(\.seconds)),
            bytesWritten: Distribution(costs.map { Double($0.bytesWritten) }),
            bytesRead: Distribution(costs.map { Double($0.bytesRead) }),
            filesWritten: outcomes.compactMap(\.filesWritten).isEmpty
                ? nil : Int(Sample.median(outcomes.compactMap(\.filesWritten).map(Double.init))),
            reportedBytesWritten: outcomes.compactMap(\.reportedBytes).isEmpty
                ? nil : Int64(Sample.median(outcomes.compactMap(\.reportedBytes).map(Double.init))),
            peakRssBytes: outcomes.allSatisfy(\.measuredRSS) ? costs.map(\.peakRSSBytes).max() : nil,
            coresBusy: Sample.median(costs.map { ($0.userSeconds + $0.systemSeconds) / max($0.seconds, 1e-9) }),
            ratioToFull: nil, packageBytes: nil, packageEntries: nil)
        func median<T: BinaryInteger>(_ values: [T]) -> T? {
            values.isEmpty ? nil : T(Sample.median(values.map { Double($0) }))
        }
        filesPatched = median(outcomes.compactMap(\.filesPatched))
        filesCloned = median(outcomes.compactMap(\.filesCloned))
        bytesPatched = median(outcomes.compactMap(\.bytesPatched))
        let device = outcomes.compactMap(\.deviceBytesWritten)
        deviceBytesWritten = device.isEmpty ? nil : Distribution(device.map(Double.init))
    }

    /// From a sample of the older suites (hash, zip).
    init(suite: String, sample: Sample, tool: String, command: String = "") {
        let costs = sample.costs
        self.init(
            suite: suite, shape: nil, scenario: nil, job: sample.name, tool: tool, strategy: nil, fsync: nil,
            command: command, runs: costs.count, seconds: Distribution(costs.map(\.seconds)),
            bytesWritten: Distribution(costs.map { Double($0.bytesWritten) }),
            bytesRead: Distribution(costs.map { Double($0.bytesRead) }), filesWritten: nil, reportedBytesWritten: nil,
            peakRssBytes: sample.peakRSSBytes, coresBusy: sample.parallelism, ratioToFull: nil, packageBytes: nil,
            packageEntries: nil)
    }
}

/// Fills `ratioToFull` of every pkgtool save in `measurements`: its median time and bytes
/// over those of `full` with the same fsync policy in the same suite, shape and scenario.
func addRatiosToFull(_ measurements: inout [JobMeasurement]) {
    for index in measurements.indices where measurements[index].tool == "pkgtool" || measurements[index].tool == "library" {
        let m = measurements[index]
        guard m.strategy != nil,
            let full = measurements.first(where: {
                $0.suite == m.suite && $0.shape == m.shape && $0.scenario == m.scenario && $0.strategy == "full"
                    && $0.fsync == m.fsync && $0.tool == "pkgtool"
            })
        else { continue }
        measurements[index].ratioToFull = Ratio(
            seconds: m.seconds.median / max(full.seconds.median, 1e-12),
            bytesWritten: m.bytesWritten.median / max(full.bytesWritten.median, 1))
    }
}

/// Quotes a command line for the record, as a POSIX shell would need it.
func shellQuoted(_ arguments: [String]) -> String {
    arguments.map { argument in
        let safe = argument.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || "-_./=:,@%+".unicodeScalars.contains($0)
        }
        return safe && !argument.isEmpty ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }.joined(separator: " ")
}

/// The live progress line: drawn on stderr only when it is a terminal, at most ten times
/// a second, erased before any other output. Phase messages are printed as lines always.
public final class ProgressDisplay {
    public let isTerminal: Bool
    private let quiet: Bool
    private let start = Date()
    private var drawn = false
    private var lastDraw = Date.distantPast
    private var steps = 0

    public init(quiet: Bool = false, isTerminal: Bool = isatty(2) == 1) {
        self.quiet = quiet
        self.isTerminal = isTerminal
    }

    /// Elapsed seconds since the display was made (the run's start).
    public var elapsed: Double { Date().timeIntervalSince(start) }

    /// A new step of work: redraws the live line.
    func step(_ text: String) {
        steps += 1
        guard isTerminal, !quiet else { return }
        let now = Date()
        guard now.timeIntervalSince(lastDraw) >= 0.1 else { return }
        lastDraw = now
        let seconds = Int(elapsed)
        var line = String(format: "%d:%02d  ", seconds / 60, seconds % 60) + text
        let width = Self.terminalColumns()
        if line.count > width - 1 { line = String(line.prefix(max(width - 2, 10))) + "…" }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
        drawn = true
    }

    /// A phase message, on its own line.
    public func log(_ message: String) {
        guard !quiet else { return }
        clear()
        let seconds = Int(elapsed)
        FileHandle.standardError.write(Data(String(format: "pkgbench: %d:%02d %@\n", seconds / 60, seconds % 60, message).utf8))
    }

    /// A warning: printed even when quiet.
    public func warn(_ message: String) {
        clear()
        FileHandle.standardError.write(Data("pkgbench: warning: \(message)\n".utf8))
    }

    /// Erases the live line.
    public func clear() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }

    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 100
    }
}
