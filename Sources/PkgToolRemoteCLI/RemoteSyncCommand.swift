import PackageCore
import PackageRemote
import PkgToolCLI

/// `sync`'s work, in `pkgtool-remote`: the spec is `SyncCommand`'s.
enum RemoteSyncCommand: Command {
    static var spec: CommandSpec { SyncCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let (package, given) = try SyncCommand.operands(arguments)
        let durabilityName = try arguments.choice(
            "fsync", among: Durability.allCases.map(\.rawValue), default: Durability.full.rawValue,
            usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            // PKG first: a typo in it is told as such, whatever the credentials.
            try PackageRemote.requirePackageDirectory(package)
            let (location, endpoint) = try RemoteCommandSupport.remote(
                given, package: package, arguments: arguments, usageLine: spec.usageLine, console: console)
            var options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine, endpoint: endpoint)
            options.exclusions = arguments.exclusions
            if arguments.flag("dry-run") {
                let plan = try PackageRemote.planSync(package, with: location, options: options)
                for note in plan.notes { console.warning(note) }
                if arguments.flag("json") {
                    console.line(json(plan, location: location, package: package).serialized(pretty: true))
                } else {
                    for line in lines(plan, location: location, package: package) { console.line(line) }
                }
                return .success
            }
            options = RemoteCommandSupport.cancelling(options, console: console)
            let result = try RemoteCommandSupport.showingProgress("syncing", console: console, arguments: arguments) { progress in
                try PackageRemote.sync(
                    package, with: location, options: options, durability: Durability(rawValue: durabilityName!)!,
                    progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location, package: package).serialized(pretty: true))
            } else {
                console.note(summary(result, location: location, package: package))
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

    /// The dry run's lines: the push's or pull's, or for a merge how PKG would change, the
    /// paths that would get a conflict version (`conflict<TAB>path`), and what it would do.
    static func lines(_ plan: SyncPlan, location: RemoteLocation, package: String) -> [String] {
        switch plan.action {
        case .upToDate:
            let version = plan.head.map { "version \($0.sequence) (\($0.shortID))" } ?? "its latest version"
            return ["\(package) is in sync with \(location) at \(version); nothing would change"]
        case .pushed:
            guard let push = plan.push else { return [] }
            return RemoteCommandSupport.pushLines(push) + [RemotePushCommand.summary(push, location: location, package: package)]
        case .pulled:
            guard let pull = plan.pull else { return [] }
            return pull.changes.map(DiffCommand.nameStatusLine)
                + [RemotePullCommand.summary(pull, location: location, destination: package)]
        case .merged:
            let head = plan.head.map { "version \($0.sequence) (\($0.shortID))" } ?? "the latest version"
            let entries = plan.entriesFromRemote == 1 ? "entry" : "entries"
            return plan.changes.map(DiffCommand.nameStatusLine)
                + plan.conflicts.map { "conflict\t" + NameQuoting.quoted($0.string) }
                + [
                    "would merge \(head) of \(location) into \(package) (\(plan.entriesFromRemote) \(entries) from the remote, "
                        + "\(plan.entriesFromLocal) from \(package), \(StatisticsText.count(plan.conflicts.count, "new conflict version")); "
                        + "\(StatisticsText.count(plan.blobsToDownload, "blob")) (\(RemoteCommandSupport.bytes(plan.bytesToDownload))) to download, "
                        + "and push the merge as version \(plan.mergedSequence ?? 0)"
                ]
        }
    }

    static func json(_ plan: SyncPlan, location: RemoteLocation, package: String) -> JSON {
        .object([
            ("package", .string(package)), ("remote", .string(location.description)), ("dry_run", .bool(true)),
            ("action", .string(plan.action.rawValue)), ("head", plan.head.map(RemoteCommandSupport.summary) ?? .null),
            ("push", plan.push.map { RemotePushCommand.json($0, location: location, package: package) } ?? .null),
            ("pull", plan.pull.map { RemotePullCommand.json($0, location: location, destination: package) } ?? .null),
            ("changes", .array(plan.changes.map(DiffCommand.json))),
            ("conflicts", .array(plan.conflicts.map { .string($0.string) })),
            ("entries_from_remote", .int(plan.entriesFromRemote)), ("entries_from_local", .int(plan.entriesFromLocal)),
            ("blobs_to_download", .int(plan.blobsToDownload)), ("bytes_to_download", .int(plan.bytesToDownload)),
            ("merged_sequence", plan.mergedSequence.map { .int($0) } ?? .null),
        ])
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
                text += ": \(StatisticsText.count(push.filesRead, "file")) read, \(StatisticsText.count(push.blobsUploaded, "blob")) (\(RemoteCommandSupport.bytes(push.bytesUploaded))) uploaded"
            }
        case .pulled:
            text = "pulled \(version) of \(location) into \(package)"
            if let pull = result.pulled {
                text += ": \(StatisticsText.count(pull.blobsDownloaded, "blob")) downloaded (\(RemoteCommandSupport.bytes(pull.bytesDownloaded))), \(StatisticsText.count(pull.save?.filesWritten ?? 0, "file")) written"
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
