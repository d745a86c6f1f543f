import PackageCore
import PackageRemote
import PkgToolCLI

/// What `push`, `pull`, `log` and `diff … s3://…` share once they run: the remote's URL, the
/// options that reach it, the progress line, and how a `RemoteError` becomes an exit status.
extension RemoteCommandSupport {
    /// Parses an `s3://BUCKET/PREFIX` argument; a malformed one is a usage error.
    package static func location(_ text: String, usageLine: String) throws -> RemoteLocation {
        do {
            return try RemoteLocation(parsing: text)
        } catch {
            throw UsageError(error.message, usageLine: usageLine)
        }
    }

    /// The remote a push or pull reaches: the URL given, or the one `package` remembers
    /// (`PackageRemote.remembered(by:)`) with the endpoint remembered with it, unless
    /// `--endpoint` is given. None given nor remembered is a usage error.
    package static func remote(
        _ given: String?, package: String, arguments: ParsedArguments, usageLine: String, console: Console
    ) throws -> (location: RemoteLocation, endpoint: String?) {
        if let given { return (try location(given, usageLine: usageLine), nil) }
        guard let remembered = PackageRemote.remembered(by: package, note: { console.warning($0) }) else {
            throw UsageError(
                "'\(package)' remembers no remote (it was never pushed or pulled): give s3://BUCKET/PREFIX", usageLine: usageLine)
        }
        return remembered
    }

    /// Options from the environment and the command line (`endpoint`: the one a package
    /// remembers, used when `--endpoint` is not given).
    package static func options(_ arguments: ParsedArguments, usageLine: String, endpoint: String? = nil) throws -> RemoteOptions {
        var options = try RemoteOptions.fromEnvironment(
            endpoint: arguments.value("endpoint") ?? endpoint, profile: arguments.value("profile"))
        if arguments.values["transfers"] != nil {
            options.configuration.transport.concurrency = try arguments.integer(
                "transfers", in: 1...64, default: 4, usageLine: usageLine)
        }
        if arguments.values["retries"] != nil {
            options.configuration.transport.attempts = 1 + (try arguments.integer("retries", in: 0...20, default: 5, usageLine: usageLine))
        }
        if arguments.values["jobs"] != nil { options.workers = try arguments.workers(usageLine: usageLine) }
        if let text = arguments.value("limit-rate") {
            options.configuration.transport.maximumBytesPerSecond = try bytesPerSecond(
                text, option: "limit-rate", minimum: 1024, usageLine: usageLine)
        }
        if let text = arguments.value("speed-limit") {
            options.configuration.transport.minimumBytesPerSecond = Int(
                try bytesPerSecond(text, option: "speed-limit", minimum: 1, usageLine: usageLine))
        }
        if arguments.values["speed-time"] != nil {
            options.configuration.transport.stallTimeoutSeconds = try arguments.integer(
                "speed-time", in: 1...3600, default: 30, usageLine: usageLine)
        }
        if arguments.values["max-time"] != nil {
            options.configuration.transport.transferTimeoutSeconds = try arguments.integer(
                "max-time", in: 1...86_400, default: 900, usageLine: usageLine)
        }
        return options
    }

    /// A speed: bytes per second, with an optional suffix `k` (KiB) or `m` (MiB).
    static func bytesPerSecond(_ text: String, option: String, minimum: Int64, usageLine: String) throws(UsageError)
        -> Int64
    {
        let lowered = text.lowercased()
        let multiplier: Int64 = lowered.hasSuffix("k") ? 1 << 10 : lowered.hasSuffix("m") ? 1 << 20 : 1
        let digits = multiplier == 1 ? lowered : String(lowered.dropLast())
        guard let value = Int64(digits), value >= 0, value * multiplier >= minimum, value <= (1 << 40) / multiplier else {
            throw UsageError(
                "--\(option) expects bytes per second (at least \(minimum); suffixes k, m), not '\(text)'", usageLine: usageLine)
        }
        return value * multiplier
    }

    /// Runs `body`, turning a `RemoteError` into its line and exit status (1 refused, 2 trouble).
    /// Work stopped by Ctrl-C (`cancelling`) ends the process by the signal instead, its
    /// progress line erased, nothing printed.
    package static func run(console: Console, _ body: () throws -> ExitStatus) throws -> ExitStatus {
        do {
            return try body()
        } catch let error as RemoteError {
            console.clearProgress()
            console.finishInterrupted()
            console.error(error.message)
            return error.isRefusal ? .failure : .trouble
        } catch {
            console.clearProgress()
            console.finishInterrupted()
            throw error
        }
    }

    /// `options` with a cancellation that the first Ctrl-C (SIGTERM, SIGHUP) raises: the
    /// transfers abort, the package and the remote stay intact, and `run` ends the process
    /// by the signal.
    package static func cancelling(_ options: RemoteOptions, console: Console) -> RemoteOptions {
        var options = options
        let cancellation = options.cancellation ?? TransferCancellation()
        options.cancellation = cancellation
        console.stopOnInterrupt { cancellation.cancel() }
        return options
    }

    /// Runs `body` with the progress it reports drawn as `verb`'s line (`ProgressMeter`: on
    /// a terminal, unless `-q` or `--no-progress`): the bytes the library counts, of the
    /// total it sets before its transfers start; erased however `body` ends.
    package static func showingProgress<Result>(
        _ verb: String, console: Console, arguments: ParsedArguments,
        _ body: (_ progress: consuming Subprogress?) throws -> Result
    ) throws -> Result {
        try ProgressMeter.showing(verb, console: console, arguments: arguments) { meter in
            guard let meter else { return try body(nil) }
            let root = ProgressManager(totalCount: 1)
            meter.follow {
                let total = Int64(root.summary(of: ProgressManager.Properties.TotalByteCount.self))
                let done = Int64(root.summary(of: ProgressManager.Properties.CompletedByteCount.self))
                // A total of 0 is not known yet (the scan before the transfers), unless done.
                return (done, total > 0 || root.isFinished ? total : nil)
            }
            return try body(root.subprogress(assigningCount: 1))
        }
    }

    /// `A<TAB>path` lines of the files a push would read and upload: `A` for a path the
    /// remote's version lacks, `M` for one whose content changes (as `diff` names them).
    static func pushLines(_ plan: PushPlan) -> [String] {
        plan.files.map { file in (file.replaces ? "M" : "A") + "\t" + NameQuoting.quoted(file.path.string) }
    }

    /// "1.5 MiB", "820 B".
    package static func bytes(_ count: Int64) -> String { ByteCountText.describe(count) }

    package static func summary(_ version: VersionSummary) -> JSON {
        .object([
            ("id", .string(version.id.description)), ("sequence", .int(version.sequence)),
            ("time", .string(version.isoTime)), ("time_ns", .int(version.time)),
            ("parent", version.parent.map { .string($0.description) } ?? .null),
            ("second_parent", version.secondParent.map { .string($0.description) } ?? .null),
            ("root_hash", .string(version.rootHash.description)), ("size", .int(version.size)),
            ("entries", .int(version.entryCount)),
        ])
    }
}
