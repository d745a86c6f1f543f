import PackageCore

/// `pkgtool prune [--keep-last N] [--keep-within DURATION] [--keep VERSION]… s3://BUCKET/PREFIX`:
/// the versions a policy does not keep, and the bytes only they used, deleted without a lock
/// (Specs/remote.md, "Prune").
package enum PruneCommand: Command {
    package static let spec = CommandSpec(
        name: "prune",
        summary: "delete the versions of an S3 remote a policy does not keep, and the bytes only they used",
        arguments:
            "[--json] [--dry-run] [--keep-last N] [--keep-within DURATION] [--keep VERSION]... [--grace DURATION] [--endpoint URL] [--profile NAME] [--transfers N] [--limit-rate BYTES] [--speed-limit BYTES] [--speed-time SECONDS] [--max-time SECONDS] [--retries N] s3://BUCKET/PREFIX",
        options: [
            OptionSpec("json", help: "print what was (or would be) kept, dropped and deleted as JSON"),
            OptionSpec("dry-run", short: "n", help: "print the versions and bytes that would go; write and delete nothing"),
            OptionSpec("keep-last", .value(placeholder: "N"), help: "keep the N latest versions (the head counts)"),
            OptionSpec(
                "keep-within", .value(placeholder: "DURATION"),
                help: "keep the versions pushed at most DURATION before the head (90s, 30m, 12h, 7d, 2w, 1d12h)"),
            OptionSpec(
                "keep", .value(placeholder: "VERSION"),
                help: "keep this version: an id, a unique prefix of one, or a number (repeatable)", repeatable: true),
            OptionSpec(
                "grace", .value(placeholder: "DURATION"),
                help: "keep objects no version names while younger than DURATION: a push in flight's (default 1h)"),
            RemoteCommandSupport.endpoint, RemoteCommandSupport.profile,
        ] + RemoteCommandSupport.transferOptions + OptionSpec.progressOptions,
        positionals: 1...1,
        details: """
            The head is always kept, and every version a --keep-last, --keep-within or --keep
            rule names; the others are dropped. At least one rule is required. The head record
            says which versions were pruned (pkgtool log marks them), and their manifests are
            deleted; packs no kept version uses are deleted, and packs kept versions use less
            than half of are rewritten with only their live blobs (a blob index on the remote
            says where those went). No lock is taken: pushes and pulls go on meanwhile (a push
            racing the prune is kept, a pull completes), and a prune killed at any moment leaves
            every kept version pullable; the next one finishes the job. --dry-run prints the
            plan: the versions and the bytes that would go.
            """ + "\n" + RemoteCommandSupport.deadlineHelp + "\n" + RemoteCommandSupport.environmentHelp,
        exitStatuses: [
            ExitStatusMeaning(.success, "pruned, or nothing to prune (also for --dry-run)"),
            ExitStatusMeaning(
                .failure,
                "refused: not a pkgtool remote, an unknown or pruned --keep version, an object failed verification, the remote kept moving (5 attempts)"),
            ExitStatusMeaning(
                .trouble, "usage error (no rule, a bad N or DURATION), or trouble: credentials, the network, the store's answers"),
        ])

    /// The policy the options give; none is a usage error (as restic's `forget`).
    package static func policy(_ arguments: ParsedArguments) throws
        -> (keepLast: Int?, keepWithin: Int64?, keep: [String], grace: Int64?)
    {
        let keepLast =
            arguments.values["keep-last"] == nil
            ? nil : try arguments.integer("keep-last", in: 1...Int.max, default: 1, usageLine: spec.usageLine)
        func duration(_ name: String) throws -> Int64? {
            guard let text = arguments.value(name) else { return nil }
            guard let value = parseDuration(text) else {
                throw UsageError(
                    "--\(name) '\(text)' is not a duration (e.g. 90s, 30m, 12h, 7d, 2w, 1d12h)", usageLine: spec.usageLine)
            }
            return value
        }
        let keepWithin = try duration("keep-within")
        let keep = arguments.values["keep"] ?? []
        guard keepLast != nil || keepWithin != nil || !keep.isEmpty else {
            throw UsageError(
                "prune needs a rule: --keep-last N, --keep-within DURATION or --keep VERSION (the head is always kept)",
                usageLine: spec.usageLine)
        }
        return (keepLast, keepWithin, keep, try duration("grace"))
    }

    /// Nanoseconds of `90s`, `30m`, `12h`, `7d`, `2w` or a sum of them (`1d12h`).
    package static func parseDuration(_ text: String) -> Int64? {
        var total: Int64 = 0
        var number: Int64? = nil
        for byte in text.utf8 {
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                let (scaled, overflow) = (number ?? 0).multipliedReportingOverflow(by: 10)
                guard !overflow, scaled <= Int64.max - Int64(byte - UInt8(ascii: "0")) else { return nil }
                number = scaled + Int64(byte - UInt8(ascii: "0"))
                continue
            }
            let unit: Int64
            switch byte {
            case UInt8(ascii: "s"): unit = 1
            case UInt8(ascii: "m"): unit = 60
            case UInt8(ascii: "h"): unit = 3600
            case UInt8(ascii: "d"): unit = 86400
            case UInt8(ascii: "w"): unit = 7 * 86400
            default: return nil
            }
            guard let value = number else { return nil }
            let (nanoseconds, overflow) = value.multipliedReportingOverflow(by: unit * 1_000_000_000)
            guard !overflow, total <= Int64.max - nanoseconds else { return nil }
            total += nanoseconds
            number = nil
        }
        return number == nil && !text.isEmpty ? total : nil
    }

    /// Runs in `pkgtool-remote` (`RemoteHelper`); its work is `RemotePruneCommand`.
    package static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        _ = try policy(arguments)
        return RemoteHelper.forward(spec.name, arguments, console: console)
    }
}
