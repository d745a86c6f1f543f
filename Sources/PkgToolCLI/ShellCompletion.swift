/// Completion scripts for bash, zsh and fish, written from the commands' option tables.
///
/// Nothing here is written by hand per command: a new option or command appears in every
/// shell's completion as it appears in `--help` and in the manual page.
public enum ShellCompletion {
    public enum Shell: String, CaseIterable, Sendable {
        case bash, zsh, fish
    }

    public static func script(for shell: Shell, commands: [CommandSpec] = PkgTool.commands.map { $0.spec }) -> String {
        switch shell {
        case .bash: return bash(commands)
        case .zsh: return zsh(commands)
        case .fish: return fish(commands)
        }
    }

    /// What `help COMMAND` completes: the command names.
    static func commandNames(_ commands: [CommandSpec]) -> [String] { commands.map(\.name) }

    // MARK: bash

    static func bash(_ commands: [CommandSpec]) -> String {
        let topWords = commandNames(commands) + ["help"] + PkgTool.globalOptions.flatMap(spellings)
        var script = """
            # bash completion for pkgtool, written by 'pkgtool completion bash' (pkgtool \(PkgTool.version)).
            # Load it with: source <(pkgtool completion bash)
            # or install it: pkgtool completion bash > /usr/share/bash-completion/completions/pkgtool
            _pkgtool_words() {
                mapfile -t COMPREPLY < <(compgen -W "$1" -- "$2")
            }
            _pkgtool_paths() {
                compopt -o filenames 2>/dev/null
                mapfile -t COMPREPLY < <(compgen -f -- "$1")
            }
            _pkgtool() {
                local cur="${COMP_WORDS[COMP_CWORD]}"
                local prev="${COMP_WORDS[COMP_CWORD-1]}"
                COMPREPLY=()
                if [ "$COMP_CWORD" -eq 1 ]; then
                    _pkgtool_words \(bashWord(topWords.joined(separator: " "))) "$cur"
                    return 0
                fi
                case "${COMP_WORDS[1]}" in
                    help)
                        [ "$COMP_CWORD" -eq 2 ] && _pkgtool_words \(bashWord(commandNames(commands).joined(separator: " "))) "$cur"
                        return 0
                        ;;

            """
        for command in commands {
            script += "        \(command.name))\n"
            let valued = command.options.filter(\.takesValue)
            if !valued.isEmpty {
                script += "            case \"$prev\" in\n"
                for option in valued {
                    let pattern = spellings(option).joined(separator: "|")
                    script += "                \(pattern)) \(bashCompletion(option.completion, current: "\"$cur\"")) return 0 ;;\n"
                }
                script += "            esac\n"
            }
            let words = command.options.flatMap(spellings).joined(separator: " ")
            script += """
                            if [[ "$cur" == -* ]]; then
                                _pkgtool_words \(bashWord(words)) "$cur"
                                return 0
                            fi
                            \(bashCompletion(command.operands, current: "\"$cur\""))
                            ;;

                """
        }
        script += """
                esac
                return 0
            }
            complete -F _pkgtool pkgtool

            """
        return script
    }

    private static func bashCompletion(_ completion: OptionSpec.Completion, current: String) -> String {
        switch completion {
        case .none: return ":;"
        case .paths: return "_pkgtool_paths \(current);"
        case .choices(let words): return "_pkgtool_words \(bashWord(words.joined(separator: " "))) \(current);"
        }
    }

    /// A word for bash, single-quoted.
    private static func bashWord(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    // MARK: zsh

    static func zsh(_ commands: [CommandSpec]) -> String {
        var script = """
            #compdef pkgtool
            # zsh completion for pkgtool, written by 'pkgtool completion zsh' (pkgtool \(PkgTool.version)).
            # Install it as _pkgtool in a directory of $fpath:
            #   pkgtool completion zsh > "${fpath[1]}/_pkgtool"
            # or load it after compinit: source <(pkgtool completion zsh)
            _pkgtool() {
                local -a commands
                commands=(

            """
        for command in commands {
            script += "        \(zshWord(command.name.replacing(":", with: "\\:") + ":" + command.summary))\n"
        }
        script += "        \(zshWord("help:show the help of a command"))\n"
        script += """
                )
                if (( CURRENT == 2 )); then
                    if [[ $PREFIX == -* ]]; then
                        _arguments \(PkgTool.globalOptions.map(zshOption).joined(separator: " "))
                    else
                        _describe -t commands 'pkgtool command' commands
                    fi
                    return
                fi
                local command=$words[2]
                shift words
                (( CURRENT-- ))
                case $command in
                    help)
                        _arguments \(zshWord(":command:(" + commandNames(commands).joined(separator: " ") + ")"))
                        ;;

            """
        for command in commands {
            var specs = command.options.map(zshOption)
            switch command.operands {
            case .none: break
            case .paths: specs.append(zshWord("*:path:_files"))
            case .choices(let words): specs.append(zshWord(":argument:(\(words.joined(separator: " ")))"))
            }
            script += "        \(command.name))\n"
            script += "            _arguments -s -S \\\n"
            script += specs.map { "                \($0)" }.joined(separator: " \\\n") + "\n"
            script += "            ;;\n"
        }
        script += """
                esac
            }
            if [ "$funcstack[1]" = "_pkgtool" ]; then
                _pkgtool "$@"
            else
                compdef _pkgtool pkgtool
            fi

            """
        return script
    }

    /// One `_arguments` spec: `'(-j --jobs)'{-j+,--jobs=}'[help]:N: '`.
    private static func zshOption(_ option: OptionSpec) -> String {
        let description = "[" + zshDescription(option.help) + "]"
        var action = ""
        if let placeholder = option.placeholder {
            switch option.completion {
            case .none: action = ":\(placeholder): "
            case .paths: action = ":\(placeholder):_files"
            case .choices(let words): action = ":\(placeholder):(\(words.joined(separator: " ")))"
            }
        }
        let longForm = "--" + option.long + (option.takesValue ? "=" : "")
        guard let short = option.short else {
            return zshWord(longForm + description + action)
        }
        let shortForm = "-\(short)" + (option.takesValue ? "+" : "")
        let exclusion = zshWord("(-\(short) --\(option.long))")
        return exclusion + "{" + shortForm + "," + longForm + "}" + zshWord(description + action)
    }

    /// A description inside `[…]` of an `_arguments` spec: brackets and backslashes escaped.
    private static func zshDescription(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "[" || character == "]" || character == "\\" { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// A word for zsh, single-quoted.
    private static func zshWord(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    // MARK: fish

    static func fish(_ commands: [CommandSpec]) -> String {
        var lines = [
            "# fish completion for pkgtool, written by 'pkgtool completion fish' (pkgtool \(PkgTool.version)).",
            "# Install it: pkgtool completion fish > ~/.config/fish/completions/pkgtool.fish",
            "complete -c pkgtool -f",
        ]
        let noCommandYet = "__fish_use_subcommand"
        for option in PkgTool.globalOptions {
            lines.append("complete -c pkgtool -n \(noCommandYet) \(fishOption(option))")
        }
        for command in commands {
            lines.append("complete -c pkgtool -n \(noCommandYet) -a \(command.name) -d \(fishWord(command.summary))")
        }
        lines.append("complete -c pkgtool -n \(noCommandYet) -a help -d \(fishWord("show the help of a command"))")
        let names = commandNames(commands).joined(separator: " ")
        lines.append("complete -c pkgtool -n \(fishWord("__fish_seen_subcommand_from help")) -x -a \(fishWord(names))")
        for command in commands {
            let condition = fishWord("__fish_seen_subcommand_from \(command.name)")
            for option in command.options {
                lines.append("complete -c pkgtool -n \(condition) \(fishOption(option))")
            }
            switch command.operands {
            case .none: break
            case .paths: lines.append("complete -c pkgtool -n \(condition) -F")
            case .choices(let words): lines.append("complete -c pkgtool -n \(condition) -x -a \(fishWord(words.joined(separator: " ")))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `-s j -l jobs -x -d '…'`: the option's spellings, its value's completion, its help.
    private static func fishOption(_ option: OptionSpec) -> String {
        var parts: [String] = []
        if let short = option.short { parts.append("-s \(short)") }
        parts.append("-l \(option.long)")
        if option.takesValue {
            switch option.completion {
            case .none: parts.append("-x")
            case .paths: parts.append("-r -F")
            case .choices(let words): parts.append("-x -a \(fishWord(words.joined(separator: " ")))")
            }
        }
        parts.append("-d \(fishWord(option.help))")
        return parts.joined(separator: " ")
    }

    /// A word for fish, single-quoted (fish escapes only `\'` and `\\` there).
    private static func fishWord(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    // MARK: shared

    /// `--jobs`, `-j`: every spelling of an option.
    static func spellings(_ option: OptionSpec) -> [String] {
        ["--" + option.long] + (option.short.map { ["-\($0)"] } ?? [])
    }
}
