import PackageCore
import PackageZip

/// `pkgtool unpack ZIP DEST`: checked, staged extraction.
enum UnpackCommand: Command {
    static let spec = CommandSpec(
        name: "unpack",
        summary: "extract a ZIP archive into a new directory, refusing anything unsafe",
        arguments: "[--jobs N] [--sync] [--max-entries N] [--max-size BYTES] [--max-ratio R] ZIP DEST",
        options: [
            OptionSpec("jobs", short: "j", .value(placeholder: "N"), help: "threads (default: all cores)"),
            OptionSpec("sync", help: "fsync every file and directory before DEST appears"),
        ] + ZipCommandSupport.limitOptions,
        positionals: 2...2,
        details: """
            DEST must not exist or be an empty directory. The archive is checked first (names,
            links, overlaps, limits: Specs/zip.md); the tree is built beside DEST and renamed
            into place only when every entry's size, CRC-32 and content hash checked out. On
            refusal (exit 1) or error (exit 2) nothing is left behind and DEST is untouched.
            """)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let usage = spec.usageLine
        let workers = try arguments.integer("jobs", in: 1...1024, default: ProcessInfoCores.active, usageLine: usage)
        let limits = try ZipCommandSupport.limits(arguments, usageLine: usage)
        let archive = try ZipArchive.open(arguments.positionals[0], limits: limits)
        try archive.extract(
            to: arguments.positionals[1], workers: workers, durability: arguments.flag("sync") ? .full : .none)
        return .success
    }
}
