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
        let (location, endpoint) = try RemoteCommandSupport.remote(
            given, package: package, arguments: arguments, usageLine: spec.usageLine, console: console)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine, endpoint: endpoint)
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

/// `pull`'s work, in `pkgtool-remote`: the spec is `PullCommand`'s.
enum RemotePullCommand: Command {
    static var spec: CommandSpec { PullCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let (destination, given) = try PullCommand.operands(arguments)
        let (location, endpoint) = try RemoteCommandSupport.remote(
            given, package: destination, arguments: arguments, usageLine: spec.usageLine, console: console)
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine, endpoint: endpoint)
            try checkDestination(destination)
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
