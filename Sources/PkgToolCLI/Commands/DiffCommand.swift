import PackageCore

/// `pkgtool diff OLD NEW` and `pkgtool diff PKG`: what changed, git name-status style.
package enum DiffCommand: Command {
    /// Reads the two sides when at least one is a remote: the work of `pkgtool-remote`.
    package typealias RemoteSnapshots = (_ arguments: ParsedArguments, _ usageLine: String, _ workers: Int, _ console: Console)
        throws -> (old: TreeSnapshot, new: TreeSnapshot)

    package static let spec = CommandSpec(
        name: "diff",
        summary: "list what changed between two snapshots, or in a package since its manifest",
        arguments: "[--json | --stat | -z] [--no-renames] [--jobs N] (OLD NEW | PKG)",
        options: [
            OptionSpec("json", help: "print a JSON array of changes"),
            OptionSpec("stat", help: "print a one-line summary of the counts instead of the changes", aliases: ["stats"]),
            .null,
            OptionSpec("no-renames", help: "list moved content as a deletion and an addition"),
            .jobs, RemoteCommandSupport.endpoint, RemoteCommandSupport.profile,
        ],
        positionals: 1...2,
        details: """
            OLD and NEW are package directories, ZIP archives, or s3://BUCKET/PREFIX (a
            remote's latest version, from its manifest alone: no file contents downloaded).
            With one argument, PKG is compared with its manifest: what changed since pkgtool
            last recorded it (like 'git status').
            One line per change, sorted by path, tab-separated:
              A<TAB>path   added            D<TAB>path   deleted
              M<TAB>path   content or executable bit changed
              R<TAB>old<TAB>new   identical content moved (unique on each side)
              T<TAB>path   kind changed (file, directory, symbolic link)
            Directories are entries too, so added and deleted empty directories show.
            Unchanged files are not read when a manifest's stat data prove them current.
            A name holding a control character, '"' or '\\' is printed in double quotes with
            C escapes, as git quotes names, so that every change is one line. With -z, as
            git's -z: the status and each path end with NUL, names unquoted.
            As diff(1) and cmp(1): 1 means only "different"; an input that cannot be read,
            whether missing or a corrupt archive or manifest, is trouble (2).
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "identical"),
            ExitStatusMeaning(.failure, "different"),
            ExitStatusMeaning(
                .trouble,
                "no answer: usage error; a side missing or unreadable, a corrupt or refused ZIP archive, PKG without a sound manifest"),
        ],
        refusedInputStatus: .trouble)

    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        try run(arguments, console: console, remoteSnapshots: nil)
    }

    /// `remoteSnapshots`: how to read a remote side; without it (pkgtool itself), a diff
    /// with one runs in `pkgtool-remote` (`RemoteHelper`).
    package static func run(_ arguments: ParsedArguments, console: Console, remoteSnapshots: RemoteSnapshots?) throws
        -> ExitStatus
    {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        let formats = ["json", "stat", "null"].filter { arguments.flag($0) }
        if formats.count > 1 {
            let names = formats.map { $0 == "null" ? "-z" : "--" + $0 }
            throw UsageError("\(names.joined(separator: " and ")) cannot be combined", usageLine: spec.usageLine)
        }
        let old: TreeSnapshot
        let new: TreeSnapshot
        if arguments.positionals.count == 1 {
            let path = arguments.positionals[0]
            if RemoteCommandSupport.isRemote(path) {
                throw UsageError(
                    "a remote is compared with a second side: diff PKG \(path), or diff \(path) PKG",
                    usageLine: spec.usageLine)
            }
            try SnapshotLoading.requireDirectory(path)
            (old, new) = try PackageAccess.reading(path, warn: { console.warning($0) }) {
                try recordAndScan(path, workers: workers, console: console)
            }
        } else if arguments.positionals.contains(where: RemoteCommandSupport.isRemote) {
            guard let remoteSnapshots else { return RemoteHelper.forward(spec.name, arguments, console: console) }
            (old, new) = try remoteSnapshots(arguments, spec.usageLine, workers, console)
        } else {
            (old, new) = try SnapshotLoading.loadPair(
                arguments.positionals[0], arguments.positionals[1], workers: workers, console: console)
        }
        let changes =
            old.rootHash == new.rootHash
            ? [] : TreeDiff.changes(from: old, to: new, detectRenames: !arguments.flag("no-renames"))
        print(changes, json: arguments.flag("json"), summary: arguments.flag("stat"), null: arguments.flag("null"), console: console)
        return changes.isEmpty ? .success : .failure
    }

    /// A package's manifest tree and its tree now (under the caller's lock). The scan lets
    /// the manifest go and, when the package holds exactly what it records, is that tree
    /// itself: nothing is compared, and the two trees are never both held. Only when
    /// something changed is the manifest read again to compare with.
    private static func recordAndScan(_ path: String, workers: Int, console: Console) throws
        -> (record: TreeSnapshot, now: TreeSnapshot)
    {
        let noManifest = FileSystemError(
            .open, path: PackageLayout.metadataDirectory(of: path),
            reason: "the package has no manifest; create one with 'pkgtool manifest \(path)'")
        let scan = try PackageScan.scan(path, workers: workers, keepingManifest: false, recordingHashedPaths: false)
        if let problem = scan.manifestProblem { throw problem }
        guard scan.usedManifest else { throw noManifest }
        SnapshotLoading.report(scan, root: path, console: console)
        if scan.result.isRecordedTree { return (scan.snapshot, scan.snapshot) }
        guard let manifest = try PackageManifest.load(packagePath: path) else { throw noManifest }
        return (manifest.snapshot, scan.snapshot)
    }

    /// Prints changes as diff does, and as the dry runs of save and unpack do: one JSON
    /// array, the one-line summary, NUL-terminated records, or name-status lines.
    static func print(_ changes: [TreeChange], json: Bool, summary wantsSummary: Bool, null: Bool = false, console: Console) {
        if json {
            console.line(JSON.array(changes.map(Self.json)).serialized(pretty: true))
        } else if wantsSummary {
            console.line(summary(changes))
        } else if null {
            for change in changes { console.write(nullTerminatedRecord(change)) }
        } else {
            for change in changes { console.line(nameStatusLine(change)) }
        }
    }

    /// `M<TAB>path`, `R<TAB>old<TAB>new`: git's name-status line, names quoted as git quotes them.
    package static func nameStatusLine(_ change: TreeChange) -> String {
        var fields = [change.status.rawValue]
        if let oldPath = change.oldPath { fields.append(NameQuoting.quoted(oldPath)) }
        fields.append(NameQuoting.quoted(change.path))
        return fields.joined(separator: "\t")
    }

    /// `M\0path\0`, `R\0old\0new\0`: git's `--name-status -z`, names as they are.
    static func nullTerminatedRecord(_ change: TreeChange) -> String {
        var fields = [change.status.rawValue]
        if let oldPath = change.oldPath { fields.append(oldPath) }
        fields.append(change.path)
        return fields.map { $0 + "\0" }.joined()
    }

    package static func json(_ change: TreeChange) -> JSON {
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

    package static func summary(_ changes: [TreeChange]) -> String {
        let counts = Dictionary(grouping: changes, by: \.status).mapValues(\.count)
        let parts: [(TreeChange.Status, String)] = [
            (.added, "added"), (.deleted, "deleted"), (.modified, "modified"), (.renamed, "renamed"),
            (.typeChanged, "type changed"),
        ]
        let listed = parts.map { "\(counts[$0.0] ?? 0) \($0.1)" }.joined(separator: ", ")
        return "\(changes.count) change\(changes.count == 1 ? "" : "s"): \(listed)"
    }
}
