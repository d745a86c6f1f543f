import PackageCore
import PackageRemote

/// `pkgtool pull s3://BUCKET/PREFIX DEST`: DEST becomes a version of the remote.
enum PullCommand: Command {
    static let spec = CommandSpec(
        name: "pull",
        summary: "bring a package (new or existing) to a version of an S3 remote, downloading only what it lacks",
        arguments:
            "[--version ID] [--force] [--fsync full|none] [--json] [--endpoint URL] [--transfers N] [--limit-rate BYTES] [--retries N] s3://BUCKET/PREFIX DEST",
        options: [
            OptionSpec("version", .value(placeholder: "ID"), help: "a version id, a unique prefix of one, or its number (default: the latest)"),
            OptionSpec("force", help: "discard changes made to DEST since it was last synced with the remote"),
            OptionSpec("fsync", .value(placeholder: "P"), help: "full (default) or none: skip every fsync (benchmarks, tests)"),
            OptionSpec("json", help: "print what was done as JSON"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.transfers, RemoteCommandSupport.limitRate, RemoteCommandSupport.retries, .jobs,
        ],
        positionals: 2...2,
        details: """
            DEST is created when absent. Contents DEST already holds are not downloaded (the
            unchanged pieces of a changed large file are taken from DEST's old copy); the rest
            arrives in ranged GETs of the remote's packs. Every blob is checked against its
            SHA-256 and every file against its content hash before anything in DEST changes;
            then the save engine writes DEST crash-safely (readers see the old package or the
            new, never a mix) and records its manifest. An object that fails verification
            leaves DEST untouched (exit 1). An interrupted pull resumes from
            .DEST.pkgtool-pull beside DEST. A pull that would discard changes made to DEST
            since it was last pushed or pulled is refused (exit 1) unless --force.
            Exit status: 0 pulled or up to date, 1 refused, 2 trouble.
            """ + "\n" + RemoteCommandSupport.environmentHelp)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let location = try RemoteCommandSupport.location(arguments.positionals[0], usageLine: spec.usageLine)
        let destination = arguments.positionals[1]
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine)
            let result = try RemoteProgressLine.showing("pulling", console: console) { progress in
                try PackageRemote.pull(
                    location, to: destination, version: arguments.value("version"), options: options,
                    force: arguments.flag("force"), durability: Durability(rawValue: durabilityName!)!,
                    progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location, destination: destination).serialized(pretty: true))
            } else if result.unchanged {
                console.line("\(destination) holds version \(result.version.sequence) (\(result.version.shortID)) of \(location) already")
            } else {
                console.line(
                    "pulled version \(result.version.sequence) (\(result.version.shortID)) of \(location) into \(destination): "
                        + "\(result.blobsDownloaded) blobs downloaded (\(RemoteCommandSupport.bytes(result.bytesDownloaded))), "
                        + "\(result.blobsFromDestination) taken from \(destination), "
                        + "\(result.save?.filesWritten ?? 0) files written, \(result.requests) requests")
            }
            return .success
        }
    }

    static func json(_ result: PullResult, location: RemoteLocation, destination: String) -> JSON {
        .object([
            ("remote", .string(location.description)), ("destination", .string(destination)),
            ("version", RemoteCommandSupport.summary(result.version)), ("unchanged", .bool(result.unchanged)),
            ("contents_assembled", .int(result.contentsAssembled)), ("blobs_downloaded", .int(result.blobsDownloaded)),
            ("bytes_downloaded", .int(result.bytesDownloaded)),
            ("blobs_from_destination", .int(result.blobsFromDestination)),
            ("contents_copied_from_destination", .int(result.contentsCopiedFromDestination)),
            ("blobs_resumed", .int(result.blobsResumed)), ("files_written", .int(result.save?.filesWritten ?? 0)),
            ("bytes_written", .int(result.save?.bytesWritten ?? 0)), ("entries_removed", .int(result.save?.entriesRemoved ?? 0)),
            ("requests", .int(result.requests)), ("retries", .int(result.retries)), ("seconds", .double(result.seconds)),
        ])
    }
}
