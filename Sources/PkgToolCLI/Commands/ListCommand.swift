import Glibc
import PackageCore
import PackageZip

/// `pkgtool ls ZIP`: the entries of an archive.
enum ListCommand: Command {
    static let spec = CommandSpec(
        name: "ls",
        summary: "list a ZIP archive's entries",
        arguments: "[--long] [--json] ZIP",
        options: [
            OptionSpec("long", short: "l", help: "add method, compressed size, CRC-32 and content hash"),
            OptionSpec("json", help: "print a JSON array of entries"),
        ] + ZipCommandSupport.limitOptions,
        positionals: 1...1,
        details: """
            One line per entry in archive order: kind and mode, size, modification time (UTC)
            and path ('path -> target' for links, 'path/' for directories). The archive's
            structure is checked as by 'verify' (exit 1 when refused); data is not read.
            """)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let limits = try ZipCommandSupport.limits(arguments, usageLine: spec.usageLine)
        let archive = try ZipArchive.open(arguments.positionals[0], limits: limits)
        let long = arguments.flag("long")
        if arguments.flag("json") {
            let records: [JSON] = archive.entries.map { entry in
                var members: [(String, JSON)] = [
                    ("path", .string(entry.path)), ("kind", .string(kindName(entry.kind))),
                    ("mode", .string(String(entry.permissions, radix: 8).leftPadded(4))),
                    ("size", .int(entry.uncompressedSize)), ("compressed_size", .int(entry.compressedSize)),
                    ("method", .string(entry.method.description)),
                    ("mtime", .int(entry.modificationTime / 1_000_000_000)),
                    ("crc32", .string(String(entry.crc32, radix: 16).leftPadded(8))),
                    ("hash", entry.contentHash.map { .string($0.description) } ?? .null),
                ]
                if let target = entry.linkTarget { members.append(("target", .string(target))) }
                return .object(members)
            }
            console.line(JSON.array(records).serialized(pretty: true))
            return .success
        }
        for entry in archive.entries {
            var line = "\(kindLetter(entry.kind))\(String(entry.permissions, radix: 8).leftPadded(4)) "
            line += String(entry.uncompressedSize).leftPadded(12, " ") + " "
            if long {
                line += String(entry.compressedSize).leftPadded(12, " ") + " "
                line += entry.method.description.padding(8) + " "
                line += String(entry.crc32, radix: 16).leftPadded(8) + " "
                line += (entry.contentHash?.description ?? String(repeating: "-", count: 32)) + " "
            }
            line += utc(entry.modificationTime) + "  " + entry.name
            if let target = entry.linkTarget { line += " -> " + target }
            console.line(line)
        }
        return .success
    }

    static func kindName(_ kind: FileKind) -> String {
        switch kind {
        case .directory: return "directory"
        case .symbolicLink: return "link"
        default: return "file"
        }
    }

    static func kindLetter(_ kind: FileKind) -> String {
        switch kind {
        case .directory: return "d"
        case .symbolicLink: return "l"
        default: return "-"
        }
    }

    /// "2024-05-01 12:00:00" for nanoseconds since the epoch.
    static func utc(_ nanoseconds: Int64) -> String {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { String(value).leftPadded(2) }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    }
}

extension String {
    func leftPadded(_ width: Int, _ pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
