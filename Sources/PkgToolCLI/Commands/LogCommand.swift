import PackageCore

/// `pkgtool log s3://BUCKET/PREFIX`: the remote's versions, newest first.
package enum LogCommand: Command {
    package static let spec = CommandSpec(
        name: "log",
        summary: "list the versions of an S3 remote, newest first",
        arguments:
            "[--json] [--limit N] [--endpoint URL] [--profile NAME] [--speed-limit BYTES] [--speed-time SECONDS] [--max-time SECONDS] [--retries N] s3://BUCKET/PREFIX",
        options: [
            OptionSpec("json", help: "print a JSON array of versions"),
            OptionSpec(
                "limit", .value(placeholder: "N"),
                help: "at most N versions (default: those the head record holds, up to 101, in one request; each older one costs one more)"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.profile, RemoteCommandSupport.speedLimit, RemoteCommandSupport.speedTime,
            RemoteCommandSupport.maxTime, RemoteCommandSupport.retries,
        ],
        positionals: 1...1,
        details: """
            One line per version: its number, id (the first 12 of 64 hexadecimal digits; any
            unique prefix names it for pull --version), the time it was pushed (UTC), its
            parent's id (for a merge pushed by sync, both parents: FIRST+SECOND, the version it
            went on and the one the merged changes were based on), the package's root hash (as 'pkgtool hash PKG' prints it), its size
            and entry count. --json prints every field in full. By default the versions the
            remote's head record holds (the latest, up to 101), all in one request; --limit N
            pages past them, each older version costing a small ranged GET.
            """ + "\n" + RemoteCommandSupport.deadlineHelp + "\n" + RemoteCommandSupport.environmentHelp,
        exitStatuses: [
            ExitStatusMeaning(.success, "the versions were listed"),
            ExitStatusMeaning(.failure, "the prefix is not a pkgtool remote"),
            ExitStatusMeaning(.trouble, "usage error, or trouble: credentials, the network, the store's answers"),
        ])

    /// Runs in `pkgtool-remote` (`RemoteHelper`); its work is `RemoteLogCommand`.
    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        RemoteHelper.forward(spec.name, arguments, console: console)
    }
}
