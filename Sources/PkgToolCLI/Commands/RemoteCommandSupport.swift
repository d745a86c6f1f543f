import Dispatch
import PackageCore
import PackageRemote

/// What `push`, `pull`, `log` and `diff … s3://…` share: the remote's URL, the options that
/// reach it, the progress line, and how a `RemoteError` becomes an exit status.
enum RemoteCommandSupport {
    static let endpoint = OptionSpec(
        "endpoint", .value(placeholder: "URL"), help: "the S3 endpoint (default: AWS_ENDPOINT_URL, else AWS)")
    static let transfers = OptionSpec(
        "transfers", .value(placeholder: "N"), help: "transfers in flight at once (1–64, default 4)")

    static let retries = OptionSpec(
        "retries", .value(placeholder: "N"), help: "retries of a request after a connection error or 5xx (0–20, default 5)")
    static let limitRate = OptionSpec(
        "limit-rate", .value(placeholder: "BYTES"), help: "cap each transfer at BYTES per second (suffixes k, m)")

    static let environmentHelp = """
        The store is reached as every S3 tool does: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
        AWS_SESSION_TOKEN, AWS_REGION (or AWS_DEFAULT_REGION), AWS_ENDPOINT_URL (--endpoint
        overrides it; path-style addressing for such endpoints), AWS_CA_BUNDLE. What this
        machine remembers about remotes lives in PKGTOOL_CACHE_DIR (default ~/.cache/pkgtool).
        """

    /// Parses an `s3://BUCKET/PREFIX` argument; a malformed one is a usage error.
    static func location(_ text: String, usageLine: String) throws -> RemoteLocation {
        do {
            return try RemoteLocation(parsing: text)
        } catch {
            throw UsageError(error.message, usageLine: usageLine)
        }
    }

    static func isRemote(_ text: String) -> Bool { text.hasPrefix("s3://") }

    /// Options from the environment and the command line.
    static func options(_ arguments: ParsedArguments, usageLine: String) throws -> RemoteOptions {
        var options = try RemoteOptions.fromEnvironment(endpoint: arguments.value("endpoint"))
        if arguments.values["transfers"] != nil {
            options.configuration.transport.concurrency = try arguments.integer(
                "transfers", in: 1...64, default: 4, usageLine: usageLine)
        }
        if arguments.values["retries"] != nil {
            options.configuration.transport.attempts = 1 + (try arguments.integer("retries", in: 0...20, default: 5, usageLine: usageLine))
        }
        if arguments.values["jobs"] != nil { options.workers = try arguments.workers(usageLine: usageLine) }
        if let text = arguments.value("limit-rate") {
            let lowered = text.lowercased()
            let multiplier: Int64 = lowered.hasSuffix("k") ? 1 << 10 : lowered.hasSuffix("m") ? 1 << 20 : 1
            let digits = multiplier == 1 ? lowered : String(lowered.dropLast())
            guard let value = Int64(digits), value >= 1024 / multiplier, value <= (1 << 40) / multiplier else {
                throw UsageError("--limit-rate expects bytes per second (at least 1024; suffixes k, m), not '\(text)'", usageLine: usageLine)
            }
            options.configuration.transport.maximumBytesPerSecond = value * multiplier
        }
        return options
    }

    /// Runs `body`, turning a `RemoteError` into its line and exit status (1 refused, 2 trouble).
    static func run(console: Console, _ body: () throws -> ExitStatus) throws -> ExitStatus {
        do {
            return try body()
        } catch let error as RemoteError {
            console.clearProgress()
            console.error(error.message)
            return error.isRefusal ? .failure : .trouble
        } catch {
            console.clearProgress()
            throw error
        }
    }

    /// "1.5 MiB", "820 B".
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return unit == 0 ? "\(count) B" : "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    static func summary(_ version: VersionSummary) -> JSON {
        .object([
            ("id", .string(version.id.description)), ("sequence", .int(version.sequence)),
            ("time", .string(version.isoTime)), ("time_ns", .int(version.time)),
            ("parent", version.parent.map { .string($0.description) } ?? .null),
            ("root_hash", .string(version.rootHash.description)), ("size", .int(version.size)),
            ("entries", .int(version.entryCount)),
        ])
    }
}

/// Draws a push's or pull's progress on a terminal's stderr, ten times a second, from a
/// Dispatch timer (the work blocks the calling thread).
final class RemoteProgressLine: @unchecked Sendable {
    // @unchecked: the console and `running` are touched only on `queue` until `stop()`
    // returns, and by the owner after.
    private let manager: ProgressManager
    private let console: Console
    private let verb: String
    private let queue = DispatchQueue(label: "pkgtool.progress-line")
    private let timer: any DispatchSourceTimer
    private var running = true

    /// Runs `body` with a fresh progress manager drawn as `verb`'s line while it runs (on a
    /// terminal), the line erased however `body` ends.
    static func showing<Result>(
        _ verb: String, console: Console, _ body: (_ progress: consuming Subprogress) throws -> Result
    ) throws -> Result {
        let root = ProgressManager(totalCount: 1)
        let line = start(root, console: console, verb: verb)
        defer { line?.stop() }
        return try body(root.subprogress(assigningCount: 1))
    }

    /// Starts drawing when stderr is a terminal; nil otherwise.
    static func start(_ manager: ProgressManager, console: Console, verb: String) -> RemoteProgressLine? {
        guard console.errorIsTerminal else { return nil }
        return RemoteProgressLine(manager: manager, console: console, verb: verb)
    }

    private init(manager: ProgressManager, console: Console, verb: String) {
        self.manager = manager
        self.console = console
        self.verb = verb
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    private func draw() {
        guard running else { return }
        let percent = Int((manager.fractionCompleted * 100).rounded(.down))
        // The byte counts live on the library's own manager, below this one.
        let done = RemoteCommandSupport.bytes(Int64(manager.summary(of: ProgressManager.Properties.CompletedByteCount.self)))
        let total = RemoteCommandSupport.bytes(Int64(manager.summary(of: ProgressManager.Properties.TotalByteCount.self)))
        console.progress("\(verb): \(percent)%  \(done) of \(total)")
    }

    deinit { timer.cancel() }

    /// Stops the timer (waiting for a drawing in progress) and erases the line.
    func stop() {
        queue.sync {
            running = false
            timer.cancel()
        }
        console.clearProgress()
    }
}
