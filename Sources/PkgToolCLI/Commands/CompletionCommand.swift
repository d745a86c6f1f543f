/// `pkgtool completion bash|zsh|fish`: a completion script, written from the option tables.
enum CompletionCommand: Command {
    static let spec = CommandSpec(
        name: "completion",
        summary: "print a shell completion script for bash, zsh or fish",
        arguments: "bash|zsh|fish",
        options: [],
        positionals: 1...1,
        operands: .choices(ShellCompletion.Shell.allCases.map(\.rawValue)),
        details: """
            The script completes commands, options, the values of options that take one of
            a few words (save --strategy), and file names where a command takes paths. It is
            written from the same tables as --help, so it always matches this pkgtool.
              bash  source <(pkgtool completion bash)
              zsh   pkgtool completion zsh > "${fpath[1]}/_pkgtool"
              fish  pkgtool completion fish > ~/.config/fish/completions/pkgtool.fish
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "the script was printed"),
            ExitStatusMeaning(.trouble, "usage error: no shell, or one pkgtool does not know"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let name = arguments.positionals[0]
        guard let shell = ShellCompletion.Shell(rawValue: name) else {
            let known = ShellCompletion.Shell.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError("no completion for '\(name)': pkgtool knows \(known)", usageLine: spec.usageLine)
        }
        console.write(ShellCompletion.script(for: shell))
        return .success
    }
}
