import PackageCore
import PackageZip

/// `pkgtool verify ZIP`: structure, every CRC-32 and every content hash.
enum VerifyCommand: Command {
    static let spec = CommandSpec(
        name: "verify",
        summary: "check a ZIP archive: structure, every CRC-32 and content hash",
        arguments: "[--json] [--jobs N] [--max-entries N] [--max-size BYTES] [--max-ratio R] ZIP",
        options: [
            OptionSpec("json", help: "print a JSON object instead of a text line"),
            OptionSpec("jobs", short: "j", .value(placeholder: "N"), help: "threads (default: all cores)"),
        ] + ZipCommandSupport.limitOptions,
        positionals: 1...1,
        details: """
            Exit status 0 when the archive is sound and every entry's data matches its CRC-32
            (and pkgtool's XXH3-128 content hash when present); 1 with a one-line reason naming
            the entry otherwise (the checks are those of 'unpack', Specs/zip.md).
            """)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let usage = spec.usageLine
        let workers = try arguments.integer("jobs", in: 1...1024, default: ProcessInfoCores.active, usageLine: usage)
        let limits = try ZipCommandSupport.limits(arguments, usageLine: usage)
        let path = arguments.positionals[0]
        let (archive, report) = try ZipCommandSupport.verifyArchive(path, limits: limits, workers: workers)
        if arguments.flag("json") {
            console.line(
                JSON.object([
                    ("path", .string(path)), ("ok", .bool(true)), ("entries", .int(report.entries)),
                    ("bytes", .int(report.bytes)), ("hashes_checked", .int(report.hashesChecked)),
                    ("zip64", .bool(archive.isZip64)),
                ]).serialized(pretty: true))
        } else {
            console.line(
                "ok  \(path): \(report.entries) entries, \(report.bytes) bytes, CRC-32 checked, \(report.hashesChecked) content hashes checked")
        }
        return .success
    }
}
