import PackageCore

/// `pkgtool resolve PKG PATH --keep local|other|both`: settles the conflict versions at PATH
/// (`ConflictResolver.resolve`). Local: no network.
package enum ResolveCommand: Command {
    package static let spec = CommandSpec(
        name: "resolve",
        summary: "settle a conflict a sync left in a package: keep its version, the other, or both",
        arguments: "--keep local|other|both [--fsync full|none] [--json] [--jobs N] PKG PATH",
        options: [
            OptionSpec(
                "keep", .value(placeholder: "SIDE"),
                help: "local (PKG's version), other (the other side's) or both (the other's beside it, as a conflict copy)",
                completion: .choices(ConflictKeep.allCases.map(\.rawValue))),
            OptionSpec(
                "fsync", .value(placeholder: "P"), help: "full (default) or none: skip every fsync (benchmarks, tests)",
                completion: .choices(Durability.allCases.map(\.rawValue))),
            OptionSpec("json", help: "print what was settled and written as JSON"),
            .jobs,
        ],
        positionals: 2...2,
        details: """
            PATH is a path inside PKG that 'pkgtool conflicts PKG' lists (a folder settles every
            version beneath it). --keep local keeps what PKG's tree holds and drops the other
            side's version (where the tree took the other side's, PKG's own version is put
            back); --keep other puts the other side's version in the tree; --keep both keeps
            the tree's and writes the other beside it as 'NAME (conflict YYYY-MM-DD HOST).EXT'
            (today's date on this machine, its host name). One ordinary save writes the tree
            and the conflicts that remain, in one commit; the versions settled are no longer
            listed, and their bytes no other version names are removed. Nothing here reaches
            a remote: the next push or sync carries the result.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "settled"),
            ExitStatusMeaning(
                .failure, "refused: PKG lists no conflict at PATH, its conflicts record is damaged, or PKG changed meanwhile"),
            ExitStatusMeaning(
                .trouble, "usage error (no or a bad --keep, a PATH that is not inside PKG), or trouble: PKG missing, an I/O error"),
        ])

    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        guard let keepName = try arguments.choice(
            "keep", among: ConflictKeep.allCases.map(\.rawValue), default: nil, usageLine: spec.usageLine)
        else {
            throw UsageError("'resolve' needs --keep local, other or both", usageLine: spec.usageLine)
        }
        let keep = ConflictKeep(rawValue: keepName)!
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        let workers = try arguments.workers(usageLine: spec.usageLine)
        let package = arguments.positionals[0]
        let path = try conflictPath(arguments.positionals[1])
        try ConflictsCommand.requirePackageDirectory(package)

        let cancellation = SaveCancellation()
        let options = SaveOptions(
            durability: Durability(rawValue: durabilityName!)!, workers: workers, cancellation: cancellation)
        console.stopOnInterrupt(cancellation)
        let outcome: (settled: [ConflictVersion], written: [RelativePath])
        do {
            outcome = try ConflictResolver.resolve(
                package, path: path, keep: keep, day: CalendarTime.today(), host: CalendarTime.hostName(), options: options)
        } catch let refusal as ConflictListRefusal {
            console.finishInterrupted()
            console.error(refusal.reason)
            return .failure
        } catch {
            console.finishInterrupted()
            throw error
        }
        if arguments.flag("json") {
            console.line(
                JSON.object([
                    ("package", .string(package)), ("path", .string(path.string)), ("keep", .string(keep.rawValue)),
                    ("settled", .array(outcome.settled.map(ConflictsCommand.json))),
                    ("written", .array(outcome.written.map { .string($0.string) })),
                ]).serialized(pretty: true))
            return .success
        }
        let count = outcome.settled.count
        let settled = "\(count) conflict version\(count == 1 ? "" : "s") settled"
        switch keep {
        case .both:
            let copy = outcome.written.first.map { "; the other is \(NameQuoting.quoted($0.string))" } ?? ""
            console.line("resolved \(NameQuoting.quoted(path.string)): kept both\(copy) (\(settled))")
        case .local, .other:
            console.line("resolved \(NameQuoting.quoted(path.string)): kept \(keep.rawValue) (\(settled))")
        }
        return .success
    }

    /// PATH as a path inside the package: trailing slashes dropped, by bytes (`dropLast()`
    /// drops a character, and a "/" after a prepended mark such as U+0600 is one with it);
    /// the root, an absolute path, or one with empty, `.` or `..` components is a usage error.
    static func conflictPath(_ text: String) throws(UsageError) -> RelativePath {
        guard let path = RelativePath(validating: RelativePath.trimmingTrailingSlashes(text)), !path.isRoot else {
            throw UsageError(
                "'\(text)' is not a path inside a package (give it as 'pkgtool conflicts' lists it, e.g. pages/1.json)",
                usageLine: spec.usageLine)
        }
        return path
    }
}
