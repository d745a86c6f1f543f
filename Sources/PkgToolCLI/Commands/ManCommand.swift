/// `pkgtool man`: the manual page in roff, written from the option tables.
enum ManCommand: Command {
    static let spec = CommandSpec(
        name: "man",
        summary: "print pkgtool's manual page (roff) for man(1)",
        arguments: "",
        options: [],
        positionals: 0...0,
        operands: .none,
        details: """
            Every command with its options and exit statuses, from the same tables as --help.
            Read it with 'pkgtool man | man -l -', or install it:
              pkgtool man > /usr/local/share/man/man1/pkgtool.1
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "the page was printed"),
            ExitStatusMeaning(.trouble, "usage error"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        console.write(ManualPage.roff())
        return .success
    }
}
