import PackageCore
import PackageZip

/// `pkgtool verify PKG`: rehash a package and check it against its manifest; `pkgtool
/// verify ZIP`: check an archive's structure, CRCs and content hashes (`ZipVerify`).
enum VerifyCommand: Command {
    static let spec = CommandSpec(
        name: "verify",
        summary: "check a package against its manifest, or a ZIP archive's structure and every CRC",
        arguments: "[--fast] [--json] [--jobs N] [--max-entries N] [--max-size BYTES] [--max-ratio R] PKG|ZIP",
        options: [
            OptionSpec("fast", help: "trust the manifest's stat cache: reread only files whose stat data changed"),
            OptionSpec("json", help: "print the result as JSON"),
            .jobs,
        ] + ZipCommandSupport.limitOptions + OptionSpec.progressOptions,
        positionals: 1...1,
        details: """
            Reads every file of PKG (like git fsck), hashes it, and compares the tree with the
            manifest pkgtool recorded at the last save or 'pkgtool manifest'. Prints one line
            per problem, tab-separated: missing<TAB>path, extra<TAB>path, changed<TAB>path
            (a name holding a control character, '"' or '\\' quoted as git quotes names),
            then a summary.

            A ZIP archive (a regular file) is checked instead: its structure as 'unpack' checks
            it, every entry's inflated size, CRC-32 and pkgtool's XXH3-128 content
            hash when present. Prints 'ok: ZIP: N entries (B bytes), …' and exits 0, or exits 1
            with one line naming the entry and the fault. The --max-* options apply to archives.

            What is verified is the package or the archive itself: when it is damaged (a file
            differs from the manifest, the manifest fails its checksum, the archive is
            corrupt or not an archive at all), verification failed (1). When it cannot be
            examined (missing, unreadable, no manifest to verify against, a manifest of a
            newer format), there is no verdict (2). With --json a verdict, good or bad, is
            always a JSON object on stdout, "ok" saying which.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "PKG matches its manifest; ZIP is sound"),
            ExitStatusMeaning(
                .failure,
                "verification failed: entries differ from the manifest, the manifest is damaged, or ZIP is corrupt, hostile or not a ZIP archive"),
            ExitStatusMeaning(
                .trouble,
                "no verdict: usage error, a missing or unreadable path, no manifest, a manifest of a newer format"),
        ])

    struct Problem {
        var kind: String
        var path: String
    }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        let path = arguments.positionals[0]
        do {
            if ZipCommandSupport.isArchivePath(path) {
                return try ZipVerify.run(path, arguments: arguments, usageLine: spec.usageLine, console: console)
            }
            try SnapshotLoading.requireDirectory(path)
            return try PackageAccess.reading(path, warn: { console.warning($0) }) {
                try verify(path, arguments: arguments, workers: workers, console: console)
            }
        } catch let failed as any InputRejectedError where arguments.flag("json") {
            // A verdict all the same: the JSON reader gets it on stdout, the person on stderr.
            console.line(
                JSON.object([
                    ("path", .string(path)), ("kind", .string(ZipCommandSupport.isArchivePath(path) ? "archive" : "package")),
                    ("ok", .bool(false)), ("error", .string(failed.description)),
                ])
                    .serialized(pretty: true))
            console.error(failed.description)
            return .failure
        }
    }

    static func verify(_ path: String, arguments: ParsedArguments, workers: Int, console: Console) throws -> ExitStatus {
        let manifest: PackageManifest
        do {
            guard let loaded = try PackageManifest.load(packagePath: path) else {
                throw VerificationImpossible(
                    message: "'\(path)' has no manifest to verify against; create one with 'pkgtool manifest \(path)'")
            }
            manifest = loaded
        } catch let error as ManifestError {
            if case .futureVersion = error.reason {
                throw VerificationImpossible(
                    message: "\(error); verify it with the pkgtool that wrote it, or rebuild it with 'pkgtool manifest \(path)'")
            }
            throw VerificationError(message: "\(error); rebuild it with 'pkgtool manifest \(path)'")
        }
        var scanner = TreeScanner(
            workers: workers, knownHash: arguments.flag("fast") ? manifest.hashLookup : nil,
            excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        let result = try ProgressMeter.showing("verifying", console: console, arguments: arguments) { meter in
            if let meter, !arguments.flag("fast") {
                // Every file is read: the manifest's sizes are the total.
                meter.setTotal(manifest.snapshot.entries.reduce(Int64(0)) { $0 + ($1.kind == .regular ? $1.size : 0) })
                scanner.progress = { meter.add($0) }
            }
            return try scanner.scan(path)
        }
        for skipped in result.skipped {
            console.warning("skipped '\(PackageLayout.joined(path, skipped.path))': a \(skipped.kind) is not package content")
        }
        let changes = TreeDiff.changes(from: manifest.snapshot, to: result.snapshot, detectRenames: false)
        let problems = changes.map { change -> Problem in
            switch change.status {
            case .added: return Problem(kind: "extra", path: change.path)
            case .deleted: return Problem(kind: "missing", path: change.path)
            default: return Problem(kind: "changed", path: change.path)
            }
        }
        let bytes = result.snapshot.entries.reduce(Int64(0)) { $0 + ($1.kind == .regular ? $1.size : 0) }
        if arguments.flag("json") {
            console.line(
                JSON.object([
                    ("path", .string(path)), ("kind", .string("package")), ("ok", .bool(problems.isEmpty)),
                    ("entries", .int(result.snapshot.entries.count)), ("bytes", .int(bytes)),
                    ("problems", .array(problems.map { .object([("kind", .string($0.kind)), ("path", .string($0.path))]) })),
                    ("files_read", .int(result.filesHashed)),
                ]).serialized(pretty: true))
        } else {
            for problem in problems { console.line("\(problem.kind)\t\(NameQuoting.quoted(problem.path))") }
            if problems.isEmpty {
                console.line("ok: \(result.snapshot.entries.count) entries (\(bytes) bytes) match the manifest")
            } else {
                console.line("failed: \(problems.count) of \(max(result.snapshot.entries.count, manifest.entries.count)) entries differ from the manifest")
            }
        }
        return problems.isEmpty ? .success : .failure
    }
}

/// A verification that failed: what was verified is damaged (exit status 1).
struct VerificationError: InputRejectedError {
    var message: String
    var description: String { message }
}

/// A verification that could not reach a verdict: nothing to verify against, or a record
/// this pkgtool cannot read (exit status 2).
struct VerificationImpossible: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
