import PackageCore
import PackageRemote

/// `pkgtool log s3://BUCKET/PREFIX`: the remote's versions, newest first.
enum LogCommand: Command {
    static let spec = CommandSpec(
        name: "log",
        summary: "list the versions of an S3 remote, newest first",
        arguments: "[--json] [--limit N] [--endpoint URL] [--retries N] s3://BUCKET/PREFIX",
        options: [
            OptionSpec("json", help: "print a JSON array of versions"),
            OptionSpec("limit", .value(placeholder: "N"), help: "at most N versions"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.retries,
        ],
        positionals: 1...1,
        details: """
            One line per version: its number, id (the first 12 of 64 hexadecimal digits; any
            unique prefix names it for pull --version), the time it was pushed (UTC), its
            parent's id, the package's root hash (as 'pkgtool hash PKG' prints it), its size
            and entry count. --json prints every field in full. The latest 101 versions come
            in one request; each older one costs a small ranged GET.
            Exit status: 0, 1 when the prefix is not a pkgtool remote, 2 trouble.
            """ + "\n" + RemoteCommandSupport.environmentHelp)

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let location = try RemoteCommandSupport.location(arguments.positionals[0], usageLine: spec.usageLine)
        let limit = try arguments.integer("limit", in: 1...Int.max, default: Int.max, usageLine: spec.usageLine)
        return try RemoteCommandSupport.run(console: console) {
            let options = try RemoteCommandSupport.options(arguments, usageLine: spec.usageLine)
            let versions = try PackageRemote.log(location, options: options, limit: limit)
            if arguments.flag("json") {
                console.line(JSON.array(versions.map(RemoteCommandSupport.summary)).serialized(pretty: true))
                return .success
            }
            let sizes = versions.map { RemoteCommandSupport.bytes($0.size) }
            let sizeWidth = max(4, sizes.map(\.count).max() ?? 0)
            let numberWidth = max(7, versions.map { String($0.sequence).count }.max() ?? 0)
            func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
                let padding = String(repeating: " ", count: max(0, width - text.count))
                return left ? padding + text : text + padding
            }
            console.line(
                "\(pad("version", numberWidth))  \(pad("id", 12))  \(pad("time", 24))  \(pad("parent", 12))  "
                    + "\(pad("root hash", 32))  \(pad("size", sizeWidth, left: true))  entries")
            for (version, size) in zip(versions, sizes) {
                let parent = version.parent.map { String($0.description.prefix(12)) } ?? "-"
                console.line(
                    "\(pad(String(version.sequence), numberWidth))  \(version.shortID)  \(version.isoTime)  \(pad(parent, 12))  "
                        + "\(version.rootHash)  \(pad(size, sizeWidth, left: true))  \(version.entryCount)")
            }
            return .success
        }
    }
}
