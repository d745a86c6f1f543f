import PackageCore

/// `pkgtool save SRC PKG`: make a package equal to a directory, writing only what changed.
enum SaveCommand: Command {
    static let spec = CommandSpec(
        name: "save",
        summary: "make a package's content equal to a directory's, writing only what changed",
        arguments:
            "[--strategy full|atomic|journaled] [--keep-previous] [--fsync full|none] [--stats | --json] [--dry-run] [-q | -v] [--no-progress] [--check-package] [--force] [--exclude PATTERN]... [--jobs N] SRC PKG",
        options: [
            OptionSpec(
                "strategy", .value(placeholder: "S"),
                help: "full, atomic or journaled (default: \(SaveStrategy.default))",
                completion: .choices(SaveStrategy.allCases.map(\.rawValue))),
            OptionSpec(
                "keep-previous",
                help: "atomic only: keep the replaced version beside PKG (.PKG.<hash>.pkgtool-previous) and update it next time"),
            OptionSpec(
                "fsync", .value(placeholder: "P"), help: "full (default) or none: skip every fsync (benchmarks, tests)",
                completion: .choices(Durability.allCases.map(\.rawValue))),
            OptionSpec("stats", help: "print what was written, linked and removed, and the time", aliases: ["stat"]),
            OptionSpec(
                "dry-run", short: "n",
                help: "print what the save would change (as diff SRC PKG does) and change nothing"),
            OptionSpec("json", help: "print the statistics as JSON"),
            OptionSpec("progress", help: "draw the progress line (the default when stderr is a terminal)"),
            OptionSpec(
                "check-package",
                help: "stat every entry of PKG against its manifest first, to see edits made behind pkgtool's back"),
            OptionSpec(
                "force",
                help: "replace the contents of an existing directory that is not a package (no manifest of its own in .pkgtool)"),
            .jobs,
        ] + OptionSpec.exclusionOptions + OptionSpec.progressOptions + [.verbose],
        positionals: 2...2,
        details: """
            PKG is created when absent. An existing PKG that holds files but is not a
            package pkgtool saved (no manifest written for it in its .pkgtool: a working
            folder, the arguments swapped, an empty or copied .pkgtool) is refused unless
            --force is given, since the save would delete
            whatever SRC does not have. Unchanged means equal content hash and size at the same
            path; files of the package are never modified in place. Source files whose stat
            data match the last save from them are not reread. The save holds PKG's lock
            (a flock on the package directory), first recovers any interrupted save, and records the
            new state in PKG/.pkgtool. On any failure the previous package is left intact.
              full       write everything into a staging directory, swap it in
              atomic     stage hard links to unchanged files plus the changed files, swap in
                         with one renameat2(RENAME_EXCHANGE): readers see old or new
              journaled  write changed files inside PKG, commit a redo journal, apply it
            With --keep-previous, an atomic save keeps the version it replaces beside PKG
            (sharing unchanged files with it) instead of removing it, and the next atomic
            save brings that tree up to date and swaps it in: cost in proportion to the
            change, at the price of the previous version's own files staying on disk.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "saved"),
            ExitStatusMeaning(
                .failure,
                "input refused: SRC or PKG not a directory, one inside the other, PKG a folder that is not a package (without --force), a source file changed while being saved, --keep-previous without atomic"),
            ExitStatusMeaning(
                .trouble,
                "usage error, or trouble: a missing path, permission denied, disk full (the previous package is intact)"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        let strategyName = try arguments.choice(
            "strategy", among: SaveStrategy.allCases.map(\.rawValue), default: SaveStrategy.default.rawValue,
            usageLine: spec.usageLine)
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        let strategy = SaveStrategy(rawValue: strategyName!)!
        let cancellation = SaveCancellation()
        var options = SaveOptions(
            strategy: strategy, durability: Durability(rawValue: durabilityName!)!, workers: workers,
            trustManifest: !arguments.flag("check-package"), keepsPrevious: arguments.flag("keep-previous"),
            cancellation: cancellation)
        let source = arguments.positionals[0]
        let package = arguments.positionals[1]
        if arguments.flag("stats") && arguments.flag("json") {
            throw UsageError("--stats and --json cannot be combined", usageLine: spec.usageLine)
        }
        if !arguments.flag("force") {
            // A refusal --force would not lift comes first: never advise --force in vain.
            try DirectorySource(source).validate(for: try PackageLocation(package))
            if let refusal = ForeignDestination.check(package) { throw refusal }
        }
        if arguments.flag("dry-run") { return try dryRun(source: source, package: package, arguments, console: console) }
        // Ctrl-C stops the save cleanly: its staging tree or temporaries are removed.
        console.stopOnInterrupt(cancellation)
        let outcome: SaveOutcome
        do {
            outcome = try ProgressMeter.showing("saving", console: console, arguments: arguments) { meter in
                if let meter {
                    options.progress = { meter.set(completed: $0.completedBytes, total: $0.totalBytes) }
                }
                return try PackageSaver.save(DirectorySource(source, excluding: arguments.exclusions), to: package, options: options)
            }
        } catch {
            console.finishInterrupted()
            throw error
        }
        let statistics = outcome.statistics
        if arguments.flag("verbose") {
            var paths: [RelativePath] = []
            outcome.writtenFiles.forEach { path, _ in paths.append(path) }
            for path in paths.sorted() { console.line(NameQuoting.quoted(path.string)) }
        }
        for note in statistics.notes { console.warning(note) }
        if arguments.flag("json") {
            console.line(json(statistics, source: source, package: package).serialized(pretty: true))
        } else if arguments.flag("stats") {
            console.line(text(statistics))
        }
        return .success
    }

    /// `--dry-run`: the changes the save would make, as `diff PKG SRC` lists them (`A`, `D`,
    /// `M`, `T`, `R` lines, `--json` the same array, `--stats` the one-line summary), after
    /// the same refusals; nothing is written. Exit 0 whether or not something would change.
    static func dryRun(source: String, package: String, _ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        try SnapshotLoading.requireDirectory(source)
        var scanner = TreeScanner(workers: workers, excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        scanner.exclusions = arguments.exclusions
        // The package first: its scan, beside its manifest, is the larger of the two, and
        // is better over before the source's tree is held (as `diff` orders its sides).
        let old =
            try FileSystem.statusIfExists(package) == nil
            ? TreeSnapshot.empty : try SnapshotLoading.load(package, workers: workers, console: console).snapshot
        ProcessEnvironment.releaseFreeMemory()
        let new = try scanner.scan(source).snapshot
        let changes = old.rootHash == new.rootHash ? [] : TreeDiff.changes(from: old, to: new, detectRenames: true)
        DiffCommand.print(changes, json: arguments.flag("json"), summary: arguments.flag("stats"), console: console)
        return .success
    }

    static func text(_ s: SaveStatistics) -> String {
        var lines = [
            "strategy        \(s.strategy)\(s.unchanged ? " (nothing changed)" : "")",
            "written         \(StatisticsText.count(s.filesWritten, "file")), \(StatisticsText.bytes(s.bytesWritten))",
            "linked          \(StatisticsText.count(s.filesLinked, "file"))\(s.reusedPrevious ? " (the kept previous version updated)" : "")",
        ]
        if s.filesPatched + s.filesCloned > 0 {
            lines.append(
                "chunks          \(StatisticsText.count(s.filesPatched, "file")) patched in place, \(s.filesCloned) cloned; \(StatisticsText.bytes(s.bytesPatched)) changed")
        }
        if s.filesCopiedForLinks > 0 {
            lines.append("copied          \(StatisticsText.count(s.filesCopiedForLinks, "file")), \(StatisticsText.bytes(s.bytesCopiedForLinks)) (no hard links here)")
        }
        lines += [
            "symlinks        \(s.symbolicLinksWritten) written",
            "directories     \(s.directoriesCreated) created",
            "removed         \(StatisticsText.count(s.entriesRemoved, "entry", "entries"))",
            "permissions     \(s.permissionsChanged) changed",
            "metadata        \(StatisticsText.bytes(s.metadataBytesWritten))\(s.manifestCompacted ? " (manifest compacted)" : "")\(s.manifestRebuilt ? " (manifest rebuilt)" : "")",
            "source read     \(StatisticsText.count(s.filesHashed, "file")), \(StatisticsText.bytes(s.bytesHashed))",
            "root hash       \(s.rootHash) (\(StatisticsText.count(s.entryCount, "entry", "entries")))",
            "time            \(formatSeconds(s.seconds))",
        ]
        return lines.joined(separator: "\n")
    }


    static func json(_ s: SaveStatistics, source: String, package: String) -> JSON {
        .object([
            ("source", .string(source)), ("package", .string(package)), ("strategy", .string(s.strategy.rawValue)),
            ("unchanged", .bool(s.unchanged)), ("files_written", .int(s.filesWritten)),
            ("bytes_written", .int(s.bytesWritten)), ("files_patched", .int(s.filesPatched)),
            ("files_cloned", .int(s.filesCloned)), ("bytes_patched", .int(s.bytesPatched)), ("files_linked", .int(s.filesLinked)),
            ("files_copied_for_links", .int(s.filesCopiedForLinks)),
            ("bytes_copied_for_links", .int(s.bytesCopiedForLinks)),
            ("symlinks_written", .int(s.symbolicLinksWritten)), ("directories_created", .int(s.directoriesCreated)),
            ("entries_removed", .int(s.entriesRemoved)), ("permissions_changed", .int(s.permissionsChanged)),
            ("metadata_bytes_written", .int(s.metadataBytesWritten)), ("files_hashed", .int(s.filesHashed)),
            ("bytes_hashed", .int(s.bytesHashed)), ("manifest_rebuilt", .bool(s.manifestRebuilt)),
            ("manifest_compacted", .bool(s.manifestCompacted)), ("recovered", .bool(s.recovered)),
            ("reused_previous", .bool(s.reusedPrevious)),
            ("root_hash", .string(s.rootHash.description)), ("entries", .int(s.entryCount)),
            ("seconds", .double(s.seconds)), ("notes", .array(s.notes.map { .string($0) })),
        ])
    }

    static func formatSeconds(_ seconds: Double) -> String {
        let milliseconds = (seconds * 1000).rounded() / 1000
        return "\(milliseconds) s"
    }
}

/// A save's PKG that exists, holds entries and no manifest that names it
/// (`PackageLayout.isForeignFolder`): not a package pkgtool
/// saved, most likely a working folder (or SRC and PKG swapped). Saving would delete
/// whatever SRC lacks, so the CLI asks for `--force`, as `git clone` refuses a non-empty
/// destination and `rsync` deletes only with `--delete`.
struct ForeignDestination: InputRejectedError {
    let path: String

    var description: String {
        "'\(path)' holds files but is not a package (no manifest of its own in \(PackageLayout.metadataDirectoryName)): saving would replace its contents with SRC's and delete the rest; check the order of SRC and PKG, or pass --force"
    }

    /// The refusal for `package`, or nil when it is missing, empty, not a directory (the
    /// save itself says so) or a package.
    static func check(_ package: String) -> ForeignDestination? {
        PackageLayout.isForeignFolder(package) ? ForeignDestination(path: package) : nil
    }
}
