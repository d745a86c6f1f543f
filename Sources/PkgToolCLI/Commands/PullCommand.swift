import PackageCore

/// `pkgtool pull [s3://BUCKET/PREFIX] DEST`: DEST becomes a version of the remote.
package enum PullCommand: Command {
    package static let spec = CommandSpec(
        name: "pull",
        summary: "bring a package (new or existing) to a version of an S3 remote, downloading only what it lacks",
        arguments:
            "[--version ID] [--force] [--dry-run] [--fsync full|none] [--json] [-q] [--no-progress] [--endpoint URL] [--profile NAME] [--transfers N] [--limit-rate BYTES] [--speed-limit BYTES] [--speed-time SECONDS] [--max-time SECONDS] [--retries N] [s3://BUCKET/PREFIX] DEST",
        options: [
            OptionSpec("version", .value(placeholder: "ID"), help: "a version id, a unique prefix of one, or its number (default: the latest)"),
            OptionSpec("force", help: "discard changes made to DEST since it was last pushed or pulled"),
            OptionSpec(
                "dry-run", short: "n",
                help: "print how DEST would change (A/M/D/R lines) and the bytes to download; change nothing"),
            OptionSpec("fsync", .value(placeholder: "P"), help: "full (default) or none: skip every fsync (benchmarks, tests)"),
            OptionSpec("json", help: "print what was done as JSON"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.profile,
        ] + OptionSpec.progressOptions + RemoteCommandSupport.transferOptions + [.jobs,
        ],
        positionals: 1...2,
        details: """
            Without s3://BUCKET/PREFIX, DEST is brought to the latest version of the remote it
            was last pushed to or pulled from, which it remembers in DEST/.pkgtool/sync
            with the version it holds. DEST is created when absent. Contents DEST already holds are not downloaded (the
            unchanged pieces of a changed large file are taken from DEST's old copy); the rest
            arrives in ranged GETs of the remote's packs. Every blob is checked against its
            SHA-256 and every file against its content hash before anything in DEST changes;
            then the save engine writes DEST crash-safely (readers see the old package or the
            new, never a mix) and records its manifest. An object that fails verification
            leaves DEST untouched (exit 1). An interrupted pull resumes from
            .DEST.pkgtool-pull beside DEST. A pull that would discard changes made to DEST
            since it was last pushed or pulled (or, never synced, files it holds) is refused
            (exit 1) unless --force ('pkgtool sync DEST' merges such changes instead). So is a latest version that does not descend from the
            one DEST holds (a remote rolled back or rewritten): --version takes it on purpose.
            The version's record is saved with its files, in one commit. --dry-run reads
            what a pull reads and refuses what it refuses, then lists how DEST would change,
            as 'pkgtool diff DEST s3://…' would, and the bytes to download, writing nothing (exit 0).
            """ + "\n" + RemoteCommandSupport.deadlineHelp + "\n" + RemoteCommandSupport.environmentHelp,
        exitStatuses: [
            ExitStatusMeaning(.success, "pulled, or DEST holds that version already"),
            ExitStatusMeaning(
                .failure,
                "refused: DEST has changes not pushed, the remote went back in time, an object or file failed verification (DEST untouched), not a pkgtool remote, unknown version"),
            ExitStatusMeaning(
                .trouble, "usage error (no URL and none remembered), or trouble: credentials, the network, the store's answers, DEST's disk"),
        ])

    /// DEST, and the remote's URL when given.
    package static func operands(_ arguments: ParsedArguments) throws -> (destination: String, remote: String?) {
        let given = arguments.positionals
        if given.count == 1 && RemoteCommandSupport.isRemote(given[0]) {
            throw UsageError("'pull' needs DEST after \(given[0])", usageLine: spec.usageLine)
        }
        return given.count == 2 ? (given[1], given[0]) : (given[0], nil)
    }

    /// Runs in `pkgtool-remote` (`RemoteHelper`); its work is `RemotePullCommand`.
    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        _ = try operands(arguments)
        return RemoteHelper.forward(spec.name, arguments, console: console)
    }
}
