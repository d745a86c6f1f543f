import PackageCore

/// `pkgtool conflicts PKG`: the conflict versions a merge left in a package and nobody
/// resolved yet (Specs/remote.md, "Conflict versions"). Local: no network.
package enum ConflictsCommand: Command {
    package static let spec = CommandSpec(
        name: "conflicts",
        summary: "list the conflict versions a sync left in a package, until they are resolved",
        arguments: "[--json] PKG",
        options: [OptionSpec("json", help: "print a JSON array of conflict versions")],
        positionals: 1...1,
        details: """
            A sync that merged edits both sides made to the same path keeps PKG's version in
            the tree and the other side's as a conflict version inside PKG (its
            .pkgtool/conflicts), which no move, rename, copy or network outage loses. One line
            per version, tab-separated: the side it was (other: the remote's; local: PKG's,
            kept when the tree took the remote's because PKG had deleted the path), its kind
            (file, directory, link, deleted), its content hash as 'pkgtool hash' prints it
            ('-' for a deletion), the remote version it came from (12 digits), when the merge
            kept it (UTC), and the path. A folder's version is one line per entry beneath it.
            Nothing is printed when no conflict is left. 'pkgtool resolve PKG PATH --keep
            local|other|both' settles one. Nothing here reaches a remote.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "the conflict versions were listed (none is still a success)"),
            ExitStatusMeaning(.failure, "PKG's conflicts record is damaged (it names what is wrong)"),
            ExitStatusMeaning(.trouble, "usage error, or trouble: PKG missing or not a directory, an I/O error"),
        ])

    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let package = arguments.positionals[0]
        try requirePackageDirectory(package)
        let versions: [ConflictVersion]
        do {
            versions = try PackageAccess.reading(package, warn: { console.warning($0) }) {
                try ConflictResolver.conflicts(of: package)
            }
        } catch let refusal as ConflictListRefusal {
            console.error(refusal.reason)
            return .failure
        }
        if arguments.flag("json") {
            console.line(JSON.array(versions.map(json)).serialized(pretty: true))
        } else {
            for version in versions { console.line(line(version)) }
        }
        return .success
    }

    /// A package operand must be a directory (through links): anything else is trouble.
    package static func requirePackageDirectory(_ package: String) throws {
        let status = try FileSystem.status(package, followSymlinks: true)
        guard status.kind == .directory else {
            throw FileSystemError(.open, path: package, errno: .notDirectory)
        }
    }

    /// `SIDE\tKIND\tHASH\tVERSION\tTIME\tPATH`: one conflict version as `conflicts` and
    /// `sync` print it (the path quoted as every name is).
    package static func line(_ version: ConflictVersion) -> String {
        let hash = version.kind == .deleted ? "-" : version.hash.description
        return [
            version.side.rawValue, version.kind.rawValue, hash, String(version.remoteVersion.prefix(12)),
            CalendarTime.iso(version.time), NameQuoting.quoted(version.path.string),
        ].joined(separator: "\t")
    }

    /// One conflict version as JSON: `{"path", "side", "kind", "mode", "size", "hash",
    /// "link_target", "version", "time", "time_ns"}` (`hash` null for a deletion).
    package static func json(_ version: ConflictVersion) -> JSON {
        .object([
            ("path", .string(version.path.string)), ("side", .string(version.side.rawValue)),
            ("kind", .string(version.kind.rawValue)), ("mode", .string(ListCommand.format4(version.permissions))),
            ("size", .int(version.size)),
            ("hash", version.kind == .deleted ? .null : .string(version.hash.description)),
            ("link_target", version.linkTarget.map { .string($0) } ?? .null),
            ("version", .string(version.remoteVersion)), ("time", .string(CalendarTime.iso(version.time))),
            ("time_ns", .int(version.time)),
        ])
    }
}
