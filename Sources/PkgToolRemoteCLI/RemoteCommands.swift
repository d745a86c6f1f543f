import PackageCore
import PackageRemote
import PkgToolCLI

/// The command table of `pkgtool-remote`: pkgtool's, with the commands that reach a remote
/// (`push`, `pull`, `sync`, `log`, and `diff` with an `s3://` side) doing their work here instead of
/// handing it on (`RemoteHelper`).
public enum RemoteCommands {
    public static let all: [any Command.Type] = PkgTool.commands.map { (command: any Command.Type) -> any Command.Type in
        switch command.spec.name {
        case PushCommand.spec.name: RemotePushCommand.self
        case PullCommand.spec.name: RemotePullCommand.self
        case SyncCommand.spec.name: RemoteSyncCommand.self
        case LogCommand.spec.name: RemoteLogCommand.self
        case PruneCommand.spec.name: RemotePruneCommand.self
        case DiffCommand.spec.name: RemoteAwareDiffCommand.self
        default: command
        }
    }
}

/// `diff` with its remote sides read here (`RemoteDiff`).
enum RemoteAwareDiffCommand: Command {
    static var spec: CommandSpec { DiffCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        try DiffCommand.run(arguments, console: console, remoteSnapshots: RemoteDiff.snapshots)
    }
}

/// `push`'s work, in `pkgtool-remote`: the spec is `PushCommand`'s.
enum RemotePushCommand: Command {
    static var spec: CommandSpec { PushCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let (package, given) = try PushCommand.operands(arguments)
        return try RemoteCommandSupport.run(console: console) {
            // PKG first: a typo in it is told as such, whatever the credentials.
            try PackageRemote.requirePackageDirectory(package)
            let (location, endpoint) = try RemoteCommandSupport.remote(
                given, package: package, arguments: arguments, usageLine: spec.usageLine, console: console)
            var options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine, endpoint: endpoint)
            options.exclusions = arguments.exclusions
            if arguments.flag("dry-run") {
                let plan = try PackageRemote.planPush(package, to: location, options: options, force: arguments.flag("force"))
                for note in plan.notes { console.warning(note) }
                if arguments.flag("json") {
                    console.line(json(plan, location: location, package: package).serialized(pretty: true))
                } else {
                    for line in RemoteCommandSupport.pushLines(plan) { console.line(line) }
                    console.line(summary(plan, location: location, package: package))
                }
                return .success
            }
            options = RemoteCommandSupport.cancelling(options, console: console)
            let result = try RemoteCommandSupport.showingProgress("pushing", console: console, arguments: arguments) { progress in
                try PackageRemote.push(
                    package, to: location, options: options, force: arguments.flag("force"), progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location, package: package).serialized(pretty: true))
            } else if result.createdVersion {
                console.note(
                    "pushed \(package) to \(location) as version \(result.version.sequence) (\(result.version.shortID)): "
                        + "\(StatisticsText.count(result.filesRead, "file")) read, \(StatisticsText.count(result.blobsUploaded, "blob")) in \(StatisticsText.count(result.packsUploaded, "pack")) "
                        + "(\(RemoteCommandSupport.bytes(result.bytesUploaded))) uploaded, \(StatisticsText.count(result.requests, "request"))")
            } else {
                console.note(
                    "\(location) is up to date: version \(result.version.sequence) (\(result.version.shortID)) holds \(package)")
            }
            return .success
        }
    }

    /// The dry run's last line: what the push would make.
    static func summary(_ plan: PushPlan, location: RemoteLocation, package: String) -> String {
        guard plan.createsVersion else {
            let version = plan.head.map { "version \($0.sequence) (\($0.shortID))" } ?? "its latest version"
            return "\(location) is up to date: \(version) holds \(package); nothing would be pushed"
        }
        return "would push \(package) to \(location) as version \(plan.sequence): "
            + "\(StatisticsText.count(plan.files.count, "file")) to read (\(RemoteCommandSupport.bytes(plan.bytes))), "
            + "at most that uploaded, \(StatisticsText.count(plan.entries, "entry", "entries")) in the version"
    }

    static func json(_ plan: PushPlan, location: RemoteLocation, package: String) -> JSON {
        .object([
            ("package", .string(package)), ("remote", .string(location.description)), ("dry_run", .bool(true)),
            ("created_version", .bool(plan.createsVersion)), ("sequence", .int(plan.sequence)),
            ("head", plan.head.map(RemoteCommandSupport.summary) ?? .null), ("root_hash", .string(plan.rootHash.description)),
            ("entries", .int(plan.entries)),
            ("files", .array(plan.files.map { file in
                .object([("status", .string(file.replaces ? "M" : "A")), ("path", .string(file.path.string)), ("size", .int(file.size))])
            })),
            ("bytes", .int(plan.bytes)), ("requests", .int(plan.requests)),
        ])
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

/// `pull`'s work, in `pkgtool-remote`: the spec is `PullCommand`'s.
enum RemotePullCommand: Command {
    static var spec: CommandSpec { PullCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let (destination, given) = try PullCommand.operands(arguments)
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            try checkDestination(destination)
            let (location, endpoint) = try RemoteCommandSupport.remote(
                given, package: destination, arguments: arguments, usageLine: spec.usageLine, console: console)
            var options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine, endpoint: endpoint)
            if arguments.flag("dry-run") {
                let plan = try PackageRemote.planPull(
                    location, to: destination, version: arguments.value("version"), options: options,
                    force: arguments.flag("force"))
                for note in plan.notes { console.warning(note) }
                if arguments.flag("json") {
                    console.line(json(plan, location: location, destination: destination).serialized(pretty: true))
                } else {
                    for change in plan.changes { console.line(DiffCommand.nameStatusLine(change)) }
                    console.line(summary(plan, location: location, destination: destination))
                }
                return .success
            }
            options = RemoteCommandSupport.cancelling(options, console: console)
            let result = try RemoteCommandSupport.showingProgress("pulling", console: console, arguments: arguments) { progress in
                try PackageRemote.pull(
                    location, to: destination, version: arguments.value("version"), options: options,
                    force: arguments.flag("force"), durability: Durability(rawValue: durabilityName!)!,
                    progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location, destination: destination).serialized(pretty: true))
            } else if result.unchanged {
                console.note("\(destination) holds version \(result.version.sequence) (\(result.version.shortID)) of \(location) already")
            } else {
                console.note(
                    "pulled version \(result.version.sequence) (\(result.version.shortID)) of \(location) into \(destination): "
                        + "\(StatisticsText.count(result.blobsDownloaded, "blob")) downloaded (\(RemoteCommandSupport.bytes(result.bytesDownloaded))), "
                        + "\(result.blobsFromDestination) taken from \(destination), "
                        + "\(StatisticsText.count(result.save?.filesWritten ?? 0, "file")) written, \(StatisticsText.count(result.requests, "request"))")
            }
            return .success
        }
    }

    /// The dry run's last line: what the pull would make of DEST.
    static func summary(_ plan: PullPlan, location: RemoteLocation, destination: String) -> String {
        let version = "version \(plan.version.sequence) (\(plan.version.shortID))"
        if plan.unchanged { return "\(destination) holds \(version) of \(location) already; nothing would be pulled" }
        return "would pull \(version) of \(location) into \(destination)\(plan.destinationExists ? "" : " (created)"): "
            + "\(StatisticsText.count(plan.changes.count, "change")), \(StatisticsText.count(plan.blobsToDownload, "blob")) "
            + "(\(RemoteCommandSupport.bytes(plan.bytesToDownload))) to download"
    }

    static func json(_ plan: PullPlan, location: RemoteLocation, destination: String) -> JSON {
        .object([
            ("remote", .string(location.description)), ("destination", .string(destination)), ("dry_run", .bool(true)),
            ("version", RemoteCommandSupport.summary(plan.version)), ("unchanged", .bool(plan.unchanged)),
            ("destination_exists", .bool(plan.destinationExists)),
            ("changes", .array(plan.changes.map(DiffCommand.json))), ("blobs_to_download", .int(plan.blobsToDownload)),
            ("bytes_to_download", .int(plan.bytesToDownload)), ("requests", .int(plan.requests)),
        ])
    }

    /// What can be told about DEST without the network, told first (as push checks PKG
    /// before it connects): a DEST that is not a directory is refused, one whose folder is
    /// missing is trouble.
    static func checkDestination(_ destination: String) throws {
        if let status = try? FileSystem.status(destination, followSymlinks: true) {
            guard status.kind == .directory else {
                throw SaveRefusal(path: destination, reason: .destinationNotADirectory(status.kind))
            }
            return
        }
        let parent = RelativePath.splitLast(RelativePath.trimmingTrailingSlashes(destination)).directory
        let folder = parent.isEmpty ? "." : parent
        guard try FileSystem.status(folder, followSymlinks: true).kind == .directory else {
            throw FileSystemError(.open, path: folder, errno: .notDirectory)
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

/// `log`'s work, in `pkgtool-remote`: the spec is `LogCommand`'s.
enum RemoteLogCommand: Command {
    static var spec: CommandSpec { LogCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let location = try RemoteCommandSupport.location(arguments.positionals[0], usageLine: spec.usageLine)
        // By default the versions the head record holds: one request, whatever the head claims.
        let limit: Int? =
            arguments.values["limit"] == nil
            ? nil : try arguments.integer("limit", in: 1...Int.max, default: 1, usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine)
            let history = try PackageRemote.history(location, options: options, limit: limit)
            let versions = history.versions
            if arguments.flag("json") {
                console.line(
                    JSON.array(
                        versions.map { version in
                            guard case .object(let fields) = RemoteCommandSupport.summary(version) else { return .null }
                            return .object(fields + [("pruned", .bool(history.isPruned(version.sequence)))])
                        }
                    ).serialized(pretty: true))
                return .success
            }
            let sizes = versions.map { RemoteCommandSupport.bytes($0.size) }
            let sizeWidth = max(4, sizes.map(\.count).max() ?? 0)
            // A merge names both parents: "<first 12>+<second 12>".
            let parents = versions.map { version in
                [version.parent, version.secondParent].compactMap { $0.map { String($0.description.prefix(12)) } }
                    .joined(separator: "+")
            }
            let parentWidth = max(12, parents.map(\.count).max() ?? 0)
            let numberWidth = max(7, versions.map { String($0.sequence).count }.max() ?? 0)
            func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
                let padding = String(repeating: " ", count: max(0, width - text.count))
                return left ? padding + text : text + padding
            }
            console.line(
                "\(pad("version", numberWidth))  \(pad("id", 12))  \(pad("time", 24))  \(pad("parent", parentWidth))  "
                    + "\(pad("root hash", 32))  \(pad("size", sizeWidth, left: true))  entries")
            for (version, (size, parent)) in zip(versions, zip(sizes, parents)) {
                console.line(
                    "\(pad(String(version.sequence), numberWidth))  \(version.shortID)  \(version.isoTime)  "
                        + "\(pad(parent.isEmpty ? "-" : parent, parentWidth))  "
                        + "\(version.rootHash)  \(pad(size, sizeWidth, left: true))  \(version.entryCount)"
                        + (history.isPruned(version.sequence) ? "  (pruned)" : ""))
            }
            // What prunes dropped, and where a walk past the record stops.
            if !history.pruned.isEmpty {
                let ranges = history.pruned.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)–\($0.upperBound)" }
                console.line("pruned: versions \(ranges.joined(separator: ", "))")
            }
            return .success
        }
    }
}
