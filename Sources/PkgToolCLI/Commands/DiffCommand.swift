import PackageCore

/// `pkgtool diff OLD NEW` and `pkgtool diff PKG`: what changed, git name-status style.
enum DiffCommand: Command {
    static let spec = CommandSpec(
        name: "diff",
        summary: "list what changed between two snapshots, or in a package since its manifest",
        arguments: "[--json | --stat] [--no-renames] (OLD NEW | PKG)",
        options: [
            OptionSpec("json", help: "print a JSON array of changes"),
            OptionSpec("stat", help: "print a one-line summary of the counts instead of the changes"),
            OptionSpec("no-renames", help: "list moved content as a deletion and an addition"),
            .jobs, RemoteCommandSupport.endpoint,
        ],
        positionals: 1...2,
        details: """
            OLD and NEW are package directories (or s3://BUCKET/PREFIX: the remote's latest
            version, from its manifest alone, no file contents downloaded). With one argument, PKG is compared with its
            manifest: what changed since pkgtool last recorded it (like 'git status').
            One line per change, sorted by path, tab-separated:
              A<TAB>path   added            D<TAB>path   deleted
              M<TAB>path   content or executable bit changed
              R<TAB>old<TAB>new   identical content moved (unique on each side)
              T<TAB>path   kind changed (file, directory, symbolic link)
            Directories are entries too, so added and deleted empty directories show.
            Unchanged files are not read when a manifest's stat data prove them current.
            Exit status: 0 identical, 1 different, 2 trouble.
            """)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        if arguments.flag("json") && arguments.flag("stat") {
            throw UsageError("--json and --stat cannot be combined", usageLine: spec.usageLine)
        }
        let old: TreeSnapshot
        let new: TreeSnapshot
        if arguments.positionals.count == 1 {
            let path = arguments.positionals[0]
            try SnapshotLoading.requireDirectory(path)
            let scan = try PackageAccess.reading(path) { try PackageScan.scan(path, workers: workers) }
            if let problem = scan.manifestProblem { throw problem }
            guard let manifest = scan.manifest else {
                throw FileSystemError(
                    .open, path: PackageLayout.metadataDirectory(of: path),
                    reason: "the package has no manifest; create one with 'pkgtool manifest \(path)'")
            }
            SnapshotLoading.report(scan, root: path, console: console)
            old = manifest.snapshot
            new = scan.snapshot
        } else if arguments.positionals.contains(where: RemoteCommandSupport.isRemote) {
            (old, new) = try RemoteDiff.snapshots(arguments, usageLine: spec.usageLine, workers: workers, console: console)
        } else {
            old = try SnapshotLoading.load(arguments.positionals[0], workers: workers, console: console).snapshot
            new = try SnapshotLoading.load(arguments.positionals[1], workers: workers, console: console).snapshot
        }
        let changes =
            old.rootHash == new.rootHash
            ? [] : TreeDiff.changes(from: old, to: new, detectRenames: !arguments.flag("no-renames"))
        if arguments.flag("json") {
            console.line(JSON.array(changes.map(json)).serialized(pretty: true))
        } else if arguments.flag("stat") {
            console.line(summary(changes))
        } else {
            for change in changes { console.line(change.nameStatusLine) }
        }
        return changes.isEmpty ? .success : .failure
    }

    static func json(_ change: TreeChange) -> JSON {
        var members: [(String, JSON)] = [("status", .string(change.status.rawValue)), ("path", .string(change.path))]
        if let oldPath = change.oldPath { members.append(("old_path", .string(oldPath))) }
        if let entry = change.oldEntry { members.append(("old", describe(entry))) }
        if let entry = change.newEntry { members.append(("new", describe(entry))) }
        return .object(members)
    }

    static func describe(_ entry: SnapshotEntry) -> JSON {
        var members: [(String, JSON)] = [
            ("kind", .string(ListCommand.kindName(entry.kind))),
            ("mode", .string(String(entry.permissions, radix: 8))),
            ("hash", .string(entry.hash.description)),
        ]
        if entry.kind != .directory { members.append(("size", .int(entry.size))) }
        if let target = entry.linkTarget { members.append(("target", .string(target))) }
        return .object(members)
    }

    static func summary(_ changes: [TreeChange]) -> String {
        let counts = Dictionary(grouping: changes, by: \.status).mapValues(\.count)
        let parts: [(TreeChange.Status, String)] = [
            (.added, "added"), (.deleted, "deleted"), (.modified, "modified"), (.renamed, "renamed"),
            (.typeChanged, "type changed"),
        ]
        let listed = parts.map { "\(counts[$0.0] ?? 0) \($0.1)" }.joined(separator: ", ")
        return "\(changes.count) change\(changes.count == 1 ? "" : "s"): \(listed)"
    }
}
