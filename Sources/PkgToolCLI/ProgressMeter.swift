import Dispatch
import PackageCore
import Synchronization

/// The one progress line every long command draws (save, pack, unpack, verify, push, pull,
/// sync): on standard error when it is a terminal, unless `-q`/`--no-progress`; the share
/// of a total that only ever grows before the work starts, the rate and the time left, as
/// `rsync --info=progress2` and `rclone -P` show them; erased when the command ends,
/// however it ends.
///
/// The work reports from any thread (`setTotal`, `add`, `set`); a Dispatch timer draws ten
/// times a second from what was reported last, so reporting costs an atomic add.
public final class ProgressMeter: @unchecked Sendable {
    // @unchecked: the console is touched only on `queue` until `stop()` returns (the timer
    // draws there; `stop` cancels it there), and by the owner after.
    private let verb: String
    private let console: Console
    private let columns: Int
    private let completed = Atomic<Int64>(0)
    private let total = Atomic<Int64>(-1)
    private let queue = DispatchQueue(label: "pkgtool.progress-meter")
    private let timer: any DispatchSourceTimer
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    /// A smoothed rate, bytes per second (updated on `queue`).
    private var rate: Double = 0
    private var lastSample: (at: ContinuousClock.Instant, completed: Int64)
    private var running = true
    /// Where the figures come from, when the work keeps its own counts (`follow`).
    private var sample: (@Sendable () -> (completed: Int64, total: Int64?))?

    /// Runs `body` with a meter drawing `verb`'s line while it runs (nil when progress is
    /// not shown: standard error not a terminal, `--quiet`, `--no-progress`), erased
    /// however `body` ends.
    public static func showing<Result>(
        _ verb: String, console: Console, arguments: ParsedArguments, _ body: (ProgressMeter?) throws -> Result
    ) rethrows -> Result {
        let meter = shown(for: arguments, console: console) ? ProgressMeter(verb: verb, console: console) : nil
        // Drawn at once: a long scan before the first figure still says what is going on.
        meter?.queue.sync { meter?.draw() }
        defer { meter?.stop() }
        return try body(meter)
    }

    /// Whether a command run with `arguments` shows progress on `console`.
    public static func shown(for arguments: ParsedArguments, console: Console) -> Bool {
        console.errorIsTerminal && !arguments.flag("quiet") && !arguments.flag("no-progress")
    }

    private init(verb: String, console: Console) {
        self.verb = verb
        self.console = console
        columns = StandardStream.error.terminalColumns ?? 80
        started = clock.now
        lastSample = (started, 0)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    deinit { timer.cancel() }

    /// The bytes the whole work will move, once known (before that the line shows what was
    /// done and the rate, without a share).
    public func setTotal(_ bytes: Int64) { total.store(max(0, bytes), ordering: .relaxed) }

    /// `bytes` more done (from any thread).
    public func add(_ bytes: Int64) { completed.add(bytes, ordering: .relaxed) }

    /// Done so far, and the total when known: for work that reports its own counts.
    public func set(completed bytes: Int64, total totalBytes: Int64?) {
        completed.store(bytes, ordering: .relaxed)
        if let totalBytes { total.store(max(0, totalBytes), ordering: .relaxed) }
    }

    /// Takes the figures from `sample` at each drawing, for work that keeps its own counts
    /// (a `ProgressManager`'s byte summaries): done so far, and the total once known.
    public func follow(_ sample: @escaping @Sendable () -> (completed: Int64, total: Int64?)) {
        queue.sync { self.sample = sample }
    }

    /// Stops drawing (waiting for a drawing in progress) and erases the line.
    public func stop() {
        queue.sync {
            guard running else { return }
            running = false
            timer.cancel()
            console.clearProgress()
        }
    }

    private func draw() {
        guard running else { return }
        if let sample {
            let (done, known) = sample()
            set(completed: done, total: known)
        }
        let now = clock.now
        let done = completed.load(ordering: .relaxed)
        let known = total.load(ordering: .relaxed)
        let interval = seconds(now - lastSample.at)
        if interval >= 0.25 {
            let instant = Double(done - lastSample.completed) / interval
            rate = rate == 0 ? instant : rate * 0.7 + instant * 0.3
            lastSample = (now, done)
        }
        console.progress(String(Self.line(verb: verb, completed: done, total: known < 0 ? nil : known, bytesPerSecond: rate, elapsed: seconds(now - started)).prefix(max(10, columns - 1))))
    }

    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `saving  42%  120.5 MiB of 286.1 MiB  48.2 MiB/s  0:03 left`; without a total,
    /// `packing  120.5 MiB  48.2 MiB/s`.
    static func line(verb: String, completed: Int64, total: Int64?, bytesPerSecond: Double, elapsed: Double) -> String {
        var parts = [verb]
        if let total {
            let shown = min(completed, total)
            let percent = total == 0 ? 100 : Int(Double(shown) * 100 / Double(total))
            parts.append("\(percent)%")
            parts.append("\(ByteCountText.describe(shown)) of \(ByteCountText.describe(total))")
        } else {
            parts.append(ByteCountText.describe(completed))
        }
        // A rate (and a time left) only once it means something: a second in, and past the
        // first percent of a known total (work reported a file at a time would otherwise
        // show the rate of its small files while a large one is read).
        let measurable = total.map { $0 > 0 && completed * 100 >= $0 } ?? true
        if bytesPerSecond > 0 && elapsed >= 1 && measurable {
            parts.append("\(ByteCountText.describe(Int64(bytesPerSecond)))/s")
            if let total, total > completed {
                parts.append("\(duration(Double(total - completed) / bytesPerSecond)) left")
            }
        }
        return parts.joined(separator: "  ")
    }

    /// `0:07`, `12:34`, `1:02:03`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(min(seconds, 359_999).rounded(.up))
        let (hours, minutes, rest) = (whole / 3600, whole / 60 % 60, whole % 60)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return hours > 0 ? "\(hours):\(two(minutes)):\(two(rest))" : "\(minutes):\(two(rest))"
    }
}

extension OptionSpec {
    /// `-q`, `--no-progress`: what every long command takes about its progress line.
    public static let progressOptions = [
        OptionSpec(
            "quiet", short: "q",
            help: "no progress line, no warnings, no informational lines (errors and an asked-for --stats or --json stay)"),
        OptionSpec("no-progress", help: "no progress line (drawn by default when stderr is a terminal)"),
    ]

    /// `-v`: the commands that write entries list them.
    public static let verbose = OptionSpec(
        "verbose", short: "v", help: "list the paths written, one a line, on stdout, when done")
}
