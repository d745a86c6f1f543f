import PackageCore
import PackageRemote

/// `pkgtool push PKG s3://BUCKET/PREFIX`: the package becomes the remote's next version.
enum PushCommand: Command {
    static let spec = CommandSpec(
        name: "push",
        summary: "upload what an S3 remote lacks of a package and record it as the remote's next version",
        arguments: "[--force] [--json] [--endpoint URL] [--transfers N] [--limit-rate BYTES] [--retries N] PKG s3://BUCKET/PREFIX",
        options: [
            OptionSpec("force", help: "push even if the remote moved on since PKG was last synced with it"),
            OptionSpec("json", help: "print what was done as JSON"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.transfers, RemoteCommandSupport.limitRate, RemoteCommandSupport.retries, .jobs,
        ],
        positionals: 2...2,
        details: """
            Only what the remote lacks is sent: files of the previous version are not read
            again, new or changed files are cut into blobs (content-defined chunks of about
            1 MiB for files of 4 MiB or more) and only blobs the remote does not hold travel,
            packed by 8 MiB. An unchanged package costs one request. The remote's head moves by compare-and-swap: if it is not the
            version PKG was last pushed as or pulled from, or another push moves it first,
            the push is refused (exit 1) and nothing is lost: pull (into another directory to
            keep these changes), then push again. --force makes PKG the next version anyway
            (the versions it replaces stay in the history). An interrupted push leaves the
            remote's versions intact; the next one does not resend the packs that arrived.
            Exit status: 0 pushed or up to date, 1 refused, 2 trouble.
            """ + "\n" + RemoteCommandSupport.environmentHelp)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let package = arguments.positionals[0]
        let location = try RemoteCommandSupport.location(arguments.positionals[1], usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine)
            let result = try RemoteProgressLine.showing("pushing", console: console) { progress in
                try PackageRemote.push(
                    package, to: location, options: options, force: arguments.flag("force"), progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location, package: package).serialized(pretty: true))
            } else if result.createdVersion {
                console.line(
                    "pushed \(package) to \(location) as version \(result.version.sequence) (\(result.version.shortID)): "
                        + "\(result.filesRead) files read, \(result.blobsUploaded) blobs in \(result.packsUploaded) packs "
                        + "(\(RemoteCommandSupport.bytes(result.bytesUploaded))) uploaded, \(result.requests) requests")
            } else {
                console.line(
                    "\(location) is up to date: version \(result.version.sequence) (\(result.version.shortID)) holds \(package)")
            }
            return .success
        }
    }

    static func json(_ result: PushResult, location: RemoteLocation, package: String) -> JSON {
        .object([
            ("package", .string(package)), ("remote", .string(location.description)),
            ("created_version", .bool(result.createdVersion)),
            ("version", RemoteCommandSupport.summary(result.version)), ("files_read", .int(result.filesRead)),
            ("bytes_read", .int(result.bytesRead)), ("blobs_uploaded", .int(result.blobsUploaded)),
            ("packs_uploaded", .int(result.packsUploaded)), ("bytes_uploaded", .int(result.bytesUploaded)),
            ("manifest_bytes", .int(result.manifestBytes)), ("packs_resumed", .int(result.packsResumed)),
            ("requests", .int(result.requests)), ("retries", .int(result.retries)), ("seconds", .double(result.seconds)),
        ])
    }
}
