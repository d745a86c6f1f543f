import PackageCore
import PackageRemote
import PkgToolCLI

/// `sync`'s work, in `pkgtool-remote`: the spec is `SyncCommand`'s.
enum RemoteSyncCommand: Command {
    static var spec: CommandSpec { SyncCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let (package, given) = try SyncCommand.operands(arguments)
        let (location, endpoint) = try RemoteCommandSupport.remote(
            given, package: package, arguments: arguments, usageLine: spec.usageLine, console: console)
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine, endpoint: endpoint)
            try ConflictsCommand.requirePackageDirectory(package)
            let result = try RemoteProgressLine.showing("syncing", console: console) { progress in
                try PackageRemote.sync(
                    package, with: location, options: options, durability: Durability(rawValue: durabilityName!)!,
                    progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location, package: package).serialized(pretty: true))
            } else {
                console.line(summary(result, location: location, package: package))
                if !result.conflicts.isEmpty {
                    let count = result.conflicts.count
                    console.line(
                        "\(package) lists \(count) conflict version\(count == 1 ? "" : "s") "
                            + "('pkgtool resolve \(package) PATH --keep local|other|both' settles one):")
                    for version in result.conflicts { console.line(ConflictsCommand.line(version)) }
                }
            }
            return result.conflicts.isEmpty ? .success : .failure
        }
    }

    /// The summary line: what the sync did.
    static func summary(_ result: SyncResult, location: RemoteLocation, package: String) -> String {
        let version = "version \(result.version.sequence) (\(result.version.shortID))"
        var text: String
        switch result.action {
        case .upToDate:
            text = "\(package) is in sync with \(location) at \(version)"
        case .pushed:
            text = "pushed \(package) to \(location) as \(version)"
            if let push = result.pushed {
                text += ": \(push.filesRead) files read, \(push.blobsUploaded) blobs (\(RemoteCommandSupport.bytes(push.bytesUploaded))) uploaded"
            }
        case .pulled:
            text = "pulled \(version) of \(location) into \(package)"
            if let pull = result.pulled {
                text += ": \(pull.blobsDownloaded) blobs downloaded (\(RemoteCommandSupport.bytes(pull.bytesDownloaded))), \(pull.save?.filesWritten ?? 0) files written"
            }
        case .merged:
            let merged = result.pulled.map { "version \($0.version.sequence) (\($0.version.shortID))" } ?? "the latest version"
            let added = result.newConflicts.count
            let entries = result.entriesFromRemote == 1 ? "entry" : "entries"
            text =
                "merged \(merged) of \(location) into \(package) (\(result.entriesFromRemote) \(entries) from the remote, "
                + "\(result.entriesFromLocal) from \(package), \(added) new conflict version\(added == 1 ? "" : "s")) "
                + "and pushed the merge as \(version)"
        }
        if result.attempts > 1 { text += " (attempt \(result.attempts): another device moved the remote on meanwhile)" }
        return text
    }

    static func json(_ result: SyncResult, location: RemoteLocation, package: String) -> JSON {
        .object([
            ("package", .string(package)), ("remote", .string(location.description)),
            ("action", .string(result.action.rawValue)), ("version", RemoteCommandSupport.summary(result.version)),
            ("attempts", .int(result.attempts)),
            ("merged_version", result.action == .merged ? result.pulled.map { RemoteCommandSupport.summary($0.version) } ?? .null : .null),
            ("entries_from_remote", .int(result.entriesFromRemote)), ("entries_from_local", .int(result.entriesFromLocal)),
            ("new_conflicts", .array(result.newConflicts.map(ConflictsCommand.json))),
            ("conflicts", .array(result.conflicts.map(ConflictsCommand.json))),
            ("pulled", result.pulled.map { RemotePullCommand.json($0, location: location, destination: package) } ?? .null),
            ("pushed", result.pushed.map { RemotePushCommand.json($0, location: location, package: package) } ?? .null),
        ])
    }
}
