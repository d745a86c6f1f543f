import PackageCore
import PackageZip
import Synchronization

/// `pkgtool pack SRC OUT.zip`: a directory tree as a ZIP archive, on all cores, reusing the
/// compressed bytes of unchanged entries of an existing OUT.zip (or `--base`).
enum PackCommand: Command {
    static let spec = CommandSpec(
        name: "pack",
        summary: "write a directory as a ZIP archive (parallel, incremental, reproducible)",
        arguments:
            "[--level N] [--jobs N] [--base OLD.zip | --fresh] [--first NAME] [--mtime T] [--sync] [--keep-previous | --compact] [--stats | --json] [--exclude PATTERN]... [-q] [--no-progress] SRC OUT.zip",
        options: [
            OptionSpec("level", short: "l", .value(placeholder: "N"), help: "deflate level 0-9 (default 6; 0 stores)"),
            OptionSpec("jobs", short: "j", .value(placeholder: "N"), help: "compression threads (default: all cores)"),
            OptionSpec(
                "base", .value(placeholder: "OLD.zip"),
                help: "copy unchanged entries' compressed bytes from this archive (default: OUT.zip if it exists)",
                completion: .paths),
            OptionSpec(
                "first", .value(placeholder: "NAME"), help: "put this file first, stored (EPUB/ODF mimetype)",
                completion: .paths),
            OptionSpec(
                "mtime", .value(placeholder: "T"),
                help: "one modification time for every entry, Unix seconds (default: $SOURCE_DATE_EPOCH, else each file's)"),
            OptionSpec("fresh", help: "do not reuse an existing OUT.zip: compress everything"),
            OptionSpec("sync", help: "fsync OUT.zip before it replaces the old one, and its directory after"),
            OptionSpec(
                "keep-previous",
                help: "keep the replaced archive as .OUT.zip.pkgtool-previous; the next pack overwrites it (faster; costs its size on disk)"),
            OptionSpec(
                "compact",
                help: "rewrite OUT.zip whole instead of appending the changed entries to it (drops the dead bytes of earlier appends)"),
            OptionSpec("stats", help: "print the entries written, compressed, stored and reused, and the sizes", aliases: ["stat"]),
            OptionSpec("json", help: "print the same as JSON"),
        ] + OptionSpec.exclusionOptions + OptionSpec.progressOptions,
        positionals: 2...2,
        details: """
            Entries are written in depth-first path order with Unix modes, symbolic links,
            empty directories, extended timestamps, CRC-32 and pkgtool's XXH3-128 content hash
            (a ZIP any unzip reads). Files that do not compress (judged from a sample) are stored.
            The same tree with the same --mtime gives the same bytes, whatever --jobs.
            A repack after a small change appends the changed entries to OUT.zip in place
            and writes a new central directory after them (old versions stay as dead bytes,
            at most half the archive; a kill mid-way is undone by the next pkgtool command
            that opens OUT.zip). --compact, --mtime, --base, --fresh, a symbolic or hard
            link at OUT.zip, or too many dead bytes rewrite it instead: OUT.zip is then
            replaced atomically: readers see the old archive or the new one.
            With --keep-previous the archive OUT.zip replaces is kept beside it, hidden, and
            the next pack writes into that file's blocks and swaps the two names: a repack
            costs a fraction of writing a new file. Without the flag such a file is left alone.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "OUT.zip written"),
            ExitStatusMeaning(.failure, "the archive given as --base was refused"),
            ExitStatusMeaning(
                .trouble,
                "usage error; SRC missing or not a directory, --first names no regular file, OUT.zip names a directory, device, FIFO or socket, a directory where --keep-previous keeps the old archive, a file changed size while packed, an I/O error (OUT.zip unchanged)"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let usage = spec.usageLine
        var options = try packOptions(arguments)
        let source = arguments.positionals[0]
        let output = arguments.positionals[1]
        let cancellation = SaveCancellation()
        options.cancellation = cancellation
        console.stopOnInterrupt(cancellation)
        let report: ZipPackReport
        do {
            report = try ProgressMeter.showing("packing", console: console, arguments: arguments) { meter in
                if let meter {
                    options.progress = { meter.add($0) }
                    options.progressTotal = { meter.setTotal($0) }
                }
                return try ZipPacker.pack(source, to: output, options: options)
            }
        } catch let error as ZipPackError {
            throw UsageError(error.description, usageLine: usage)
        } catch {
            console.finishInterrupted()
            throw error
        }
        warn(report, source: source, output: output, console: console)
        if arguments.flag("json") {
            console.line(json(report, source: source, output: output).serialized(pretty: true))
        } else if arguments.flag("stats") {
            console.line(text(report))
        }
        return .success
    }

    /// The options the command line asks for; combinations that contradict each other
    /// and a bad `--mtime` (or `SOURCE_DATE_EPOCH`) are usage errors.
    private static func packOptions(_ arguments: ParsedArguments) throws -> ZipPackOptions {
        let usage = spec.usageLine
        var options = ZipPackOptions()
        options.level = try arguments.integer("level", in: 0...9, default: 6, usageLine: usage)
        options.workers = try arguments.integer("jobs", in: 1...1024, default: ProcessInfoCores.active, usageLine: usage)
        options.base = arguments.value("base")
        options.reuseExistingOutput = !arguments.flag("fresh")
        options.first = arguments.value("first")
        options.exclusions = arguments.exclusions
        options.durability = arguments.flag("sync") ? .full : .none
        options.keepsPrevious = arguments.flag("keep-previous")
        options.appendsInPlace = !arguments.flag("compact")
        if options.keepsPrevious && arguments.flag("compact") {
            throw UsageError("--keep-previous and --compact cannot be combined (--keep-previous always rewrites)", usageLine: usage)
        }
        if arguments.flag("stats") && arguments.flag("json") {
            throw UsageError("--stats and --json cannot be combined", usageLine: usage)
        }
        if options.base != nil && arguments.flag("fresh") {
            throw UsageError("--base and --fresh cannot be combined (--fresh reuses nothing)", usageLine: usage)
        }
        if let text = arguments.value("mtime") ?? environmentValue("SOURCE_DATE_EPOCH") {
            guard let seconds = Int64(text), seconds >= 0 else {
                throw UsageError("--mtime (or SOURCE_DATE_EPOCH) expects Unix seconds, not '\(text)'", usageLine: usage)
            }
            options.modificationTime = seconds
        }
        return options
    }

    /// Warns about a base that could not serve, links that lead out of the tree, and what
    /// the scan skipped.
    private static func warn(_ report: ZipPackReport, source: String, output: String, console: Console) {
        if let reason = report.baseIgnored {
            console.warning("'\(output)' could not serve as a base and was rebuilt in full: \(reason)")
        }
        for (path, reason) in report.linksLeadingOut {
            console.warning(
                "'\(HashCommand.join(source, path))': \(reason): other tools unpack such a link, but pkgtool's unpack and verify refuse the archive")
        }
        for path in report.skipped {
            console.warning("skipped '\(HashCommand.join(source, path))': not a file, link or directory")
        }
    }

    static func text(_ r: ZipPackReport) -> String {
        let count = StatisticsText.count
        return [
            "entries         \(r.entries) (\(count(r.files, "file", nil)), \(count(r.directories, "directory", "directories")), \(count(r.links, "link", nil)))",
            "deflated        \(count(r.deflated, "entry", "entries"))",
            "stored          \(count(r.stored, "entry", "entries"))",
            "reused          \(count(r.reused, "entry", "entries"))\(r.reusedPrevious ? " (written over the kept previous archive)" : "")\(r.appendedInPlace ? " (kept in place; the changed ones appended)" : "")",
            "input           \(StatisticsText.bytes(r.inputBytes))",
            "archive         \(StatisticsText.bytes(r.archiveBytes))",
        ].joined(separator: "\n")
    }

    static func json(_ r: ZipPackReport, source: String, output: String) -> JSON {
        .object([
            ("source", .string(source)), ("archive", .string(output)), ("entries", .int(r.entries)),
            ("files", .int(r.files)), ("directories", .int(r.directories)), ("links", .int(r.links)),
            ("deflated", .int(r.deflated)), ("stored", .int(r.stored)), ("reused", .int(r.reused)),
            ("reused_previous", .bool(r.reusedPrevious)), ("appended_in_place", .bool(r.appendedInPlace)),
            ("dead_bytes", .int(r.deadBytes)), ("input_bytes", .int(r.inputBytes)),
            ("archive_bytes", .int(r.archiveBytes)), ("skipped", .array(r.skipped.map { .string($0) })),
            ("base_ignored", r.baseIgnored.map { .string($0) } ?? .null),
        ])
    }

    /// An environment variable's value, nil when unset or empty.
    static func environmentValue(_ name: String) -> String? {
        guard let text = ProcessEnvironment.value(name), !text.isEmpty else { return nil }
        return text
    }
}

