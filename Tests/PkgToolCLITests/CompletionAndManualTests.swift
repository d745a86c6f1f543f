import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

/// Drives zsh's completion system in a pseudo-terminal (zsh/zpty) and prints every word
/// completion offers for a command line, one a line: zsh has no batch mode for completion.
/// Directories come with a trailing "/" in some shells: the tests drop it.
private let zshCompleter = #"""
    cd $1 && shift
    zmodload zsh/zpty zsh/zselect
    zpty completer zsh -f -i
    zpty -w completer "PS1='' RPS1=''"
    zpty -w completer "autoload -Uz compinit && compinit -u -D"
    zpty -w completer "source ${(q)1}"
    zpty -w completer 'compadd() { local -a found; builtin compadd -O found "$@"; (( $#found )) && print -rl -- "<off""ered>"${^found}; builtin compadd "$@"; }'
    # Reads the terminal, printing what is offered, until a line holds the marker $1, or
    # until it has been quiet for $2 hundredths of a second once something was offered, $3
    # before (0: no limit), or 10 s in all. (Markers are typed split in two, so that their
    # echo never matches.)
    integer offered=0
    read_until() {
        local line
        integer quiet=0
        while (( quiet < 1000 )); do
            if zpty -rt completer line; then
                quiet=0
                if [[ $line == *'<offered>'* ]]; then
                    print -r -- "${${line##*<offered>}%%$'\r'*}"
                    offered=1
                fi
                [[ $line == *"$1"* ]] && return 0
            else
                integer limit=$(( offered ? $2 : $3 ))
                (( limit > 0 && quiet >= limit )) && return 0
                zselect -t 1
                (( quiet++ ))
            fi
        done
    }
    zpty -w completer "print '<rea''dy>'"
    read_until '<ready>' 0 0
    # Completion runs only without typeahead: wait for what it offers (or 1 s of nothing),
    # then erase the line (^U) and print a marker for the end.
    zpty -w -n completer "$2"$'\t'
    read_until '<none>' 30 100
    zpty -w completer $'\025'"print '<fini''shed>'"
    read_until '<finished>' 0 0
    zpty -d completer
    """#

/// Calls bash's completion function as bash would for a command line (the last word being
/// completed; "" for a new word), in the directory given first.
private let bashCompleter = #"""
    cd "$1" && shift
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    _pkgtool
    printf '%s\n' "${COMPREPLY[@]}"
    """#

@Suite("Shell completion and the manual page, from the option tables")
struct CompletionAndManualTests {
    /// The cases every shell must complete alike: a command line, and words that must be
    /// among those offered (files of the work directory included).
    static let cases: [(line: [String], offered: Set<String>)] = [
        (["pkgtool", "sa"], ["save"]),
        (["pkgtool", "ma"], ["manifest", "man"]),
        (["pkgtool", "save", "--strategy", ""], ["full", "atomic", "journaled"]),
        (["pkgtool", "save", "--fsync", ""], ["full", "none"]),
        (["pkgtool", "diff", "--n"], ["--null", "--no-renames"]),
        (["pkgtool", "completion", ""], ["bash", "zsh", "fish"]),
        (["pkgtool", "help", "unp"], ["unpack"]),
        (["pkgtool", "hash", "notes."], ["notes.pkg", "notes.zip"]),
        (["pkgtool", "pack", "--base", "notes.z"], ["notes.zip"]),
    ]

    private func workDirectory() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory("completion")
        try Files.makeDirectory(directory.url("notes.pkg"))
        try Files.write(directory.url("notes.zip"), "z")
        return directory
    }

    private func script(_ shell: ShellCompletion.Shell, in directory: TemporaryDirectory) throws -> String {
        let result = pkgtool("completion", shell.rawValue)
        #expect(result.status == .success)
        let path = directory.url("pkgtool.\(shell.rawValue)")
        try Files.write(path, result.output)
        return path
    }

    @Test("every command and option is in every script and in the manual page")
    func everythingListed() throws {
        let scripts = ShellCompletion.Shell.allCases.map { ShellCompletion.script(for: $0) }
        let manual = ManualPage.roff()
        for command in PkgTool.commands {
            let spec = command.spec
            for script in scripts { #expect(script.contains(spec.name), "\(spec.name)") }
            #expect(manual.contains(".SS \"pkgtool \(ManualPage.escape(spec.name))\""), "\(spec.name)")
            for option in spec.options {
                for script in scripts { #expect(script.contains(option.long), "\(spec.name) --\(option.long)") }
                #expect(manual.contains("\\fB\\-\\-\(ManualPage.escape(option.long))\\fR"), "\(spec.name) --\(option.long)")
                if let short = option.short { #expect(manual.contains("\\fB\\-\(short)\\fR, "), "\(spec.name) -\(short)") }
            }
            for exit in spec.exitStatuses { #expect(manual.contains(ManualPage.text(exit.meaning)), "\(spec.name)") }
        }
        #expect(pkgtool("completion", "tcsh").status == .trouble)
        #expect(pkgtool("completion").status == .trouble)
        #expect(pkgtool("man").output == manual)
    }

    @Test("bash completes commands, options, their values and file names")
    func bash() throws {
        let bash = try #require(which("bash"))
        let directory = try workDirectory()
        let script = try script(.bash, in: directory)
        #expect(try runProgram(bash, ["-n", script]).status == 0)
        let completer = directory.url("complete.bash")
        try Files.write(completer, bashCompleter)
        for (line, offered) in Self.cases {
            let result = try runProgram(bash, [completer, directory.path, script] + line)
            let words = Set(result.output.split(separator: "\n").map { String($0).trimmingSuffix("/") })
            #expect(offered.isSubset(of: words), "bash: \(line) offered \(words)")
        }
        // A value that is a number gets no file names.
        let jobs = try runProgram(bash, [completer, directory.path, script, "pkgtool", "ls", "--jobs", ""])
        #expect(jobs.output.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty)
    }

    @Test("zsh completes commands, options, their values and file names")
    func zsh() throws {
        let zsh = try #require(which("zsh"), "zsh is installed by Scripts/dependencies.sh")
        let directory = try workDirectory()
        let script = try script(.zsh, in: directory)
        #expect(try runProgram(zsh, ["-n", script]).status == 0)
        let completer = directory.url("complete.zsh")
        try Files.write(completer, zshCompleter)
        for (line, offered) in Self.cases {
            // A pseudo-terminal session on a busy machine can lose the race with zsh's line
            // editor starting up: a second try is allowed, never a wrong answer.
            var words: Set<String> = []
            for _ in 0..<3 where !offered.isSubset(of: words) {
                let result = try runProgram(zsh, ["-f", completer, directory.path, script, line.joined(separator: " ")])
                words = Set(result.output.split(separator: "\n").map { String($0).trimmingSuffix("/") })
            }
            #expect(offered.isSubset(of: words), "zsh: \(line) offered \(words)")
        }
    }

    @Test("fish completes commands, options, their values and file names")
    func fish() throws {
        let fish = try #require(which("fish"), "fish is installed by Scripts/dependencies.sh")
        let directory = try workDirectory()
        let script = try script(.fish, in: directory)
        #expect(try runProgram(fish, ["-n", script]).status == 0)
        for (line, offered) in Self.cases {
            let command = "cd \(directory.path); source \(script); complete -C '\(line.joined(separator: " "))'"
            let result = try runProgram(fish, ["--no-config", "-c", command])
            let words = Set(result.output.split(separator: "\n").map { String($0.split(separator: "\t")[0]).trimmingSuffix("/") })
            #expect(offered.isSubset(of: words), "fish: \(line) offered \(words)")
        }
    }

    @Test("the manual page renders without a warning, every command in it")
    func manualRenders() throws {
        let directory = try TemporaryDirectory("manual")
        let page = directory.url("pkgtool.1")
        try Files.write(page, ManualPage.roff())
        let groff = try #require(which("groff"), "groff comes with man-db, installed by Scripts/dependencies.sh")
        let checked = try runProgram(groff, ["-man", "-Tutf8", "-ww", "-z", page])
        #expect(checked.status == 0)
        #expect(checked.error.isEmpty, "\(checked.error)")
        let man = try #require(which("man"))
        let rendered = try runProgram("/usr/bin/env", ["MANWIDTH=100", man, "-l", page])
        #expect(rendered.status == 0)
        #expect(rendered.error.isEmpty, "\(rendered.error)")
        for command in PkgTool.commands {
            #expect(rendered.output.contains("pkgtool \(command.spec.name)"), "\(command.spec.name)")
        }
        #expect(rendered.output.contains("--keep-previous"))
        #expect(rendered.output.contains("EXIT STATUS"))
        // What a person reads: no roff escape shown raw, no file an installed user lacks.
        for raw in ["\\-", "\\e", "\\&", "\\fB", "Specs/"] {
            #expect(!rendered.output.contains(raw), "the rendered page shows '\(raw)'")
        }
        for section in ["EXAMPLES", "ENVIRONMENT", "FILES"] { #expect(rendered.output.contains("\n\(section)\n")) }
        for name in ["AWS_PROFILE", "AWS_CONFIG_FILE", "PKGTOOL_CACHE_DIR", "~/.aws/credentials", "~/.cache/pkgtool"] {
            #expect(rendered.output.contains(name), "\(name)")
        }
    }

    @Test("the manual page's local examples run as written")
    func examplesRun() throws {
        let directory = try TemporaryDirectory("examples")
        try FileManager.default.createDirectory(atPath: directory.url("Draft.notebook/pages"), withIntermediateDirectories: true)
        try Files.write(directory.url("Draft.notebook/metadata.json"), "{}")
        try Files.write(directory.url("Draft.notebook/pages/1.json"), "{\"text\": 1}")
        for example in ManualPage.exampleList where !example.command.contains("s3://") {
            let words = example.command.split(separator: " ").map(String.init)
            #expect(words.first == "pkgtool")
            let result = try runProgram(pkgtoolExecutable(), Array(words.dropFirst()), workingDirectory: directory.path)
            #expect(result.status == 0, "\(example.command): \(result.error)")
        }
    }

    @Test("--version and -V print the version")
    func version() throws {
        for flag in ["--version", "-V"] {
            let result = try runProgram(pkgtoolExecutable(), [flag])
            #expect(result.status == 0)
            #expect(result.output == "pkgtool \(PkgTool.version)\n")
        }
    }

    @Test("--json wherever a command prints a table or a report")
    func jsonEverywhere() {
        let withoutOutput: Set<String> = ["bench", "completion", "man"]
        for command in PkgTool.commands where !withoutOutput.contains(command.spec.name) {
            #expect(command.spec.options.contains { $0.long == "json" }, "\(command.spec.name) has --json")
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
