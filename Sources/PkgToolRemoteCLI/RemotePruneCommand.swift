import PackageCore
import PackageRemote
import PkgToolCLI

/// `prune`'s work, in `pkgtool-remote`: the spec is `PruneCommand`'s.
enum RemotePruneCommand: Command {
    static var spec: CommandSpec { PruneCommand.spec }

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let location = try RemoteCommandSupport.location(arguments.positionals[0], usageLine: spec.usageLine)
        let rules = try PruneCommand.policy(arguments)
        let policy = PrunePolicy(keepLast: rules.keepLast, keepWithin: rules.keepWithin, keep: rules.keep)
        let dryRun = arguments.flag("dry-run")
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine)
            let result = try RemoteCommandSupport.showingProgress("pruning", console: console, arguments: arguments) { progress in
                try PackageRemote.prune(
                    location, policy: policy, options: options, grace: rules.grace ?? 3600 * 1_000_000_000,
                    dryRun: dryRun, progress: progress)
            }
            for note in result.notes { console.warning(note) }
            if arguments.flag("json") {
                console.line(json(result, location: location).serialized(pretty: true))
                return .success
            }
            let bytes = RemoteCommandSupport.bytes
            if dryRun {
                console.line(
                    "would prune \(location): drop \(result.dropped.count) of \(result.kept.count + result.dropped.count) versions, "
                        + "delete \(result.packsDeleted) packs (\(bytes(result.packBytesDeleted)); \(result.packsRepacked) of them "
                        + "rewritten to \(bytes(result.bytesRewritten))), \(result.manifestsDeleted) manifests "
                        + "(\(bytes(result.manifestBytesDeleted))) and \(result.otherObjectsDeleted) leftovers "
                        + "(\(bytes(result.otherBytesDeleted))): \(bytes(result.storeBytesBefore)) → \(bytes(result.storeBytesAfter))")
            } else if result.dropped.isEmpty && result.packsDeleted == 0 && result.manifestsDeleted == 0
                && result.otherObjectsDeleted == 0
            {
                console.note("\(location) has nothing to prune: \(result.kept.count) versions kept, \(bytes(result.storeBytesBefore))")
            } else {
                console.note(
                    "pruned \(location): dropped \(result.dropped.count) versions, kept \(result.kept.count); deleted "
                        + "\(result.packsDeleted) packs (\(result.packsRepacked) rewritten to \(result.packsWritten) new ones), "
                        + "\(result.manifestsDeleted) manifests and \(result.otherObjectsDeleted) leftovers: "
                        + "\(bytes(result.storeBytesBefore)) → \(bytes(result.storeBytesAfter)), \(result.requests) requests")
            }
            for version in result.dropped {
                console.line(
                    "\(dryRun ? "would drop" : "dropped") version \(version.sequence) (\(version.shortID), pushed \(version.isoTime))")
            }
            return .success
        }
    }

    static func json(_ result: PruneResult, location: RemoteLocation) -> JSON {
        .object([
            ("remote", .string(location.description)), ("dry_run", .bool(result.dryRun)),
            ("kept", .array(result.kept.map(RemoteCommandSupport.summary))),
            ("dropped", .array(result.dropped.map(RemoteCommandSupport.summary))),
            ("packs_deleted", .int(result.packsDeleted)), ("pack_bytes_deleted", .int(Int(result.packBytesDeleted))),
            ("packs_repacked", .int(result.packsRepacked)), ("packs_written", .int(result.packsWritten)),
            ("bytes_rewritten", .int(Int(result.bytesRewritten))),
            ("manifests_deleted", .int(result.manifestsDeleted)),
            ("manifest_bytes_deleted", .int(Int(result.manifestBytesDeleted))),
            ("leftovers_deleted", .int(result.otherObjectsDeleted)),
            ("leftover_bytes_deleted", .int(Int(result.otherBytesDeleted))),
            ("store_bytes_before", .int(Int(result.storeBytesBefore))),
            ("store_bytes_after", .int(Int(result.storeBytesAfter))),
            ("attempts", .int(result.attempts)), ("requests", .int(result.requests)), ("retries", .int(result.retries)),
            ("seconds", .double(result.seconds)),
        ])
    }
}
