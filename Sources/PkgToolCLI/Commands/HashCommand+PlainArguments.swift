/// `pkgtool hash PATH…` with nothing but paths on its command line, the way `xxhsum` is run
/// in scripts, goes straight to the command: no command table is searched, no spec is built
/// and no conformance is looked up. In a process that hashes one small file, the parser's
/// dictionaries and the runtime's first protocol lookup (a scan of every conformance in the
/// binary) are a measurable part of the whole; what is printed is the same.
extension HashCommand {
    /// What parsing `arguments` (the command line after the program name) would give, when
    /// they are `hash` and one or more paths (`-` included) with no option and no `--`, and
    /// `table` (nil: `PkgTool.commands`) runs this command; nil otherwise (the general path
    /// then parses them).
    static func plainArguments(_ arguments: [String], commands table: [any Command.Type]?) -> ParsedArguments? {
        guard arguments.count >= 2, arguments[0].utf8.elementsEqual("hash".utf8) else { return nil }
        let paths = Array(arguments.dropFirst())
        guard paths.allSatisfy(isPlainPath) else { return nil }
        if let table, !table.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(HashCommand.self) }) {
            return nil
        }
        var parsed = ParsedArguments()
        parsed.positionals = paths
        parsed.commandLine = paths
        return parsed
    }

    /// Runs the command on arguments from `plainArguments`, reporting a failure as the
    /// general dispatch does.
    static func runPlain(_ arguments: ParsedArguments, console: Console) -> ExitStatus {
        do {
            return try run(arguments, console: console)
        } catch {
            return PkgTool.report(error, console: console, refusedInput: spec.refusedInputStatus)
        }
    }

    /// Whether the parser would take `argument` as a path: `-` alone, or anything not
    /// starting with a dash.
    private static func isPlainPath(_ argument: String) -> Bool {
        let bytes = argument.utf8
        return bytes.first != UInt8(ascii: "-") || bytes.count == 1
    }
}
