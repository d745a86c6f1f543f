/// The manual page, `pkgtool.1`, written in roff (man(7) macros) from the commands' tables:
/// the same summaries, details, options and exit statuses as `--help`.
public enum ManualPage {
    /// The whole page for `commands` (pkgtool's own by default), sections in man(7)'s order.
    public static func roff(commands: [CommandSpec] = PkgTool.commands.map { $0.spec }) -> String {
        var page = head()
        page += options(PkgTool.globalOptions)
        page += [".SH COMMANDS"]
        for command in commands {
            page += section(command)
        }
        page += exitStatusSection() + outputSection() + environmentSection() + filesSection()
        page += [".SH EXAMPLES"]
        page += examples()
        page += [
            ".SH SEE ALSO",
            "git(1), xxhsum(1), zip(1), unzip(1), diff(1), cmp(1)",
            "",
        ]
        return page.joined(separator: "\n")
    }

    /// The title, NAME, SYNOPSIS and DESCRIPTION, up to the global options' heading.
    private static func head() -> [String] {
        [
            ".\\\" pkgtool(1), written by 'pkgtool man' (pkgtool \(PkgTool.version)) from its option tables.",
            ".TH PKGTOOL 1 \"\" \"pkgtool \(PkgTool.version)\" \"User Commands\"",
            ".SH NAME",
            "pkgtool \\- hash, diff, save incrementally and zip document packages",
            ".SH SYNOPSIS",
            ".B pkgtool",
            ".I COMMAND",
            "[options] [arguments]",
            ".br",
            ".B pkgtool",
            "\\-\\-help | \\-\\-version | help",
            ".RI [ COMMAND ]",
            ".SH DESCRIPTION",
            text(
                """
                pkgtool works on document packages: directories shown to a person as one file. It
                hashes them (XXH3-128, Merkle trees), lists and compares them, saves a new version
                writing only what changed and crash-safe, keeps a manifest of content hashes, and
                packs them into ZIP archives and back, refusing hostile archives.
                """),
            ".PP",
            text("Global options:"),
        ]
    }

    /// EXIT STATUS: the general meanings, then how commands differ.
    private static func exitStatusSection() -> [String] {
        var lines = [".SH EXIT STATUS"]
        for meaning in PkgTool.exitStatusSummary {
            lines += [".TP", ".B \(meaning.status.rawValue)", text(meaning.meaning)]
        }
        return lines + [
            ".PP",
            text(
                """
                Each command above lists what its statuses mean. A command whose 1 means
                "different" (diff) exits 2 when an input cannot be read, a corrupt archive included,
                as diff(1) and cmp(1) do; verify exits 1 when what it verifies is damaged, and 2
                when it cannot reach a verdict.
                """),
        ]
    }

    /// OUTPUT: where results and errors go, and how names are quoted.
    private static func outputSection() -> [String] {
        [
            ".SH OUTPUT",
            text(
                """
                Results go to standard output, errors and warnings to standard error, one line
                each, starting with "pkgtool: ". A name that holds a control character, a double
                quote or a backslash is printed in double quotes with C escapes, as git quotes
                names with core.quotePath=false (\\n, \\t, \\", \\\\, \\033 for ESC); C1 control
                characters are escaped too. No name can forge a line of output or send an escape
                sequence to the terminal. ls and diff take -z: records end with NUL and names are
                printed as they are. --json prints one JSON document, keys in a fixed order,
                control characters escaped.
                """),
        ]
    }

    /// ENVIRONMENT: the variables pack and the remote commands read.
    private static func environmentSection() -> [String] {
        [
            ".SH ENVIRONMENT",
            ".TP",
            ".B SOURCE_DATE_EPOCH",
            text("The modification time pack gives every entry when --mtime is not given (Unix seconds)."),
            ".TP",
            ".B AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN",
            text("The S3 credentials of push, pull, sync, log, prune and diff; when unset, the profile's in the AWS files."),
            ".TP",
            ".B AWS_PROFILE, AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE",
            text("The profile to read (default: default) and the two files it is read from."),
            ".TP",
            ".B AWS_REGION, AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, AWS_CA_BUNDLE",
            text("The region, endpoint and CA bundle; --endpoint overrides the endpoint, and the profile's region, endpoint_url and ca_bundle apply when these are unset."),
            ".TP",
            ".B PKGTOOL_CACHE_DIR",
            text("Where the remote commands keep their cache of packs and manifests (default: $XDG_CACHE_HOME/pkgtool, else ~/.cache/pkgtool)."),
        ]
    }

    /// FILES: what pkgtool keeps beside and inside packages, and where.
    private static func filesSection() -> [String] {
        [
            ".SH FILES",
            ".TP",
            ".I PKG/.pkgtool/",
            text("The package's manifest, journal and the journaled strategy's temporaries; never listed, hashed or packed."),
            ".TP",
            ".I .PKG.<hash>.pkgtool-staging-*",
            text("A full or atomic save's new tree (or an unpack's), built beside its target; removed by the next command after a crash."),
            ".TP",
            ".I .PKG.<hash>.pkgtool-previous",
            text("The version an atomic save with --keep-previous replaced."),
            ".TP",
            ".I .OUT.zip.pkgtool-previous",
            text("The archive a pack with --keep-previous replaced."),
            ".TP",
            ".I .OUT.zip.<hash>.pkgtool-append",
            text("The recovery record of a pack appending to OUT.zip in place; the next command that opens OUT.zip completes or undoes that append and removes it."),
            ".TP",
            ".I ~/.aws/credentials, ~/.aws/config",
            text("The AWS shared credentials and config files (profiles, keys, region, endpoint_url)."),
            ".TP",
            ".I ~/.cache/pkgtool/",
            text("The remote commands' cache (PKGTOOL_CACHE_DIR moves it); safe to remove."),
            ".TP",
            ".I (no lock file)",
            text("A save locks the package directory itself with flock(2)."),
        ]
    }

    /// A person's first commands, each with a line saying what it does.
    static let exampleList: [(command: String, meaning: String)] = [
        ("pkgtool save Draft.notebook Notes.notebook", "Saves the folder Draft.notebook as the package Notes.notebook, writing only what changed."),
        ("pkgtool diff --stat Draft.notebook Notes.notebook", "Shows what the next save would change, without changing anything."),
        ("pkgtool hash Notes.notebook", "Prints the package's root hash: equal exactly when the contents are."),
        ("pkgtool pack Notes.notebook Notes.zip", "Zips the package to share it; pkgtool unpack Notes.zip Copy.notebook unzips it safely."),
        ("pkgtool verify Notes.zip", "Checks every entry of an archive (or every file of a package) against its recorded hashes."),
        ("pkgtool push Notes.notebook s3://my-bucket/notes", "Uploads a new version to an S3 store; later pushes need no URL."),
        ("pkgtool pull s3://my-bucket/notes Copy.notebook", "Brings the latest version to another device, downloading only what it lacks."),
        ("pkgtool pull -n s3://my-bucket/notes Copy.notebook", "Lists how a pull would change the copy and what it would download, changing nothing (push -n, sync -n too)."),
        ("pkgtool log s3://my-bucket/notes", "Lists the remote's versions, newest first."),
    ]

    static func examples() -> [String] {
        exampleList.flatMap { example in [".TP", "\\fB\(escape(example.command))\\fR", text(example.meaning)] }
    }

    /// `.SS` for one command: usage, summary, details, options, exit statuses.
    static func section(_ command: CommandSpec) -> [String] {
        var lines = [".SS \(quotedArgument("pkgtool \(command.name)"))", ".B pkgtool \(escape(command.name))"]
        if !command.arguments.isEmpty { lines.append(escapeLine(command.arguments)) }
        lines += [".PP", text(command.summary.prefix(1).uppercased() + command.summary.dropFirst() + ".")]
        for paragraph in paragraphs(command.details) {
            lines.append(".PP")
            // Indented lines are a laid-out table (columns of spaces): kept as they are;
            // the lines around them are filled text.
            var index = paragraph.startIndex
            while index < paragraph.endIndex {
                let indented = paragraph[index].hasPrefix(" ")
                let end = paragraph[index...].firstIndex { $0.hasPrefix(" ") != indented } ?? paragraph.endIndex
                let run = paragraph[index..<end]
                if indented {
                    lines += [".RS 2", ".nf"] + run.map { escapeLine(String($0.dropFirst(2))) } + [".fi", ".RE"]
                } else {
                    lines.append(text(run.joined(separator: "\n")))
                }
                index = end
            }
        }
        lines += [".PP", "Options:"]
        lines += options(command.options)
        lines += [".PP", "Exit status:"]
        for meaning in command.exitStatuses {
            lines += [".TP 4", ".B \(meaning.status.rawValue)", text(meaning.meaning)]
        }
        return lines
    }

    static func options(_ options: [OptionSpec]) -> [String] {
        var lines: [String] = []
        for option in options {
            var spelling = option.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
            spelling += "\\fB\\-\\-\(escape(option.long))\\fR"
            if let placeholder = option.placeholder { spelling += " \\fI\(escape(placeholder))\\fR" }
            lines += [".TP", spelling, text(option.help)]
        }
        return lines
    }

    /// Paragraphs of a details text: runs of lines between blank lines.
    static func paragraphs(_ text: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.trimmingSpaces.isEmpty {
                if !current.isEmpty { result.append(current) }
                current = []
            } else {
                current.append(String(line))
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }

    /// Filled text: escaped, each line safe from being read as a request.
    static func text(_ text: String) -> String {
        text.split(separator: "\n").map { escapeLine(String($0).trimmingSpaces) }.joined(separator: "\n")
    }

    /// A line of text: escaped, and protected with `\&` when it would start with `.` or `'`
    /// (a roff request) or a space (a break).
    static func escapeLine(_ line: String) -> String {
        let escaped = escape(line)
        if let first = escaped.first, first == "." || first == "'" || first == " " { return "\\&" + escaped }
        return escaped
    }

    /// roff's escapes: a backslash is `\e`, a hyphen `\-` (so that options copy as typed),
    /// and anything beyond ASCII `\[uXXXX]`, which groff and mandoc read whatever the
    /// page's encoding is taken to be.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case _ where scalar.value >= 0x80:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                escaped += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// An argument of a macro, in double quotes.
    static func quotedArgument(_ text: String) -> String {
        "\"" + escape(text).replacing("\"", with: "\\(dq") + "\""
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first == " " { slice.removeFirst() }
        while slice.last == " " { slice.removeLast() }
        return String(slice)
    }
}
