import PackageCore

/// `pkgtool bench …`: the benchmark harness, `pkgbench`, under pkgtool's name.
///
/// It execs the `pkgbench` executable built beside pkgtool (or found on PATH) with the
/// arguments unchanged, rather than linking the harness in. The harness measures pkgtool
/// processes from outside — their start-up included — so pkgtool must stay the small
/// program it is without the harness (which needs all of Foundation, the report writer and
/// the generators); pkgbench also needs its launcher, `pkgbench-measure`, beside it, which
/// an install of pkgbench brings and pkgtool alone would not.
enum BenchCommand: Command, RawArgumentsCommand {
    static let spec = CommandSpec(
        name: "bench",
        summary: "run the benchmark harness (pkgbench): pkgtool against rsync, cp, xxhsum, zip…",
        arguments: "[--quick | --sweep] [pkgbench options]",
        options: [],
        positionals: 0...Int.max,
        operands: .none,
        details: """
            Every argument goes to pkgbench unchanged: 'pkgtool bench --help' prints its
            options. 'pkgtool bench --quick' is the README's main run: a 256 MiB document
            package, the main save scenarios with every strategy beside rsync and cp, its
            table, a JSON record and an HTML report (Benchmarks/README.md). pkgbench and
            pkgbench-measure must be built beside pkgtool ('swift build -c release') or be
            on PATH. Build in release mode: a debug build's figures mean nothing.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "the measurements were made (a missed target shows as MISSED in the table)"),
            ExitStatusMeaning(.trouble, "usage error, a measured command failed, or pkgbench cannot be found or run"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        try run(rawArguments: arguments.positionals, console: console)
    }

    static func run(rawArguments: [String], console: Console) throws -> ExitStatus {
        guard let pkgbench = CompanionProgram.locate("pkgbench") else {
            console.error(
                "cannot run the benchmark: no pkgbench beside pkgtool nor on PATH; "
                    + "build it with 'swift build -c release --product pkgbench --product pkgbench-measure'")
            return .trouble
        }
        return CompanionProgram.replaceProcess(with: pkgbench, arguments: [pkgbench] + rawArguments, console: console)
    }
}

/// A command that takes its arguments as they are, unparsed (it hands them to another
/// program that has its own options).
protocol RawArgumentsCommand {
    static func run(rawArguments: [String], console: Console) throws -> ExitStatus
}
