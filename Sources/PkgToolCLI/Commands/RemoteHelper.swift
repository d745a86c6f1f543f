import PackageCore

/// Where the sync commands run: `pkgtool-remote`, built beside pkgtool.
///
/// Their transfers need libcurl and libcrypto, and loading those (two dozen libraries:
/// TLS, Kerberos, LDAP, IDN…) costs every process that links them about 4 ms at start and
/// several MiB — every `pkgtool hash` of one file and every save, which never reach a
/// remote. So, as git runs `git-remote-https`, pkgtool checks a sync command's line itself
/// (usage errors and `--help` answer at once) and then replaces itself with
/// `pkgtool-remote`, which is pkgtool with those commands' work linked in
/// (`PkgToolRemoteCLI`): the same arguments, output and exit statuses.
package enum RemoteHelper {
    package static let programName = "pkgtool-remote"

    /// Runs `command` with the arguments it was given in `pkgtool-remote`; returns only
    /// when that cannot be done, having said why (exit 2).
    static func forward(_ command: String, _ arguments: ParsedArguments, console: Console) -> ExitStatus {
        // pkgtool-remote has every command's work: reaching here there would loop.
        if let own = ProcessEnvironment.executablePath, own.hasSuffix("/" + programName) {
            console.error("'\(command)' cannot reach a remote in this build of \(programName)")
            return .trouble
        }
        guard let helper = CompanionProgram.locate(programName) else {
            console.error(
                "cannot \(command): remotes are reached through \(programName), which is neither beside pkgtool "
                    + "nor on PATH; build it with 'swift build -c release --product \(programName)' and keep it beside pkgtool")
            return .trouble
        }
        return CompanionProgram.replaceProcess(
            with: helper, arguments: [helper, command] + arguments.commandLine, console: console)
    }
}
