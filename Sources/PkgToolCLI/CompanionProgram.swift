import PackageCore

/// The programs pkgtool runs in its own place (`execv`) instead of linking their code in:
/// `pkgbench` for `bench`, `pkgtool-remote` for the sync commands. Each is looked for
/// beside the running pkgtool (its real path, links resolved), then on PATH.
enum CompanionProgram {
    /// `name` in pkgtool's own directory, else on PATH.
    static func locate(_ name: String) -> String? {
        if let own = ProcessEnvironment.executablePath, let slash = own.lastIndex(of: "/") {
            let beside = String(own[..<slash]) + "/" + name
            if ProcessEnvironment.isExecutable(beside) { return beside }
        }
        let path = ProcessEnvironment.value("PATH") ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where ProcessEnvironment.isExecutable("\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        return nil
    }

    /// Replaces this process with `program` run with `arguments` (its `argv[0]` first).
    /// Returns only when that fails, having said why.
    static func replaceProcess(with program: String, arguments: [String], console: Console) -> ExitStatus {
        console.flush()
        let failure = ProcessEnvironment.replaceProcess(with: program, arguments: arguments)
        console.error("cannot run '\(program)': \(failure) (execv)")
        return .trouble
    }
}
