import PackageCore

/// One option a command accepts: its spellings, whether it takes a value, and its help.
public struct OptionSpec: Sendable {
    public enum Kind: Sendable {
        /// A flag: present or not.
        case flag
        /// Takes a value: `--name VALUE` or `--name=VALUE`.
        case value(placeholder: String)
    }

    /// What a shell may offer for an option's value or a command's operands.
    public enum Completion: Sendable, Equatable {
        /// Nothing: a number, a name, free text.
        case none
        /// File and directory names.
        case paths
        /// One of a fixed set of words.
        case choices([String])
    }

    public var long: String
    public var short: Character?
    public var kind: Kind
    public var help: String
    /// Options may repeat (each value kept) when true; otherwise the last one wins.
    public var repeatable: Bool
    /// What completion offers for the value (ignored for flags).
    public var completion: Completion
    /// Other long spellings accepted for the same option (another command's spelling of
    /// the concept, or an old one): parsed as `long`, never shown in help.
    public var aliases: [String]

    public init(
        _ long: String, short: Character? = nil, _ kind: Kind = .flag, help: String, repeatable: Bool = false,
        completion: Completion = .none, aliases: [String] = []
    ) {
        self.aliases = aliases
        self.long = long
        self.short = short
        self.kind = kind
        self.help = help
        self.repeatable = repeatable
        self.completion = completion
    }

    /// `-j, --jobs N`: the worker threads option every scanning command has.
    public static let jobs = OptionSpec(
        "jobs", short: "j", .value(placeholder: "N"), help: "worker threads (default: all cores)")

    /// `--exclude PATTERN` and `--no-default-excludes`: what save, pack and push leave out
    /// of a package or an archive (`ParsedArguments.exclusions`).
    public static let exclusionOptions = [
        OptionSpec(
            "exclude", .value(placeholder: "PATTERN"),
            help: "leave out entries matching a glob: a name at any depth (*.tmp), a path with a / (media/cache), a directory with a trailing / (repeatable)",
            repeatable: true),
        OptionSpec(
            "no-default-excludes",
            help: "keep the litter left out by default (.DS_Store, ._*, Thumbs.db, desktop.ini, .*.swp, *~, .#*)"),
    ]

    /// `-z, --null`: NUL-terminated records with names unquoted, for `ls` and `diff` (git's `-z`).
    public static let null = OptionSpec(
        "null", short: "z", help: "end each record with NUL instead of a newline, names unquoted (for scripts)")

    public var takesValue: Bool {
        if case .value = kind { return true }
        return false
    }

    /// The value's placeholder ("N"), nil for a flag.
    public var placeholder: String? {
        if case .value(let placeholder) = kind { return placeholder }
        return nil
    }

    /// "-j, --jobs N" as help shows it.
    public var synopsis: String {
        var text = short.map { "-\($0), " } ?? "    "
        text += "--\(long)"
        if case .value(let placeholder) = kind { text += " \(placeholder)" }
        return text
    }
}

/// One exit status of a command and what it means there.
public struct ExitStatusMeaning: Sendable, Equatable {
    public var status: ExitStatus
    public var meaning: String
    public init(_ status: ExitStatus, _ meaning: String) {
        self.status = status
        self.meaning = meaning
    }
}

/// What a command accepts: options and the count of positional arguments.
///
/// One table for everything that describes the command: parsing, `--help`, the shell
/// completions (`pkgtool completion`) and the manual page (`pkgtool man`) all read it.
public struct CommandSpec: Sendable {
    public var name: String
    public var summary: String
    /// The arguments part of the usage line, e.g. "[options] PATH...".
    public var arguments: String
    public var options: [OptionSpec]
    public var positionalRange: ClosedRange<Int>
    /// What completion offers for the positional arguments.
    public var operands: OptionSpec.Completion
    /// Paragraphs shown after the summary in `--help`.
    public var details: String
    /// Every exit status the command can end with, and what it means for this command
    /// (the general meanings of `PkgTool.exitStatusSummary` when a command gives none).
    public var exitStatuses: [ExitStatusMeaning]
    /// The status for input examined and refused (`InputRejectedError`: a corrupt archive, a
    /// damaged manifest). 1 where refusing the input is the command's answer (verify, unpack);
    /// 2 where 1 means "different" and a refused input means no answer at all (diff), as
    /// diff(1) and cmp(1) exit 2 on trouble.
    public var refusedInputStatus: ExitStatus

    public init(
        name: String, summary: String, arguments: String, options: [OptionSpec],
        positionals: ClosedRange<Int>, operands: OptionSpec.Completion = .paths, details: String = "",
        exitStatuses: [ExitStatusMeaning] = PkgTool.exitStatusSummary, refusedInputStatus: ExitStatus = .failure
    ) {
        self.name = name
        self.summary = summary
        self.arguments = arguments
        self.options = options + [OptionSpec("help", short: "h", help: "show this help and exit")]
        self.positionalRange = positionals
        self.operands = operands
        self.details = details
        self.exitStatuses = exitStatuses
        self.refusedInputStatus = refusedInputStatus
    }

    public var usageLine: String { arguments.isEmpty ? "usage: pkgtool \(name)" : "usage: pkgtool \(name) \(arguments)" }

    /// The help `--help` prints, filled to 80 columns.
    public var helpText: String { helpText(width: 80) }

    /// The help `--help` prints, filled to `width` columns (the terminal's).
    public func helpText(width: Int) -> String {
        var lines = [TextWrapping.usage(usageLine, width: width), "", TextWrapping.paragraphs(summary, width: width)]
        if !details.isEmpty { lines += ["", TextWrapping.paragraphs(details, width: width)] }
        lines += ["", "options:"]
        let labelWidth = min(options.map(\.synopsis.count).max() ?? 0, 28)
        for option in options {
            lines.append(TextWrapping.item(option.synopsis, labelWidth: max(labelWidth, option.synopsis.count), text: option.help, width: width))
        }
        lines += ["", "exit status:"]
        for exit in exitStatuses {
            lines.append(TextWrapping.item("\(exit.status.rawValue)", labelWidth: 1, text: exit.meaning, width: width))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A command line that did not fit its command's spec.
public struct UsageError: Error, Equatable, CustomStringConvertible, Sendable {
    public var message: String
    public var usageLine: String
    public init(_ message: String, usageLine: String) {
        self.message = message
        self.usageLine = usageLine
    }
    public var description: String { message }
}

/// The parsed command line of one command.
public struct ParsedArguments: Sendable, Equatable {
    public var positionals: [String] = []
    /// Values by long name; a flag holds one empty string per occurrence.
    public var values: [String: [String]] = [:]
    public var helpRequested = false
    /// The arguments as given, after the command's name: what a command whose work runs in
    /// another executable hands on (`RemoteHelper`). Not part of equality.
    public var commandLine: [String] = []

    public static func == (left: ParsedArguments, right: ParsedArguments) -> Bool {
        left.positionals == right.positionals && left.values == right.values && left.helpRequested == right.helpRequested
    }

    public func flag(_ name: String) -> Bool { values[name] != nil }
    public func value(_ name: String) -> String? { values[name]?.last }

    /// What `--exclude` and `--no-default-excludes` leave out: the litter of desktop systems
    /// and editors (`PathExclusions.litter`) unless told, plus every `--exclude` pattern.
    public var exclusions: PathExclusions {
        let given = PathExclusions(values["exclude"] ?? [])
        return flag("no-default-excludes") ? given : PathExclusions.litter.adding(given)
    }
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// An integer option within `range`, or `defaultValue` when absent.
    public func integer(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int, usageLine: String)
        throws(UsageError) -> Int
    {
        guard let text = value(name) else { return defaultValue }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "--\(name) expects a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'",
                usageLine: usageLine)
        }
        return number
    }

    /// `--jobs`: 1 to 1024, by default the cores this process may use.
    public func workers(usageLine: String) throws(UsageError) -> Int {
        try integer("jobs", in: 1...1024, default: ProcessInfoCores.active, usageLine: usageLine)
    }

    /// One of `choices`, or `defaultValue` when absent.
    public func choice(_ name: String, among choices: [String], default defaultValue: String?, usageLine: String)
        throws(UsageError) -> String?
    {
        guard let text = value(name) else { return defaultValue }
        guard choices.contains(text) else {
            throw UsageError(
                "--\(name) expects one of \(choices.joined(separator: ", ")), not '\(text)'", usageLine: usageLine)
        }
        return text
    }
}

/// Parses `arguments` (without the command name) against `spec`. A pure function.
///
/// Accepts `--name`, `--name=value`, `--name value`, `-x`, `-x value`, `-xVALUE`, bundled
/// short flags (`-lr`), and `--` to end options. Everything else that starts with "-"
/// (except "-" alone, the conventional name of standard input) is an unknown option.
public func parseArguments(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> ParsedArguments {
    var parser = ArgumentScan(arguments, spec: spec)
    var optionsEnded = false
    while let argument = parser.next() {
        if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
            parser.result.positionals.append(argument)
        } else if argument == "--" {
            optionsEnded = true
        } else if argument.hasPrefix("--") {
            try parser.longOption(argument.dropFirst(2))
        } else {
            try parser.shortOptions(argument.dropFirst())
        }
    }
    if parser.result.helpRequested { return parser.result }
    try checkPositionalCount(parser.result.positionals, spec: spec)
    return parser.result
}

/// The state of one `parseArguments`: the arguments not yet taken, what they gave so
/// far, and the spec's options by spelling.
private struct ArgumentScan {
    let arguments: [String]
    let spec: CommandSpec
    var index = 0
    var result = ParsedArguments()
    let byLong: [String: OptionSpec]
    let byShort: [Character: OptionSpec]

    init(_ arguments: [String], spec: CommandSpec) {
        self.arguments = arguments
        self.spec = spec
        result.commandLine = arguments
        byLong = Dictionary(
            spec.options.flatMap { option in ([option.long] + option.aliases).map { ($0, option) } },
            uniquingKeysWith: { first, _ in first })
        byShort = Dictionary(
            spec.options.compactMap { option in option.short.map { ($0, option) } }, uniquingKeysWith: { first, _ in first })
    }

    /// The next argument, taken; nil at the end.
    mutating func next() -> String? {
        guard index < arguments.count else { return nil }
        index += 1
        return arguments[index - 1]
    }

    /// Records one occurrence: a repeatable option keeps every value, others the last.
    mutating func record(_ option: OptionSpec, _ value: String) {
        if option.long == "help" { result.helpRequested = true }
        if option.repeatable {
            result.values[option.long, default: []].append(value)
        } else {
            result.values[option.long] = [value]
        }
    }

    /// `--name`, `--name=value` or `--name value` (`body` is what follows the dashes).
    mutating func longOption(_ body: Substring) throws(UsageError) {
        let name: String
        var inlineValue: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inlineValue = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
        }
        guard let option = byLong[name] else {
            let hint = Suggestions.hint(for: name, among: spec.options.map(\.long) + ["help"], prefix: "--")
            throw UsageError("unknown option '--\(name)' for '\(spec.name)'\(hint)", usageLine: spec.usageLine)
        }
        if option.takesValue {
            if let inlineValue {
                record(option, inlineValue)
            } else if let value = next() {
                record(option, value)
            } else {
                throw UsageError("option '--\(name)' needs a value", usageLine: spec.usageLine)
            }
        } else {
            if inlineValue != nil {
                throw UsageError("option '--\(name)' takes no value", usageLine: spec.usageLine)
            }
            record(option, "")
        }
    }

    /// `-x`, bundled flags (`-lr`), `-x value` or `-xVALUE` (`letters` follow the dash): a
    /// letter that takes a value takes the rest of the argument, or else the next one.
    mutating func shortOptions(_ letters: Substring) throws(UsageError) {
        var characters = letters
        while let letter = characters.first {
            characters = characters.dropFirst()
            guard let option = byShort[letter] else {
                throw UsageError("unknown option '-\(letter)' for '\(spec.name)'", usageLine: spec.usageLine)
            }
            if option.takesValue {
                if !characters.isEmpty {
                    record(option, String(characters))
                } else if let value = next() {
                    record(option, value)
                } else {
                    throw UsageError("option '-\(letter)' needs a value", usageLine: spec.usageLine)
                }
                return
            }
            record(option, "")
        }
    }
}

/// Refuses too few or too many positional arguments for `spec`, naming the first extra one.
private func checkPositionalCount(_ positionals: [String], spec: CommandSpec) throws(UsageError) {
    let count = positionals.count
    let range = spec.positionalRange
    guard !range.contains(count) else { return }
    let expected: String
    if range.lowerBound == range.upperBound {
        expected = "\(range.lowerBound) argument\(range.lowerBound == 1 ? "" : "s")"
    } else if range.upperBound == Int.max {
        expected = "at least \(range.lowerBound) argument\(range.lowerBound == 1 ? "" : "s")"
    } else {
        expected = "\(range.lowerBound) to \(range.upperBound) arguments"
    }
    let message =
        count < range.lowerBound
        ? "'\(spec.name)' needs \(expected), got \(count)"
        : "'\(spec.name)' takes \(expected), got \(count): unexpected '\(positionals[range.upperBound])'"
    throw UsageError(message, usageLine: spec.usageLine)
}
