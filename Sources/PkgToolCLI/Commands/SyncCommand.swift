import PackageCore

/// `pkgtool sync PKG [s3://BUCKET/PREFIX]`: the package and the remote brought together,
/// whichever changed (Specs/remote.md, "Sync").
package enum SyncCommand: Command {
    package static let spec = CommandSpec(
        name: "sync",
        summary: "bring a package and an S3 remote together: push, pull, or merge both sides' changes and push the merge",
        arguments:
            "[--dry-run] [--json] [-q] [--no-progress] [--exclude PATTERN]... [--no-default-excludes] [--fsync full|none] [--endpoint URL] [--profile NAME] [--transfers N] [--limit-rate BYTES] [--speed-limit BYTES] [--speed-time SECONDS] [--max-time SECONDS] [--retries N] PKG [s3://BUCKET/PREFIX]",
        options: [
            OptionSpec(
                "dry-run", short: "n",
                help: "print whether it would push, pull or merge, what would move and the conflicts it would create; change nothing"),
            OptionSpec("json", help: "print what was done, and the conflicts left, as JSON"),
            OptionSpec(
                "fsync", .value(placeholder: "P"), help: "full (default) or none: skip every fsync (benchmarks, tests)",
                completion: .choices(Durability.allCases.map(\.rawValue))),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.profile,
        ] + OptionSpec.exclusionOptions + OptionSpec.progressOptions + RemoteCommandSupport.transferOptions + [.jobs],
        positionals: 1...2,
        details: """
            Without s3://BUCKET/PREFIX, PKG syncs with the remote it remembers (PKG/.pkgtool/sync,
            with the --endpoint given then, unless another is given now). When only PKG
            changed since it was last synced, it is pushed; when only the remote moved on, the
            latest version is pulled; when both changed, the latest version is merged into PKG
            (per path: a change on one side only is taken, the same change on both is one;
            different changes to one file, an edit against a deletion, a change of kind are
            conflicts) with one crash-safe save, and the merge is pushed as the next version,
            with two parents (the version it was pushed on, and the one PKG's changes started
            from). A conflict keeps PKG's version in the tree and the other side's as a
            conflict version inside PKG: nothing is lost, nothing blocks, later pushes carry
            the tree's version. The conflict versions left are listed after the summary, as
            'pkgtool conflicts PKG' lists them, and the exit status is 1 until they are
            resolved ('pkgtool resolve PKG PATH --keep local|other|both'). When another device
            moves the remote on during the sync, it starts over (5 attempts). Conflict bytes a
            crash left unlisted in PKG's .pkgtool/conflicts are removed first. What a push leaves
            out (--exclude, and the litter unless --no-default-excludes) is left out of what
            this sync pushes; PKG keeps it, a merge too. --dry-run says what it would do
            (push, pull or merge), what would travel and the conflicts it would create,
            writing nothing (exit 0).
            """ + "\n" + RemoteCommandSupport.deadlineHelp + "\n" + RemoteCommandSupport.environmentHelp,
        exitStatuses: [
            ExitStatusMeaning(.success, "in sync, and no conflict is left"),
            ExitStatusMeaning(
                .failure,
                "in sync with conflicts left (listed on stdout), or refused: the remote went back in time, an object failed verification, not a pkgtool remote, the remote kept moving (5 attempts), PKG's conflicts record is damaged"),
            ExitStatusMeaning(
                .trouble, "usage error (no URL and none remembered), or trouble: PKG missing, credentials, the network, the store's answers, PKG's disk"),
        ])

    /// PKG, and the remote's URL when given.
    package static func operands(_ arguments: ParsedArguments) throws -> (package: String, remote: String?) {
        let given = arguments.positionals
        if RemoteCommandSupport.isRemote(given[0]) {
            throw UsageError("'sync' needs PKG before \(given[0])", usageLine: spec.usageLine)
        }
        return (given[0], given.count == 2 ? given[1] : nil)
    }

    /// Runs in `pkgtool-remote` (`RemoteHelper`); its work is `RemoteSyncCommand`.
    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        _ = try operands(arguments)
        _ = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        return RemoteHelper.forward(spec.name, arguments, console: console)
    }
}
