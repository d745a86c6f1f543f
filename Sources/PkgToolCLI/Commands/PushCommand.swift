import PackageCore

/// `pkgtool push PKG [s3://BUCKET/PREFIX]`: the package becomes the remote's next version.
package enum PushCommand: Command {
    package static let spec = CommandSpec(
        name: "push",
        summary: "upload what an S3 remote lacks of a package and record it as the remote's next version",
        arguments: "[--force] [--dry-run] [--json] [-q] [--no-progress] [--exclude PATTERN]... [--no-default-excludes] [--endpoint URL] [--profile NAME] [--transfers N] [--limit-rate BYTES] [--speed-limit BYTES] [--speed-time SECONDS] [--max-time SECONDS] [--retries N] PKG [s3://BUCKET/PREFIX]",
        options: [
            OptionSpec("force", help: "push even if the remote moved on since PKG was last synced with it"),
            OptionSpec(
                "dry-run", short: "n",
                help: "print the files that would be uploaded, their bytes and the version PKG would become; change nothing"),
            OptionSpec("json", help: "print what was done as JSON"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.profile,
        ] + OptionSpec.exclusionOptions + OptionSpec.progressOptions + RemoteCommandSupport.transferOptions + [.jobs,
        ],
        positionals: 1...2,
        details: """
            Without s3://BUCKET/PREFIX, PKG goes to the remote it was last pushed to or pulled
            from: a package remembers it, with the version it holds, in PKG/.pkgtool/sync
            (and the --endpoint given then), so a package moved, renamed or copied with
            cp -a keeps it. Only what the remote lacks is sent: files of the previous version are not read
            again, new or changed files are cut into blobs (content-defined chunks of about
            1 MiB for files of 4 MiB or more) and only blobs the remote does not hold travel,
            packed by 8 MiB. An unchanged package costs one request. The remote's head moves by compare-and-swap: if it is not the
            version PKG was last pushed as or pulled from, or another push moves it first,
            the push is refused (exit 1) and nothing is lost: 'pkgtool sync PKG' merges both
            sides' changes and pushes the merge; or pull (into another directory to keep
            these changes), then push again. --force makes PKG the next version anyway
            (the versions it replaces stay in the history). An interrupted push leaves the
            remote's versions intact; the next one does not resend the packs that arrived.
            The version leaves out the litter save leaves out (.DS_Store, editor temporaries;
            --no-default-excludes keeps it) and what --exclude names; PKG keeps them, and a
            pull into PKG counts them as changes not pushed ('pkgtool sync PKG' keeps them).
            --dry-run reads what a push reads and refuses what it refuses, then lists the
            files whose content the remote lacks (A/M lines, at most their bytes travel) and
            the version PKG would become, writing nothing anywhere (exit 0).
            """ + "\n" + RemoteCommandSupport.deadlineHelp + "\n" + RemoteCommandSupport.environmentHelp,
        exitStatuses: [
            ExitStatusMeaning(.success, "pushed, or the remote holds PKG's version already"),
            ExitStatusMeaning(.failure, "refused: the remote moved on (before the push or during it), or the prefix is not a pkgtool remote"),
            ExitStatusMeaning(
                .trouble, "usage error (no URL and none remembered), or trouble: PKG missing, credentials, the network, the store's answers"),
        ])

    /// PKG, and the remote's URL when given.
    package static func operands(_ arguments: ParsedArguments) throws -> (package: String, remote: String?) {
        let given = arguments.positionals
        if given.count == 1 && RemoteCommandSupport.isRemote(given[0]) {
            throw UsageError("'push' needs PKG before \(given[0])", usageLine: spec.usageLine)
        }
        return (given[0], given.count == 2 ? given[1] : nil)
    }

    /// Runs in `pkgtool-remote` (`RemoteHelper`); its work is `RemotePushCommand`.
    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        _ = try operands(arguments)
        return RemoteHelper.forward(spec.name, arguments, console: console)
    }
}
