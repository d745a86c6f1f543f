import PackageCore

/// How a command ended, as its exit status: the contract of Specs/cli.md.
public enum ExitStatus: Int32, Sendable {
    /// Success, or no differences.
    case success = 0
    /// Differences found, verification failed, or input refused.
    case failure = 1
    /// Usage error or trouble (missing path, I/O error).
    case trouble = 2
}

/// One `pkgtool` subcommand.
public protocol Command: Sendable {
    static var spec: CommandSpec { get }
    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus
}

/// The `pkgtool` command line: dispatch, help, version and error reporting.
public enum PkgTool {
    public static let version = "0.1.0"

    /// Every command, in the order help lists them. `push`, `pull`, `sync`, `log` and `diff`
    /// with an `s3://` side run their transfers in `pkgtool-remote` (`RemoteHelper`), which runs this
    /// frame with `RemoteCommands.all`, the same table with those commands' work linked in.
    public static let commands: [any Command.Type] = [
        HashCommand.self,
        ListCommand.self,
        DiffCommand.self,
        VerifyCommand.self,
        ManifestCommand.self,
        SaveCommand.self,
        PackCommand.self,
        UnpackCommand.self,
        PushCommand.self, PullCommand.self, SyncCommand.self, LogCommand.self, PruneCommand.self,
        ConflictsCommand.self, ResolveCommand.self,
        BenchCommand.self,
        CompletionCommand.self,
        ManCommand.self,
    ]

    /// The options pkgtool takes before a command, for help, completion and the manual.
    public static let globalOptions: [OptionSpec] = [
        OptionSpec("help", short: "h", help: "list the commands and exit"),
        OptionSpec("version", short: "V", help: "print \"pkgtool \(version)\" and exit"),
    ]

    /// The exit statuses every command shares (Specs/cli.md); each command's help says
    /// which it uses and what 1 means there.
    public static let exitStatusSummary: [ExitStatusMeaning] = [
        ExitStatusMeaning(.success, "success, or no differences"),
        ExitStatusMeaning(.failure, "differences found, verification failed, or input refused"),
        ExitStatusMeaning(
            .trouble,
            "usage error, or trouble: a missing or unreadable path, an I/O error, an input that cannot be compared"),
    ]

    static func command(named name: String, in table: [any Command.Type]) -> (any Command.Type)? {
        table.first { $0.spec.name == name }
    }

    /// The list of commands `pkgtool --help` prints, filled to 80 columns.
    public static var usageText: String { usageText(width: 80) }

    /// The list of commands `pkgtool --help` prints, filled to `width` columns.
    public static func usageText(width: Int) -> String {
        var lines = [
            "usage: pkgtool COMMAND [options] [arguments]",
            "",
            TextWrapping.paragraphs(
                "Content-hashed packages: hash, diff, save incrementally and zip document packages.", width: width),
            "",
            "commands:",
        ]
        let labelWidth = commands.map { $0.spec.name.count }.max() ?? 0
        for command in commands {
            lines.append(TextWrapping.item(command.spec.name, labelWidth: labelWidth, text: command.spec.summary, width: width))
        }
        lines += [
            "",
            TextWrapping.paragraphs(
                """
                pkgtool help COMMAND, or pkgtool COMMAND --help, tells more about one command; \
                pkgtool man prints the manual page, pkgtool completion bash|zsh|fish a completion script.

                Exit status: 0 success or no differences, 1 differences found, verification failed \
                or input refused, 2 usage error or trouble (missing path, I/O error, an input diff \
                cannot read).
                """, width: width),
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Runs a command line (without the program name) and returns its exit status.
    ///
    /// - Parameter commands: the table (`PkgTool.commands`, or one that replaces some of them
    ///   with implementations linked into another executable; names and specs the same).
    public static func run(_ arguments: [String], console: Console, commands table: [any Command.Type] = commands) -> ExitStatus {
        run(arguments, console: console, table: table)
    }

    /// `run(_:console:commands:)`, where a nil `table` is `commands`, built only when the
    /// command line needs it (`pkgtool hash FILE` does not: `HashCommand.plainArguments`).
    static func run(_ arguments: [String], console: Console, table: [any Command.Type]?) -> ExitStatus {
        let status = dispatch(arguments, console: console, commands: table)
        if status != .success, !console.wroteOutput, let message = console.lastError, asksForJSON(arguments) {
            console.line(failureJSON(status: status, message: message).serialized(pretty: true))
        }
        console.flush()
        return status
    }

    /// What a `--json` command prints on stdout when it fails before printing its result
    /// (Specs/cli.md): `{"error": {"code": EXIT STATUS, "message": THE ERROR LINE}}`.
    static func failureJSON(status: ExitStatus, message: String) -> JSON {
        .object([("error", .object([("code", .int(Int(status.rawValue))), ("message", .string(message))]))])
    }

    /// Whether `--json` is among the options (before any `--`).
    static func asksForJSON(_ arguments: [String]) -> Bool {
        arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }

    /// Runs the command `arguments` name.
    static func dispatch(_ arguments: [String], console: Console, commands given: [any Command.Type]?) -> ExitStatus {
        defer { console.flush() }
        if let plain = HashCommand.plainArguments(arguments, commands: given) {
            return HashCommand.runPlain(plain, console: console)
        }
        let table = given ?? commands
        guard let first = arguments.first else {
            console.errorText(usageText(width: console.helpWidth))
            return .trouble
        }
        switch first {
        case "--help", "-h":
            console.write(usageText(width: console.helpWidth))
            return .success
        case "--version", "-V":
            console.line("pkgtool \(version)")
            return .success
        case "help":
            return helpCommand(arguments, table: table, console: console)
        default:
            break
        }
        guard let command = command(named: first, in: table) else {
            refuseUnknown(first, table: table, console: console)
            return .trouble
        }
        return runCommand(command, arguments: Array(arguments.dropFirst()), console: console)
    }

    /// `pkgtool help [COMMAND]`: the general usage, or one command's help.
    private static func helpCommand(_ arguments: [String], table: [any Command.Type], console: Console) -> ExitStatus {
        guard arguments.count <= 2 else {
            console.error("'help' takes at most one command name")
            console.errorText("usage: pkgtool help [COMMAND]\n")
            return .trouble
        }
        guard arguments.count == 2, !["--help", "-h", "help"].contains(arguments[1]) else {
            console.write(usageText(width: console.helpWidth))
            return .success
        }
        guard let command = command(named: arguments[1], in: table) else {
            let hint = Suggestions.hint(for: arguments[1], among: table.map { $0.spec.name })
            console.error("unknown command '\(arguments[1])'\(hint); 'pkgtool --help' lists them")
            return .trouble
        }
        console.write(command.spec.helpText(width: console.helpWidth))
        return .success
    }

    /// Says that `first` is no command (or no global option), with the nearest one that is.
    private static func refuseUnknown(_ first: String, table: [any Command.Type], console: Console) {
        if first.hasPrefix("-") {
            let hint = Suggestions.hint(
                for: String(first.drop { $0 == "-" }), among: ["help", "version"], prefix: "--")
            console.error("unknown option '\(first)'\(hint)")
        } else {
            let hint = Suggestions.hint(for: first, among: table.map { $0.spec.name })
            console.error("unknown command '\(first)'\(hint); 'pkgtool --help' lists them")
        }
        console.errorText("usage: pkgtool COMMAND [options] [arguments]\n")
    }

    /// Parses `arguments` (after the command's name) for `command` and runs it; a usage
    /// error exits 2 with the usage line, any other error as `report` maps it.
    private static func runCommand(_ command: any Command.Type, arguments: [String], console: Console) -> ExitStatus {
        do {
            if let raw = command as? any RawArgumentsCommand.Type {
                return try raw.run(rawArguments: arguments, console: console)
            }
            let parsed = try parseArguments(arguments, spec: command.spec)
            if parsed.helpRequested {
                console.write(command.spec.helpText(width: console.helpWidth))
                return .success
            }
            console.quiet = parsed.flag("quiet")
            return try command.run(parsed, console: console)
        } catch let error as UsageError {
            console.error(error.message)
            console.errorText(error.usageLine + "\n")
            return .trouble
        } catch {
            return report(error, console: console, refusedInput: command.spec.refusedInputStatus)
        }
    }

    /// Prints an error as one line and maps it to an exit status: `refusedInput` for input
    /// examined and refused (the command's `refusedInputStatus`), 2 for the rest.
    @discardableResult
    public static func report(_ error: any Error, console: Console, refusedInput: ExitStatus = .failure)
        -> ExitStatus
    {
        switch error {
        case let rejected as any InputRejectedError:
            console.error(rejected.description)
            return refusedInput
        case let failure as FileSystemError:
            console.error(failure.description)
            return .trouble
        case let usage as UsageError:
            console.error(usage.message)
            console.errorText(usage.usageLine + "\n")
            return .trouble
        default:
            console.error(String(describing: error))
            return .trouble
        }
    }

    /// Runs the process's command line and exits with its status.
    ///
    /// Closed standard descriptors are reopened on /dev/null first (a file opened later must
    /// never become standard output); output that could not be written (a closed standard
    /// output, a full disk, a reader gone while SIGPIPE is ignored) makes the status 2 with
    /// one line on standard error, as coreutils do: a script must not take lost output for
    /// success.
    ///
    /// - Parameter commands: the table (nil: `commands`), as for `run(_:console:commands:)`.
    public static func main(commands table: [any Command.Type]? = nil) -> Never {
        ProcessEnvironment.returnLargeBlocksPromptly()
        let closed = StandardStream.guardStandardDescriptors()
        let console = Console(outputWasClosed: closed.outputClosed, inputWasClosed: closed.inputClosed)
        console.redaction = SecretRedaction(
            secrets: SecretRedaction.secretVariables.compactMap { ProcessEnvironment.value($0) })
        if let invalid = ProcessEnvironment.firstNonUTF8Argument() {
            console.error(
                "argument '\(TextEscaping.escapingInvalidUTF8(invalid))' is not valid UTF-8: pkgtool takes paths and names in UTF-8 only (rename it, or reach it through a link with a UTF-8 name)"
            )
            ProcessEnvironment.exit(ExitStatus.trouble.rawValue)
        }
        var status = run(Array(CommandLine.arguments.dropFirst()), console: console, table: table)
        console.flush()
        if let failure = console.outputFailure {
            console.error("cannot write standard output: \(failure)")
            status = .trouble
        }
        ProcessEnvironment.exit(status.rawValue)
    }
}
