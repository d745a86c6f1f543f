import PackageCore
import PackageZip

/// `pkgtool ls PATH`: the entries of a package, with sizes (and hashes with `--long`).
enum ListCommand: Command {
    static let spec = CommandSpec(
        name: "ls",
        summary: "list the entries of a package or a ZIP archive with their sizes",
        arguments: "[--long] [--json | -z] [--jobs N] [--max-entries N] [--max-size BYTES] [--max-ratio R] PKG|ZIP",
        options: [
            OptionSpec("long", short: "l", help: "add the mode, the modification time and the content hash"),
            OptionSpec("json", help: "print a JSON array of entries"),
            .null,
            .jobs,
        ] + ZipCommandSupport.limitOptions,
        positionals: 1...1,
        details: """
            One line per entry in depth-first path order: its kind (d directory, f file,
            x executable file, l symbolic link), its size in bytes (files and links), and its
            path; a directory's path ends with "/", a link's is followed by " -> target".
            --long adds the permission bits, the modification time (UTC) and the hash.

            A ZIP archive is listed in archive order from its central directory (checked as
            'verify' checks it, no data inflated); --long also shows each entry's compressed
            size, method and CRC-32, and 32 dashes for an entry without pkgtool's content hash.

            A name holding a control character, '"' or '\\' is printed in double quotes with
            C escapes, as git quotes names. With -z each entry ends with NUL instead of a
            newline, names are printed as they are, and a link's target follows its name
            after a NUL instead of " -> ".
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "listed"),
            ExitStatusMeaning(.failure, "the ZIP archive was refused (corrupt, hostile, past a limit)"),
            ExitStatusMeaning(.trouble, "usage error; PKG or ZIP missing or unreadable"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        let long = arguments.flag("long")
        if arguments.flag("json") && arguments.flag("null") {
            throw UsageError("--json and -z cannot be combined", usageLine: spec.usageLine)
        }
        let path = arguments.positionals[0]
        if ZipCommandSupport.isArchivePath(path) {
            return try ZipList.run(path, arguments: arguments, usageLine: spec.usageLine, console: console)
        }
        let snapshot: TreeSnapshot
        if long || arguments.flag("json") {
            snapshot = try SnapshotLoading.load(path, workers: workers, console: console).snapshot
        } else {
            // Sizes alone need no hashing.
            try SnapshotLoading.requireDirectory(path)
            snapshot = try PackageAccess.reading(path, warn: { console.warning($0) }) {
                try TreeScanner(
                    workers: workers, hashContents: false, excludedTopLevelNames: [PackageLayout.metadataDirectoryName]
                ).scan(path).snapshot
            }
        }
        if arguments.flag("json") {
            console.line(JSON.array(snapshot.entries.map(json)).serialized(pretty: true))
            return .success
        }
        let sizeWidth = snapshot.entries.map { String($0.size).count }.max() ?? 1
        for entry in snapshot.entries {
            var columns = [String(entry.tag.rawValue.asCharacter)]
            if long { columns.append(String(format4(entry.permissions))) }
            let size = entry.kind == .directory ? "-" : String(entry.size)
            columns.append(String(repeating: " ", count: sizeWidth - size.count) + size)
            if long {
                columns.append(Timestamps.iso8601(nanoseconds: entry.modificationTime))
                columns.append(entry.hash.description)
            }
            let name = entry.kind == .directory ? entry.path + "/" : entry.path
            writeRecord(
                columns: columns, name: name, linkTarget: entry.linkTarget,
                nullTerminated: arguments.flag("null"), console: console)
        }
        return .success
    }

    /// One entry of a listing: its columns, then its name (and a link's target), quoted as
    /// git quotes names and ended by a newline; or with `nullTerminated` (`-z`) unquoted and
    /// ended by NUL, a link's target a NUL-terminated field of its own.
    static func writeRecord(
        columns: [String], name: String, linkTarget: String?, nullTerminated: Bool, console: Console
    ) {
        let prefix = columns.isEmpty ? "" : columns.joined(separator: " ") + " "
        if nullTerminated {
            console.write(prefix + name + "\0")
            if let linkTarget { console.write(linkTarget + "\0") }
            return
        }
        var line = prefix + NameQuoting.quoted(name)
        if let linkTarget { line += " -> " + NameQuoting.quoted(linkTarget) }
        console.line(line)
    }

    static func json(_ entry: SnapshotEntry) -> JSON {
        var members: [(String, JSON)] = [
            ("path", .string(entry.path)), ("kind", .string(kindName(entry.kind))),
            ("mode", .string(format4(entry.permissions))),
        ]
        if entry.kind != .directory { members.append(("size", .int(entry.size))) }
        members.append(("mtime", .string(Timestamps.iso8601(nanoseconds: entry.modificationTime))))
        members.append(("hash", .string(entry.hash.description)))
        if let target = entry.linkTarget { members.append(("target", .string(target))) }
        return .object(members)
    }

    static func kindName(_ kind: FileKind) -> String {
        switch kind {
        case .regular: return "file"
        case .directory: return "directory"
        case .symbolicLink: return "symlink"
        default: return "other"
        }
    }

    static func format4(_ permissions: UInt32) -> String {
        let octal = String(permissions & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - octal.count)) + octal
    }
}

extension UInt8 {
    var asCharacter: Character { Character(Unicode.Scalar(self)) }
}

/// Time formatting without Foundation's date formatters.
enum Timestamps {
    /// `2026-12-01T10:43:55.123456789Z`.
    static func iso8601(nanoseconds: Int64) -> String {
        var seconds = nanoseconds / 1_000_000_000
        var fraction = nanoseconds % 1_000_000_000
        if fraction < 0 {
            seconds -= 1
            fraction += 1_000_000_000
        }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            days -= 1
            secondOfDay += 86_400
        }
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(secondOfDay / 3600, 2)):"
            + "\(pad(secondOfDay / 60 % 60, 2)):\(pad(secondOfDay % 60, 2)).\(pad(fraction, 9))Z"
    }
}
