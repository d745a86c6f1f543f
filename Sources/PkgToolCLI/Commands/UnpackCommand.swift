import PackageCore
import PackageZip

/// `pkgtool unpack ZIP DEST`: checked, staged extraction.
enum UnpackCommand: Command {
    static let spec = CommandSpec(
        name: "unpack",
        summary: "extract a ZIP archive into a new directory, refusing anything unsafe",
        arguments: "[--jobs N] [--sync] [--stats | --json] [--dry-run] [-q | -v] [--no-progress] [--max-entries N] [--max-size BYTES] [--max-ratio R] ZIP DEST",
        options: [
            OptionSpec("jobs", short: "j", .value(placeholder: "N"), help: "threads (default: all cores)"),
            OptionSpec("sync", help: "fsync every file and directory before DEST appears"),
            OptionSpec("stats", help: "print the files, directories and links written and the bytes", aliases: ["stat"]),
            OptionSpec("json", help: "print the same as JSON"),
            OptionSpec(
                "dry-run", short: "n",
                help: "check the archive's structure and DEST, list the entries that would be written, write nothing"),
        ] + ZipCommandSupport.limitOptions + OptionSpec.progressOptions + [.verbose],
        positionals: 2...2,
        details: """
            DEST must not exist or be an empty directory. The archive is checked first (names,
            links, overlaps, limits); the tree is built beside DEST and renamed
            into place only when every entry's size, CRC-32 and content hash checked out. On
            refusal (exit 1), error (exit 2) or Ctrl-C nothing is left behind and DEST is
            untouched.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "extracted"),
            ExitStatusMeaning(.failure, "the archive was refused (corrupt, hostile, past a limit); nothing written"),
            ExitStatusMeaning(
                .trouble,
                "usage error; ZIP missing or unreadable, DEST exists and is not an empty directory, an I/O error; nothing left"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let usage = spec.usageLine
        let workers = try arguments.integer("jobs", in: 1...1024, default: ProcessInfoCores.active, usageLine: usage)
        let limits = try ZipCommandSupport.limits(arguments, usageLine: usage)
        if arguments.flag("stats") && arguments.flag("json") {
            throw UsageError("--stats and --json cannot be combined", usageLine: usage)
        }
        let archive = try ZipArchive.open(arguments.positionals[0], limits: limits)
        if arguments.flag("dry-run") {
            _ = try ZipArchive.checkedDestination(arguments.positionals[1])
            let snapshot = try archive.snapshot(computingMissingHashes: false)
            let changes = TreeDiff.changes(from: .empty, to: snapshot, detectRenames: false)
            DiffCommand.print(changes, json: arguments.flag("json"), summary: arguments.flag("stats"), console: console)
            return .success
        }
        let cancellation = SaveCancellation()
        console.stopOnInterrupt(cancellation)
        let report: ZipArchive.ExtractReport
        do {
            report = try ProgressMeter.showing("unpacking", console: console, arguments: arguments) { meter in
                var progress: (@Sendable (Int64) -> Void)?
                if let meter {
                    meter.setTotal(archive.entries.reduce(Int64(0)) { $0 + ($1.kind == .regular ? $1.uncompressedSize : 0) })
                    progress = { meter.add($0) }
                }
                return try archive.extract(
                    to: arguments.positionals[1], workers: workers, durability: arguments.flag("sync") ? .full : .none,
                    progress: progress, cancellation: cancellation)
            }
        } catch {
            // Ctrl-C: the staging tree is gone, DEST untouched; the process ends by the signal.
            console.finishInterrupted()
            throw error
        }
        if arguments.flag("verbose") {
            for entry in archive.entries { console.line(NameQuoting.quoted(entry.path)) }
        }
        if arguments.flag("json") {
            console.line(
                JSON.object([
                    ("archive", .string(arguments.positionals[0])), ("destination", .string(arguments.positionals[1])),
                    ("files", .int(report.files)), ("directories", .int(report.directories)),
                    ("links", .int(report.links)), ("bytes", .int(report.bytes)),
                ]).serialized(pretty: true))
        } else if arguments.flag("stats") {
            console.line(
                """
                files           \(report.files), \(StatisticsText.bytes(report.bytes))
                directories     \(report.directories)
                links           \(report.links)
                """)
        }
        return .success
    }
}
